/* Lua states: create, swap, destroy (lua_state.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>

#include "lua_context.h"
#include "lua_handlers.h"
#include "lua_job.h"
#include "lua_json.h"
#include "lua_limits.h"
#include "lua_log.h"
#include "lua_module.h"
#include "lua_pattern.h"
#include "lua_state.h"

#include "prelude.h"

void state_destroy (struct policy *pol)
{
    if (pol) {
        if (pol->L)
            lua_close (pol->L);
        free (pol->source);
        free (pol);
    }
}

int state_read_file (const char *path, char **bufp, size_t *lenp)
{
    FILE *f = fopen (path, "r");
    char *buf = NULL;
    size_t len = 0, cap = 0;

    if (!f)
        return -1;
    for (;;) {
        if (len == cap) {
            cap = cap ? cap * 2 : 8192;
            char *n = realloc (buf, cap + 1);
            if (!n) {
                free (buf);
                fclose (f);
                errno = ENOMEM;
                return -1;
            }
            buf = n;
        }
        size_t r = fread (buf + len, 1, cap - len, f);
        len += r;
        if (r == 0)
            break;
    }
    if (ferror (f)) {
        int e = errno;
        free (buf);
        fclose (f);
        errno = e ? e : EIO;
        return -1;
    }
    fclose (f);
    buf[len] = '\0';
    *bufp = buf;
    *lenp = len;
    return 0;
}

struct policy *state_create (struct host *h,
                             struct policy *old,
                             char *source,
                             size_t len,
                             jobtap_host_error_t *err)
{
    struct policy *pol = calloc (1, sizeof (*pol));
    lua_State *L;
    char chunkname[512];
    int status;

    if (!pol) {
        errprintf (err, "out of memory");
        free (source);
        return NULL;
    }
    pol->h = h;
    pol->source = source;
    pol->source_len = len;
    pol->mem_limit = h->mem_limit;
    pol->instruction_limit = h->instruction_limit;
    pol->pattern_step_limit = h->pattern_step_limit;
    if (!(L = pol->L = lua_newstate (limits_alloc, pol))) {
        errprintf (err, "cannot create a Lua state");
        goto error;
    }
    limits_budget_reset (pol);
    luaL_openlibs (L);
    limits_sandbox (h, L);
    pattern_open (L);
    ljson_open (L);
    job_open (pol);
    lua_newtable (L);
    lua_setfield (L, LUA_REGISTRYINDEX, HANDLERS_KEY);
    luaL_requiref (L, "jobtap", module_open, 1);
    lua_pop (L, 1);
    lua_pushcfunction (L, log_lua_print);
    lua_setglobal (L, "print");

    lua_pushcfunction (L, handlers_traceback);
    limits_budget_reset (pol);
    if (luaL_loadbufferx (L, prelude_lua, strlen (prelude_lua), "=prelude",
                          "t") != LUA_OK
        || lua_pcall (L, 0, 0, -2) != LUA_OK) {
        errprintf (err, "prelude: %s", lua_tostring (L, -1));
        goto error;
    }
    /* what the host copies in (jobtap.state, job.data) is not charged */
    limits_budget_end (pol);
    if (old) {
        /* jobtap.state carries over, before the script looks at it */
        lua_State *from = old->L;
        lua_getfield (from, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
        lua_getfield (from, -1, "jobtap");
        lua_getfield (from, -1, "state");
        lua_getfield (L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
        lua_getfield (L, -1, "jobtap");
        int rc = ljson_copy (from, -1, L);
        lua_setfield (L, -2, "state");
        lua_pop (L, 2);
        lua_pop (from, 3);
        if (rc < 0) {
            errprintf (err, "jobtap.state cannot be carried over "
                            "(memory limit)");
            goto error;
        }
    }
    snprintf (chunkname, sizeof (chunkname), "@%s", h->name);
    limits_budget_reset (pol);
    if (luaL_loadbufferx (L, source, len, chunkname, "t") != LUA_OK) {
        errprintf (err, "%s", lua_tostring (L, -1));
        goto error;
    }
    if ((status = lua_pcall (L, 0, 0, -2)) != LUA_OK) {
        if (status == LUA_ERRMEM && limits_budget_spent (pol))
            limits_budget_error (pol, err);
        else
            errprintf (err, "%s", lua_tostring (L, -1));
        goto error;
    }
    limits_budget_end (pol);
    lua_settop (L, 0);
    return pol;
error:
    state_destroy (pol);
    return NULL;
}

void state_swap (struct host *h, struct policy *pol)
{
    struct policy *old = h->cur;

    if (old) {
        lua_State *from = old->L;
        lua_State *to = pol->L;
        for (struct jobdata *jd = h->jobdata; jd; jd = jd->next) {
            lua_rawgeti (from, LUA_REGISTRYINDEX, jd->ref);
            if (ljson_copy (from, -1, to) < 0)
                host_log (h, LOG_ERR, "reload: a job's job.data cannot be "
                                      "carried over (memory limit); it "
                                      "starts empty");
            lua_pop (from, 1);
            luaL_unref (from, LUA_REGISTRYINDEX, jd->ref);
            jd->ref = luaL_ref (to, LUA_REGISTRYINDEX);
        }
    }
    h->cur = pol;
    handlers_reset (h);
    state_destroy (old);
}

/* vi: ts=4 sw=4 expandtab
 */
