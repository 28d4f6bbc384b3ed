/* Settings, memory and instruction limits, sandbox (lua_limits.h). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <syslog.h>
#include <jansson.h>
#include <lua.h>
#include <lauxlib.h>

#include <flux/core.h>

#include "lua_context.h"
#include "lua_log.h"
#include "lua_limits.h"

#define DEFAULT_INSTRUCTION_LIMIT 1000000L
#define DEFAULT_MEMORY_LIMIT_MB 64
#define DEFAULT_PATTERN_STEP_LIMIT 500000L
#define HOOK_COUNT 1000
/* Memory a call makes costs it an instruction per this many bytes, so
 * that a loop of big allocations (s .. s) ends like any other loop. */
#define BYTES_PER_INSTRUCTION 16
/* Past the budget, allocations up to this size still succeed (raising
 * the error and its traceback need a little memory); larger ones fail. */
#define BIG_ALLOCATION (64 << 10)

static void setting_bool (struct host *h, json_t *lua, const char *key,
                          bool *v)
{
    json_t *o = json_object_get (lua, key);
    if (o && json_is_boolean (o))
        *v = json_is_true (o);
    else if (o)
        host_log (h, LOG_ERR, "lua.%s must be true or false; ignored", key);
}

/* Host settings live in the policy conf's "lua" table. */
int limits_read_settings (struct host *h, jobtap_host_error_t *err)
{
    const char *s = flux_plugin_get_conf (h->p);
    json_t *conf = s ? json_loads (s, 0, NULL) : NULL;
    json_t *lua = conf ? json_object_get (conf, "lua") : NULL;
    int rc = 0;

    h->instruction_limit = DEFAULT_INSTRUCTION_LIMIT;
    h->pattern_step_limit = DEFAULT_PATTERN_STEP_LIMIT;
    h->mem_limit = (size_t)DEFAULT_MEMORY_LIMIT_MB << 20;
    if (lua && json_is_object (lua)) {
        json_t *o;
        const char *mode;
        if ((o = json_object_get (lua, "on-error"))) {
            mode = json_string_value (o);
            if (mode && !strcmp (mode, "accept"))
                h->on_error_accept = true;
            else if (!mode || strcmp (mode, "reject") != 0) {
                errprintf (err,
                           "lua.on-error must be \"reject\" or \"accept\"");
                rc = -1;
            }
        }
        if ((o = json_object_get (lua, "instruction-limit"))) {
            if (!json_is_integer (o) || json_integer_value (o) < 1000) {
                errprintf (err,
                           "lua.instruction-limit must be an integer >= 1000");
                rc = -1;
            }
            else
                h->instruction_limit = (long)json_integer_value (o);
        }
        if ((o = json_object_get (lua, "pattern-step-limit"))) {
            if (!json_is_integer (o) || json_integer_value (o) < 1000) {
                errprintf (err,
                           "lua.pattern-step-limit must be an integer >= 1000");
                rc = -1;
            }
            else
                h->pattern_step_limit = (long)json_integer_value (o);
        }
        if ((o = json_object_get (lua, "memory-limit-mb"))) {
            if (!json_is_integer (o) || json_integer_value (o) < 1
                || json_integer_value (o) > 65536) {
                errprintf (err,
                           "lua.memory-limit-mb must be an integer 1..65536");
                rc = -1;
            }
            else
                h->mem_limit = (size_t)json_integer_value (o) << 20;
        }
        setting_bool (h, lua, "allow-exec", &h->allow_exec);
        setting_bool (h, lua, "allow-loadlib", &h->allow_loadlib);
    }
    json_decref (conf);
    return rc;
}

static void count_hook (lua_State *L, lua_Debug *ar);

bool limits_budget_spent (const struct policy *pol)
{
    return pol->instructions
               + (long)(pol->alloc_bytes / BYTES_PER_INSTRUCTION)
           > pol->instruction_limit;
}

/* From now on fail at every instruction of L, so that a pcall in the
 * script cannot catch the error and carry on. */
static void end_call_at_next_instruction (lua_State *L)
{
    lua_sethook (L, count_hook, LUA_MASKCOUNT, 1);
}

int limits_budget_error (const struct policy *pol, jobtap_host_error_t *err)
{
    return errprintf (err,
                      "instruction limit of %ld exceeded (memory made "
                      "counts, an instruction per %d bytes; see "
                      "docs/lua.md)",
                      pol->instruction_limit, BYTES_PER_INSTRUCTION);
}

static void budget_exceeded (lua_State *L, struct policy *pol)
{
    jobtap_host_error_t err;
    end_call_at_next_instruction (L);
    limits_budget_error (pol, &err);
    luaL_error (L, "%s", err.text);
}

void *limits_alloc (void *ud, void *ptr, size_t osize, size_t nsize)
{
    struct policy *pol = ud;
    /* osize is a type tag when ptr is NULL */
    size_t old = ptr ? osize : 0;

    if (nsize == 0) {
        free (ptr);
        pol->mem -= old;
        return NULL;
    }
    if (nsize > old) {
        if (pol->mem - old + nsize > pol->mem_limit)
            return NULL;
        if (pol->metered) {
            pol->alloc_bytes += nsize - old;
            if (limits_budget_spent (pol)) {
                /* the allocator has no lua_State of its own: the main
                 * thread stops at once, a coroutine at its next hook */
                end_call_at_next_instruction (pol->L);
                if (nsize - old > BIG_ALLOCATION)
                    return NULL;
            }
        }
    }
    void *n = realloc (ptr, nsize);
    if (n)
        pol->mem = pol->mem - old + nsize;
    return n;
}

static void count_hook (lua_State *L, lua_Debug *ar)
{
    struct policy *pol = policy_of (L);
    (void)ar;
    pol->instructions += lua_gethookcount (L);
    if (limits_budget_spent (pol))
        budget_exceeded (L, pol);
}

void limits_budget_reset (struct policy *pol)
{
    pol->instructions = 0;
    pol->alloc_bytes = 0;
    pol->metered = true;
    lua_sethook (pol->L, count_hook, LUA_MASKCOUNT, HOOK_COUNT);
}

void limits_budget_end (struct policy *pol)
{
    pol->metered = false;
}

long limits_budget_room (const struct policy *pol)
{
    long room = pol->instruction_limit - pol->instructions
                - (long)(pol->alloc_bytes / BYTES_PER_INSTRUCTION);
    return room > 0 ? room : 0;
}

void limits_charge (lua_State *L, long n)
{
    struct policy *pol = policy_of (L);
    pol->instructions += n;
    if (limits_budget_spent (pol))
        budget_exceeded (L, pol);
}

static int l_forbidden (lua_State *L)
{
    return luaL_error (L, "%s is disabled in jobtap policies",
                       lua_tostring (L, lua_upvalueindex (1)));
}

static void set_forbidden (lua_State *L, const char *lib, const char *fn)
{
    if (lua_getglobal (L, lib) == LUA_TTABLE) {
        lua_pushfstring (L, "%s.%s", lib, fn);
        lua_pushcclosure (L, l_forbidden, 1);
        lua_setfield (L, -2, fn);
    }
    lua_pop (L, 1);
}

void limits_sandbox (struct host *h, lua_State *L)
{
    /* os.exit would end slurmctld; the debug library can remove the
     * instruction hook: never available. */
    set_forbidden (L, "os", "exit");
    if (lua_getglobal (L, "debug") == LUA_TTABLE) {
        lua_newtable (L);
        lua_getfield (L, -2, "traceback");
        lua_setfield (L, -2, "traceback");
        lua_setglobal (L, "debug");
    }
    lua_pop (L, 1);
    if (!h->allow_exec) {
        set_forbidden (L, "os", "execute");
        set_forbidden (L, "io", "popen");
    }
    if (!h->allow_loadlib) {
        set_forbidden (L, "package", "loadlib");
        /* no C modules through require either */
        if (lua_getglobal (L, "package") == LUA_TTABLE) {
            if (lua_getfield (L, -1, "searchers") == LUA_TTABLE) {
                lua_pushnil (L);
                lua_rawseti (L, -2, 4);
                lua_pushnil (L);
                lua_rawseti (L, -2, 3);
            }
            lua_pop (L, 1);
            lua_pushstring (L, "");
            lua_setfield (L, -2, "cpath");
        }
        lua_pop (L, 1);
    }
}

/* vi: ts=4 sw=4 expandtab
 */
