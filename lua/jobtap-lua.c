/* jobtap-lua.so: a jobtap plugin that runs one Lua 5.4 policy script.
 *
 * The runtime loads this DSO once per "*.lua" entry of jobtap.conf and
 * hands it the script path in the plugin aux item
 * "slurm-jobtap::lua-script".  Each policy gets its own lua_State; a
 * reload (conf.update with a changed file) builds a fresh state and swaps
 * it in only if the new script loads.
 *
 * Nothing a script does may take slurmctld down: every call into Lua is
 * protected, bounded by an instruction budget (count hook) and a memory
 * limit (allocator), and dangerous functions are removed unless the
 * policy's conf turns them on.  docs/lua.md is the user documentation.
 */
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <jansson.h>
#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>

#include <flux/core.h>
#include <flux/jobtap.h>

#include "prelude.h"

#define DEFAULT_INSTRUCTION_LIMIT 1000000L
#define DEFAULT_MEMORY_LIMIT_MB 64
#define HOOK_COUNT 1000
#define MAX_DEPTH 64

#define JOB_MT "jobtap.job"
#define ARRAY_MT "jobtap.array"

struct host;

/* One loaded version of the script. */
struct policy {
    lua_State *L;
    struct host *h;
    char *source;
    size_t source_len;
    size_t mem;
    size_t mem_limit;
    long instructions;      /* executed in the current call */
    long instruction_limit;
    int depth;              /* nested calls (a callback caused by a call) */
    const void *job_mt;     /* the job metatable, to tell job userdata */
};

/* Per-job Lua table (job.data), kept as a job aux item. */
struct jobdata {
    struct host *h;
    int ref;                /* registry ref in h->cur->L */
    struct jobdata *prev, *next;
};

struct host {
    flux_plugin_t *p;
    char *script;           /* path */
    char *name;             /* basename, e.g. "limits.lua" */
    struct policy *cur;
    json_t *topics;         /* topics registered with the plugin */
    struct jobdata *jobdata;
    /* settings from the policy's conf (the "lua" sub-table) */
    bool on_error_accept;
    bool allow_exec;
    bool allow_loadlib;
    long instruction_limit;
    size_t mem_limit;
};

/* The job argument of one callback.  Valid only during that callback. */
struct jobref {
    struct host *h;
    flux_plugin_arg_t *args;
    bool valid;
    bool rejected;
    /* Borrowed from args, read once per callback: each unpack costs
     * more than the reads it serves, and nothing replaces these members
     * while the callback runs. */
    bool have_id, have_jobspec;
    json_t *id, *jobspec;
};

static int null_sentinel;   /* address is jobtap.null */

/* --- logging ----------------------------------------------------------- */

static void hlog (struct host *h, int level, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

static void hlog (struct host *h, int level, const char *fmt, ...)
{
    char buf[4096];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (buf, sizeof (buf), fmt, ap);
    va_end (ap);
    flux_log (flux_jobtap_get_flux (h->p), level, "lua: %s: %s", h->name, buf);
}

/* --- allocation and instruction limits --------------------------------- */

static void *policy_alloc (void *ud, void *ptr, size_t osize, size_t nsize)
{
    struct policy *pol = ud;
    /* osize is a type tag when ptr is NULL */
    size_t old = ptr ? osize : 0;

    if (nsize == 0) {
        free (ptr);
        pol->mem -= old;
        return NULL;
    }
    if (nsize > old && pol->mem - old + nsize > pol->mem_limit)
        return NULL;
    void *n = realloc (ptr, nsize);
    if (n)
        pol->mem = pol->mem - old + nsize;
    return n;
}

static void count_hook (lua_State *L, lua_Debug *ar)
{
    struct policy *pol;
    (void)ar;
    lua_getallocf (L, (void **)&pol);
    pol->instructions += lua_gethookcount (L);
    if (pol->instructions > pol->instruction_limit) {
        /* From now on fail at every instruction, so that a pcall in the
         * script cannot catch the error and carry on. */
        lua_sethook (L, count_hook, LUA_MASKCOUNT, 1);
        luaL_error (L, "instruction limit of %I exceeded",
                    (lua_Integer)pol->instruction_limit);
    }
}

/* A new budget for an outermost call. */
static void budget_reset (struct policy *pol)
{
    pol->instructions = 0;
    lua_sethook (pol->L, count_hook, LUA_MASKCOUNT, HOOK_COUNT);
}

static struct policy *policy_of (lua_State *L)
{
    struct policy *pol;
    lua_getallocf (L, (void **)&pol);
    return pol;
}

static struct host *host_of (lua_State *L)
{
    return policy_of (L)->h;
}

/* --- JSON <-> Lua ------------------------------------------------------ */

static void push_json (lua_State *L, json_t *o, int depth);

static void push_json (lua_State *L, json_t *o, int depth)
{
    luaL_checkstack (L, 4, "json nesting");
    if (depth > MAX_DEPTH)
        luaL_error (L, "JSON nesting too deep");
    switch (json_typeof (o)) {
        case JSON_OBJECT: {
            const char *k;
            json_t *v;
            lua_createtable (L, 0, (int)json_object_size (o));
            json_object_foreach (o, k, v) {
                push_json (L, v, depth + 1);
                lua_setfield (L, -2, k);
            }
            break;
        }
        case JSON_ARRAY: {
            size_t i;
            json_t *v;
            lua_createtable (L, (int)json_array_size (o), 0);
            json_array_foreach (o, i, v) {
                push_json (L, v, depth + 1);
                lua_rawseti (L, -2, (lua_Integer)i + 1);
            }
            luaL_setmetatable (L, ARRAY_MT);
            break;
        }
        case JSON_STRING:
            lua_pushlstring (L, json_string_value (o), json_string_length (o));
            break;
        case JSON_INTEGER:
            lua_pushinteger (L, (lua_Integer)json_integer_value (o));
            break;
        case JSON_REAL:
            lua_pushnumber (L, json_real_value (o));
            break;
        case JSON_TRUE:
            lua_pushboolean (L, 1);
            break;
        case JSON_FALSE:
            lua_pushboolean (L, 0);
            break;
        case JSON_NULL:
        default:
            lua_pushlightuserdata (L, &null_sentinel);
            break;
    }
}

/* Is the table at idx an array: marked with jobtap.array, or non-empty
 * with keys exactly 1..n? */
static bool table_is_array (lua_State *L, int idx, size_t *np)
{
    size_t n = 0;
    lua_Integer max = 0;
    bool marked = false;

    if (lua_getmetatable (L, idx)) {
        luaL_getmetatable (L, ARRAY_MT);
        marked = lua_rawequal (L, -1, -2);
        lua_pop (L, 2);
    }
    lua_pushnil (L);
    while (lua_next (L, idx)) {
        lua_pop (L, 1);
        if (!lua_isinteger (L, -1) || lua_tointeger (L, -1) < 1) {
            lua_pop (L, 1);
            return false;
        }
        if (lua_tointeger (L, -1) > max)
            max = lua_tointeger (L, -1);
        n++;
    }
    *np = n;
    if ((lua_Integer)n != max)
        return false;
    return marked || n > 0;
}

/* A conversion in progress.  Containers being filled are held here, not
 * yet in their parents, so that an error raised anywhere (a value JSON
 * cannot hold, a bad key, memory) frees everything built so far. */
struct tojson_ctx {
    json_t *building[MAX_DEPTH + 1];
    json_t *o;    /* the result */
    bool lenient; /* drop what JSON cannot hold instead of raising */
};

/* Convert the value at idx (depth: tables above it); NULL for a value
 * dropped by a lenient conversion. */
static json_t *to_json (lua_State *L, struct tojson_ctx *c, int idx, int depth)
{
    idx = lua_absindex (L, idx);
    luaL_checkstack (L, 4, "table nesting");
    switch (lua_type (L, idx)) {
        case LUA_TNIL:
            return json_null ();
        case LUA_TBOOLEAN:
            return json_boolean (lua_toboolean (L, idx));
        case LUA_TNUMBER:
            if (lua_isinteger (L, idx))
                return json_integer ((json_int_t)lua_tointeger (L, idx));
            return json_real (lua_tonumber (L, idx));
        case LUA_TSTRING: {
            size_t len;
            const char *s = lua_tolstring (L, idx, &len);
            json_t *o = json_stringn (s, len);
            if (!o && !c->lenient)
                luaL_error (L, "string is not valid UTF-8");
            return o;
        }
        case LUA_TLIGHTUSERDATA:
            if (lua_touserdata (L, idx) == &null_sentinel)
                return json_null ();
            break;
        case LUA_TTABLE: {
            size_t n;
            json_t *o;
            if (depth > MAX_DEPTH) {
                if (c->lenient)
                    return NULL;
                luaL_error (L, "table nesting too deep (cycle?)");
            }
            if (table_is_array (L, idx, &n)) {
                if (!(o = c->building[depth] = json_array ()))
                    luaL_error (L, "out of memory");
                for (size_t i = 1; i <= n; i++) {
                    lua_rawgeti (L, idx, (lua_Integer)i);
                    json_t *v = to_json (L, c, -1, depth + 1);
                    if (v)
                        json_array_append_new (o, v);
                    lua_pop (L, 1);
                }
            }
            else {
                if (!(o = c->building[depth] = json_object ()))
                    luaL_error (L, "out of memory");
                lua_pushnil (L);
                while (lua_next (L, idx)) {
                    json_t *v;
                    if (lua_type (L, -2) != LUA_TSTRING) {
                        if (!c->lenient)
                            luaL_error (L, "table keys must be strings (or "
                                           "1..n for an array)");
                    }
                    else if ((v = to_json (L, c, -1, depth + 1)))
                        json_object_set_new (o, lua_tostring (L, -2), v);
                    lua_pop (L, 1);
                }
            }
            c->building[depth] = NULL; /* the caller owns it now */
            return o;
        }
        default:
            break;
    }
    if (!c->lenient)
        luaL_error (L, "cannot convert a %s to JSON", luaL_typename (L, idx));
    return NULL;
}

static int tojson_protected (lua_State *L)
{
    struct tojson_ctx *c = lua_touserdata (L, 2);
    c->o = to_json (L, c, 1, 0);
    return 0;
}

/* Convert the value at idx in a protected call: 0, or -1 with the error
 * on L's stack and what was built freed. */
static int convert (lua_State *L, int idx, struct tojson_ctx *c)
{
    idx = lua_absindex (L, idx);
    lua_pushcfunction (L, tojson_protected);
    lua_pushvalue (L, idx);
    lua_pushlightuserdata (L, c);
    if (lua_pcall (L, 2, 0, 0) != LUA_OK) {
        for (int d = 0; d <= MAX_DEPTH; d++)
            json_decref (c->building[d]);
        return -1;
    }
    return 0;
}

/* Converts the value at idx; on error raises it in L (nothing leaks). */
static json_t *check_json (lua_State *L, int idx)
{
    struct tojson_ctx c = { .o = NULL };
    if (convert (L, idx, &c) < 0)
        lua_error (L);
    return c.o;
}

/* --- the job object ---------------------------------------------------- */

/* The job userdata at idx, or a type error.  luaL_checkudata would find
 * the metatable by name in the registry on every field read and method
 * call; comparing it with the one remembered costs a fraction of that. */
static struct jobref *job_udata (lua_State *L, int idx)
{
    struct jobref *j = NULL;

    if (lua_type (L, idx) == LUA_TUSERDATA && lua_getmetatable (L, idx)) {
        if (lua_topointer (L, -1) == policy_of (L)->job_mt)
            j = lua_touserdata (L, idx);
        lua_pop (L, 1);
    }
    if (!j)
        luaL_typeerror (L, idx, JOB_MT);
    return j;
}

static struct jobref *check_job (lua_State *L, int idx)
{
    struct jobref *j = job_udata (L, idx);
    if (!j->valid)
        luaL_error (L, "job object used outside of its callback");
    return j;
}

static const char *state_name (json_int_t state)
{
    const char *s = flux_job_statetostr ((flux_job_state_t)state, "S");
    return s ? s : "?";
}

/* One key of the callback's args (borrowed), or NULL.  Keys are read one
 * at a time: the runtime builds "jobspec" only for callbacks that ask. */
static json_t *job_arg_fetch (struct jobref *j, const char *key)
{
    json_t *v = NULL;
    if (flux_plugin_arg_unpack (j->args, FLUX_PLUGIN_ARG_IN, "{s?o}", key, &v)
        < 0)
        return NULL;
    return v;
}

static json_t *job_arg (struct jobref *j, const char *key)
{
    if (!strcmp (key, "id")) {
        if (!j->have_id) {
            j->id = job_arg_fetch (j, key);
            j->have_id = true;
        }
        return j->id;
    }
    if (!strcmp (key, "jobspec")) {
        if (!j->have_jobspec) {
            j->jobspec = job_arg_fetch (j, key);
            j->have_jobspec = true;
        }
        return j->jobspec;
    }
    return job_arg_fetch (j, key);
}

static flux_jobid_t job_id (struct jobref *j)
{
    json_int_t id = 0;
    json_t *o = job_arg (j, "id");
    if (o && json_is_integer (o))
        id = json_integer_value (o);
    return (flux_jobid_t)id;
}

static int job_reject (lua_State *L)
{
    struct jobref *j = check_job (L, 1);
    const char *msg = luaL_optstring (L, 2, NULL);
    if (msg)
        flux_jobtap_reject_job (j->h->p, j->args, "%s", msg);
    else
        flux_jobtap_reject_job (j->h->p, j->args, "rejected by policy '%s'",
                                j->h->name);
    j->rejected = true;
    return 0;
}

static lua_Integer check_priority (lua_State *L, int idx)
{
    int isnum;
    lua_Integer v = lua_tointegerx (L, idx, &isnum);
    if (!isnum || v < 0 || v > 4294967295LL)
        luaL_argerror (L, idx, "priority must be an integer 0..4294967295");
    return v;
}

static int job_set_priority (lua_State *L)
{
    struct jobref *j = check_job (L, 1);
    lua_Integer v = check_priority (L, 2);
    if (flux_plugin_arg_pack (j->args, FLUX_PLUGIN_ARG_OUT, "{s:I}",
                              "priority", (json_int_t)v) < 0)
        return luaL_error (L, "set_priority: %s",
                           flux_plugin_arg_strerror (j->args));
    return 0;
}

static int job_priority_unavailable (lua_State *L)
{
    struct jobref *j = check_job (L, 1);
    if (flux_jobtap_priority_unavail (j->h->p, j->args) < 0)
        return luaL_error (L, "priority_unavailable: %s", strerror (errno));
    return 0;
}

/* Functions taking an explicit id are shared by jobtap.* (id) and job:*
 * (the current job). */

/* A flux_jobtap_* result the Lua way: true, or nil and the error text
 * (read errno before anything else can change it). */
static int push_result (lua_State *L, int rc)
{
    if (rc < 0) {
        lua_pushnil (L);
        lua_pushstring (L, strerror (errno));
        return 2;
    }
    lua_pushboolean (L, 1);
    return 1;
}

/* The job:* form of an op: where jobtap.* returns nil and the error, the
 * method raises "what: error".  A failure on the current job is a policy
 * bug (the runtime matches dependencies by literal id, as Flux). */
static int method_result (lua_State *L, int nret, const char *what)
{
    if (nret == 2)
        return luaL_error (L, "%s: %s", what, lua_tostring (L, -1));
    return nret;
}

static int dep_op (lua_State *L, flux_jobid_t id, int idx, bool add)
{
    const char *desc = luaL_checkstring (L, idx);
    struct host *h = host_of (L);
    int rc = add ? flux_jobtap_dependency_add (h->p, id, desc)
                 : flux_jobtap_dependency_remove (h->p, id, desc);
    return push_result (L, rc);
}

static int job_add_dependency (lua_State *L)
{
    flux_jobid_t id = job_id (check_job (L, 1));
    return method_result (L, dep_op (L, id, 2, true), "add_dependency");
}

static int job_remove_dependency (lua_State *L)
{
    flux_jobid_t id = job_id (check_job (L, 1));
    return method_result (L, dep_op (L, id, 2, false), "remove_dependency");
}

static flux_jobid_t check_id (lua_State *L, int idx)
{
    return (flux_jobid_t)luaL_checkinteger (L, idx);
}

static int l_dependency_add (lua_State *L)
{
    return dep_op (L, check_id (L, 1), 2, true);
}

static int l_dependency_remove (lua_State *L)
{
    return dep_op (L, check_id (L, 1), 2, false);
}

static int raise_op (lua_State *L, flux_jobid_t id, int idx)
{
    const char *type = luaL_checkstring (L, idx);
    int severity = (int)luaL_checkinteger (L, idx + 1);
    const char *note = luaL_optstring (L, idx + 2, "");
    if (severity < 0 || severity > 7)
        return luaL_argerror (L, idx + 1, "severity must be 0..7");
    return push_result (L, flux_jobtap_raise_exception (host_of (L)->p, id,
                                                        type, severity, "%s",
                                                        note));
}

static int job_raise (lua_State *L)
{
    flux_jobid_t id = job_id (check_job (L, 1));
    return method_result (L, raise_op (L, id, 2), "raise");
}

static int l_raise (lua_State *L)
{
    return raise_op (L, check_id (L, 1), 2);
}

static int post_op (lua_State *L, flux_jobid_t id, int idx)
{
    const char *name = luaL_checkstring (L, idx);
    json_t *ctx = NULL;
    int rc;
    if (!lua_isnoneornil (L, idx + 1)) {
        luaL_checktype (L, idx + 1, LUA_TTABLE);
        ctx = check_json (L, idx + 1);
    }
    if (ctx)
        rc = flux_jobtap_event_post_pack (host_of (L)->p, id, name, "O", ctx);
    else
        rc = flux_jobtap_event_post_pack (host_of (L)->p, id, name, NULL);
    json_decref (ctx);
    return push_result (L, rc);
}

static int job_post_event (lua_State *L)
{
    flux_jobid_t id = job_id (check_job (L, 1));
    return method_result (L, post_op (L, id, 2), "post_event");
}

static int l_post_event (lua_State *L)
{
    return post_op (L, check_id (L, 1), 2);
}

static int job_update (lua_State *L)
{
    check_job (L, 1);
    luaL_checktype (L, 2, LUA_TTABLE);
    json_t *o = check_json (L, 2);
    int rc = flux_jobtap_jobspec_update_pack (host_of (L)->p, "O", o);
    json_decref (o);
    if (rc < 0)
        return luaL_error (L, "update: invalid jobspec update (keys must "
                              "start with attributes., resources or tasks)");
    return 0;
}

static int l_update_jobspec (lua_State *L)
{
    flux_jobid_t id = check_id (L, 1);
    luaL_checktype (L, 2, LUA_TTABLE);
    json_t *o = check_json (L, 2);
    int rc = flux_jobtap_jobspec_update_id_pack (host_of (L)->p, id, "O", o);
    json_decref (o);
    return push_result (L, rc);
}

static int job_set_flag (lua_State *L)
{
    check_job (L, 1);
    const char *flag = luaL_checkstring (L, 2);
    if (flux_jobtap_job_set_flag (host_of (L)->p, FLUX_JOBTAP_CURRENT_JOB,
                                  flag) < 0)
        return luaL_error (L, "set_flag: unknown flag '%s'", flag);
    return 0;
}

static int job_subscribe (lua_State *L)
{
    check_job (L, 1);
    if (flux_jobtap_job_subscribe (host_of (L)->p, FLUX_JOBTAP_CURRENT_JOB)
        < 0)
        return luaL_error (L, "subscribe: %s", strerror (errno));
    return 0;
}

static int job_unsubscribe (lua_State *L)
{
    check_job (L, 1);
    flux_jobtap_job_unsubscribe (host_of (L)->p, FLUX_JOBTAP_CURRENT_JOB);
    return 0;
}

static int job_annotate (lua_State *L)
{
    struct jobref *j = check_job (L, 1);
    luaL_checktype (L, 2, LUA_TTABLE);
    json_t *o = check_json (L, 2);
    int rc = flux_plugin_arg_pack (j->args, FLUX_PLUGIN_ARG_OUT, "{s:O}",
                                   "annotations", o);
    json_decref (o);
    if (rc < 0)
        return luaL_error (L, "annotate: %s",
                           flux_plugin_arg_strerror (j->args));
    return 0;
}

static void jobdata_free (void *arg)
{
    struct jobdata *jd = arg;
    struct host *h = jd->h;
    if (h) {
        if (h->cur)
            luaL_unref (h->cur->L, LUA_REGISTRYINDEX, jd->ref);
        if (jd->prev)
            jd->prev->next = jd->next;
        else
            h->jobdata = jd->next;
        if (jd->next)
            jd->next->prev = jd->prev;
    }
    free (jd);
}

/* Push job.data, creating it on first use. */
static void push_jobdata (lua_State *L, struct jobref *j)
{
    struct host *h = j->h;
    struct jobdata *jd = flux_jobtap_job_aux_get (h->p,
                                                  FLUX_JOBTAP_CURRENT_JOB,
                                                  "lua::data");
    if (jd) {
        lua_rawgeti (L, LUA_REGISTRYINDEX, jd->ref);
        return;
    }
    if (!(jd = calloc (1, sizeof (*jd))))
        luaL_error (L, "out of memory");
    lua_newtable (L);
    lua_pushvalue (L, -1);
    jd->ref = luaL_ref (L, LUA_REGISTRYINDEX);
    jd->h = h;
    if (flux_jobtap_job_aux_set (h->p, FLUX_JOBTAP_CURRENT_JOB, "lua::data",
                                 jd, jobdata_free) < 0) {
        luaL_unref (L, LUA_REGISTRYINDEX, jd->ref);
        free (jd);
        luaL_error (L, "job.data: no current job");
    }
    jd->next = h->jobdata;
    if (jd->next)
        jd->next->prev = jd;
    h->jobdata = jd;
}

static const luaL_Reg job_methods[] = {
    { "reject", job_reject },
    { "set_priority", job_set_priority },
    { "priority_unavailable", job_priority_unavailable },
    { "add_dependency", job_add_dependency },
    { "remove_dependency", job_remove_dependency },
    { "raise", job_raise },
    { "post_event", job_post_event },
    { "update", job_update },
    { "set_flag", job_set_flag },
    { "subscribe", job_subscribe },
    { "unsubscribe", job_unsubscribe },
    { "annotate", job_annotate },
    { NULL, NULL },
};

/* Job fields that are one jobspec node, read here rather than through
 * the prelude's Lua functions (which cost several times the read). */
static const struct spec_field {
    const char *name;
    const char *path[4]; /* object keys from the jobspec's root */
    bool zero_default;   /* 0 when absent, else nil */
} spec_fields[] = {
    { "duration", { "attributes", "system", "duration" }, true },
    { "queue", { "attributes", "system", "queue" }, false },
    { "bank", { "attributes", "system", "bank" }, false },
    { "project", { "attributes", "system", "project" }, false },
    { "cwd", { "attributes", "system", "cwd" }, false },
    { "name", { "attributes", "system", "job", "name" }, false },
};

static const struct spec_field *spec_field (const char *key)
{
    for (size_t i = 0; i < sizeof (spec_fields) / sizeof (spec_fields[0]);
         i++)
        if (!strcmp (key, spec_fields[i].name))
            return &spec_fields[i];
    return NULL;
}

static void push_spec_field (lua_State *L, struct jobref *j,
                             const struct spec_field *f)
{
    json_t *o = job_arg (j, "jobspec");
    for (size_t i = 0; o && i < 4 && f->path[i]; i++)
        o = json_object_get (o, f->path[i]);
    if (o)
        push_json (L, o, 0);
    else if (f->zero_default)
        lua_pushinteger (L, 0);
    else
        lua_pushnil (L);
}

/* __index: methods (upvalue 1), then cached values, then jobspec fields,
 * then the callback's args (converted on first access), then computed
 * fields from the prelude (upvalue 2).  No args key is a jobspec field's
 * name.  Lookups use the key's Lua string (raw gets: no re-interning),
 * and the cache is made on the first value stored. */
static int job_index (lua_State *L)
{
    struct jobref *j = job_udata (L, 1);
    const char *key = luaL_checkstring (L, 2);
    const struct spec_field *f;

    lua_settop (L, 2);
    lua_pushvalue (L, 2);
    if (lua_rawget (L, lua_upvalueindex (1)) != LUA_TNIL)
        return 1;
    lua_pop (L, 1);
    if (lua_getiuservalue (L, 1, 1) == LUA_TTABLE) { /* 3: cache or nil */
        lua_pushvalue (L, 2);
        if (lua_rawget (L, 3) != LUA_TNIL)
            return 1;
        lua_pop (L, 1);
    }
    if (!j->valid)
        return luaL_error (L, "job object used outside of its callback");
    if (!strcmp (key, "data")) {
        push_jobdata (L, j);
        return 1;
    }
    json_t *v;
    if ((f = spec_field (key)))
        push_spec_field (L, j, f);
    else if ((v = job_arg (j, key))) {
        if (!strcmp (key, "state") && json_is_integer (v))
            lua_pushstring (L, state_name (json_integer_value (v)));
        else
            push_json (L, v, 0);
    }
    else {
        /* computed field: jobtap.fields[key](job) */
        lua_pushvalue (L, 2);
        if (lua_rawget (L, lua_upvalueindex (2)) == LUA_TNIL)
            return 1;
        lua_pushvalue (L, 1);
        lua_call (L, 1, 1);
    }
    if (lua_type (L, 3) != LUA_TTABLE) { /* the first value cached */
        lua_createtable (L, 0, 4);
        lua_replace (L, 3);
        lua_pushvalue (L, 3);
        lua_setiuservalue (L, 1, 1);
    }
    lua_pushvalue (L, 2);
    lua_pushvalue (L, -2);
    lua_rawset (L, 3);
    return 1;
}

static int job_newindex (lua_State *L)
{
    job_udata (L, 1);
    return luaL_error (L, "job fields are read-only (use job:update{...} "
                          "for jobspec changes, job.data for your own state)");
}

static int job_tostring (lua_State *L)
{
    struct jobref *j = job_udata (L, 1);
    lua_pushfstring (L, "job %I", (lua_Integer)job_id (j));
    return 1;
}

static struct jobref *push_job (lua_State *L,
                                struct host *h,
                                flux_plugin_arg_t *args)
{
    struct jobref *j = lua_newuserdatauv (L, sizeof (*j), 1);
    memset (j, 0, sizeof (*j));
    j->h = h;
    j->args = args;
    j->valid = true;
    luaL_setmetatable (L, JOB_MT);
    return j;
}

/* --- the jobtap module ------------------------------------------------- */

static int l_on (lua_State *L);

static int l_log (lua_State *L)
{
    int level = (int)luaL_checkinteger (L, 1);
    const char *msg = luaL_checkstring (L, 2);
    hlog (host_of (L), level, "%s", msg);
    return 0;
}

static int l_reprioritize (lua_State *L)
{
    struct host *h = host_of (L);
    int rc;
    if (lua_isnoneornil (L, 1))
        rc = flux_jobtap_reprioritize_all (h->p);
    else
        rc = flux_jobtap_reprioritize_job (h->p, check_id (L, 1),
                                           (unsigned int)check_priority (L, 2));
    return push_result (L, rc);
}

static int l_lookup (lua_State *L)
{
    struct host *h = host_of (L);
    flux_plugin_arg_t *args = flux_jobtap_job_lookup (h->p, check_id (L, 1));
    json_t *in = NULL;
    json_int_t state;

    if (!args) {
        lua_pushnil (L);
        return 1;
    }
    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "o", &in) < 0
        || !(in = json_deep_copy (in))) {
        flux_plugin_arg_destroy (args);
        lua_pushnil (L);
        return 1;
    }
    flux_plugin_arg_destroy (args);
    if (json_unpack (in, "{s:I}", "state", &state) == 0)
        json_object_set_new (in, "state", json_string (state_name (state)));
    /* a job is never nested deeper than MAX_DEPTH: push_json won't raise */
    push_json (L, in, 0);
    json_decref (in);
    return 1;
}

/* jobtap._jobspec_get (job, key...): one node of the job's jobspec (keys
 * are object keys or 1-based array indexes), converted alone.  The
 * prelude's fields (job.duration, job.queue...) read a few scalars;
 * converting the whole jobspec for them was most of a policy's cost. */
static int l_jobspec_get (lua_State *L)
{
    struct jobref *j = job_udata (L, 1);
    int n = lua_gettop (L);
    json_t *o;

    if (!j->valid)
        return luaL_error (L, "job object used outside of its callback");
    o = job_arg (j, "jobspec");
    for (int i = 2; o && i <= n; i++) {
        if (lua_type (L, i) == LUA_TNUMBER)
            o = json_array_get (o, (size_t)(lua_tointeger (L, i) - 1));
        else
            o = json_object_get (o, luaL_checkstring (L, i));
    }
    if (o)
        push_json (L, o, 0);
    else
        lua_pushnil (L);
    return 1;
}

static int l_result (lua_State *L)
{
    flux_job_result_t result;
    if (flux_jobtap_get_job_result (host_of (L)->p, check_id (L, 1), &result)
        < 0) {
        lua_pushnil (L);
        return 1;
    }
    lua_pushstring (L, flux_job_resulttostr (result, "S"));
    return 1;
}

static int l_array (lua_State *L)
{
    if (lua_isnoneornil (L, 1))
        lua_newtable (L);
    else
        luaL_checktype (L, 1, LUA_TTABLE);
    lua_settop (L, 1);
    luaL_setmetatable (L, ARRAY_MT);
    return 1;
}

static int l_print (lua_State *L)
{
    luaL_Buffer b;
    int n = lua_gettop (L);
    luaL_buffinit (L, &b);
    for (int i = 1; i <= n; i++) {
        if (i > 1)
            luaL_addchar (&b, '\t');
        luaL_tolstring (L, i, NULL);
        luaL_addvalue (&b);
    }
    luaL_pushresult (&b);
    hlog (host_of (L), LOG_INFO, "%s", lua_tostring (L, -1));
    return 0;
}

static int l_forbidden (lua_State *L)
{
    return luaL_error (L, "%s is disabled in jobtap policies",
                       lua_tostring (L, lua_upvalueindex (1)));
}

static const luaL_Reg jobtap_funcs[] = {
    { "on", l_on },
    { "_log", l_log },
    { "reprioritize", l_reprioritize },
    { "lookup", l_lookup },
    { "result", l_result },
    { "dependency_add", l_dependency_add },
    { "dependency_remove", l_dependency_remove },
    { "raise", l_raise },
    { "post_event", l_post_event },
    { "update_jobspec", l_update_jobspec },
    { "array", l_array },
    { NULL, NULL },
};

/* --- handlers ---------------------------------------------------------- */

static int dispatch (flux_plugin_t *p,
                     const char *topic,
                     flux_plugin_arg_t *args,
                     void *arg);

static bool topic_registered (struct host *h, const char *topic)
{
    size_t i;
    json_t *v;
    json_array_foreach (h->topics, i, v) {
        if (!strcmp (json_string_value (v), topic))
            return true;
    }
    return false;
}

/* Register 'topic' with the plugin if this state is the live one. */
static int register_topic (struct host *h, const char *topic)
{
    if (!strcmp (topic, "conf.update") || topic_registered (h, topic))
        return 0;
    if (flux_plugin_add_handler (h->p, topic, dispatch, h) < 0)
        return -1;
    json_array_append_new (h->topics, json_string (topic));
    return 0;
}

/* jobtap.on (topic, fn): handlers in registration order, first glob
 * match wins (as flux_plugin_add_handler). */
static int l_on (lua_State *L)
{
    struct policy *pol = policy_of (L);
    const char *topic = luaL_checkstring (L, 1);
    luaL_checktype (L, 2, LUA_TFUNCTION);

    lua_getfield (L, LUA_REGISTRYINDEX, "jobtap.handlers");
    lua_Integer n = (lua_Integer)lua_rawlen (L, -1);
    lua_createtable (L, 2, 0);
    lua_pushvalue (L, 1);
    lua_rawseti (L, -2, 1);
    lua_pushvalue (L, 2);
    lua_rawseti (L, -2, 2);
    lua_rawseti (L, -2, n + 1);
    if (pol->h->cur == pol && register_topic (pol->h, topic) < 0)
        return luaL_error (L, "on: cannot register '%s'", topic);
    return 0;
}

/* Push the first handler matching topic; false if none. */
static bool push_handler (lua_State *L, const char *topic)
{
    lua_getfield (L, LUA_REGISTRYINDEX, "jobtap.handlers");
    lua_Integer n = (lua_Integer)lua_rawlen (L, -1);
    for (lua_Integer i = 1; i <= n; i++) {
        lua_rawgeti (L, -1, i);
        lua_rawgeti (L, -1, 1);
        const char *glob = lua_tostring (L, -1);
        /* most handlers name one topic: fnmatch costs ten times strcmp */
        if (glob && (!strcmp (glob, topic)
                     || (strpbrk (glob, "*?[\\") && !fnmatch (glob, topic, 0)))) {
            lua_rawgeti (L, -2, 2);
            lua_replace (L, -4); /* fn replaces the handlers table */
            lua_pop (L, 2);
            return true;
        }
        lua_pop (L, 2);
    }
    lua_pop (L, 1);
    return false;
}

static int traceback (lua_State *L)
{
    const char *msg = lua_tostring (L, 1);
    if (!msg)
        msg = lua_pushfstring (L, "(error object is a %s value)",
                               luaL_typename (L, 1));
    luaL_traceback (L, L, msg, 1);
    return 1;
}

static bool submit_topic (const char *topic)
{
    return !strcmp (topic, "job.create") || !strcmp (topic, "job.validate")
           || !strncmp (topic, "job.update.", 11)
           || !strncmp (topic, "job.dependency.", 15);
}

/* A policy failure: log it fully, tell the user nothing internal. */
static int policy_failed (struct host *h,
                          const char *topic,
                          flux_plugin_arg_t *args,
                          bool has_id,
                          flux_jobid_t id,
                          const char *what)
{
    bool provisional = id & (1ULL << 63);

    if (has_id)
        hlog (h, LOG_ERR, "%s: job %s%ju: %s", topic,
              provisional ? "(at submit) " : "",
              (uintmax_t)(provisional ? id & ~(1ULL << 63) : id), what);
    else
        hlog (h, LOG_ERR, "%s: %s", topic, what);
    if (!strcmp (topic, "conf.update")) {
        flux_jobtap_error (h->p, args, "policy '%s' failed: %s", h->name,
                           what);
        return -1;
    }
    if (!submit_topic (topic) || h->on_error_accept)
        return 0;
    flux_jobtap_reject_job (h->p, args,
                            "job rejected: policy '%s' failed; contact your "
                            "administrator",
                            h->name);
    return -1;
}

struct callctx {
    struct host *h;
    const char *topic;
    flux_plugin_arg_t *args;
    bool has_id;
    flux_jobid_t id;
    int rc;
    char *what;             /* a policy failure to report */
};

/* Runs protected, so that even a memory error while building the job
 * object cannot escape to the panic handler. */
static int protected_call (lua_State *L)
{
    struct callctx *c = lua_touserdata (L, 1);
    struct jobref *j;

    lua_settop (L, 0);
    lua_pushcfunction (L, traceback);            /* 1 */
    j = push_job (L, c->h, c->args);             /* 2: keeps j alive */
    c->has_id = json_is_integer (job_arg (j, "id"));
    c->id = job_id (j);
    if (!push_handler (L, c->topic)) {
        j->valid = false;
        return 0;
    }
    lua_pushvalue (L, 2);
    lua_pushstring (L, c->topic);
    int status = lua_pcall (L, 2, LUA_MULTRET, 1);
    j->valid = false;
    if (status != LUA_OK) {
        const char *msg = lua_tostring (L, -1);
        c->what = strdup (msg ? msg : "error");
        return 0;
    }
    int nret = lua_gettop (L) - 2;
    int t = nret > 0 ? lua_type (L, 3) : LUA_TNIL;
    if (t == LUA_TNIL || (t == LUA_TBOOLEAN && lua_toboolean (L, 3)))
        c->rc = j->rejected ? -1 : 0;
    else if (t == LUA_TBOOLEAN) {
        const char *msg = nret > 1 ? lua_tostring (L, 4) : NULL;
        if (msg)
            flux_jobtap_reject_job (c->h->p, c->args, "%s", msg);
        else if (!j->rejected)
            flux_jobtap_reject_job (c->h->p, c->args,
                                    "rejected by policy '%s'", c->h->name);
        c->rc = -1;
    }
    else {
        char what[256];
        snprintf (what, sizeof (what),
                  "handler returned a %s (expected nothing, true, or false "
                  "and a message)",
                  lua_typename (L, t));
        c->what = strdup (what);
    }
    return 0;
}

/* Call the policy's handler for 'topic', within the budget. */
static int call_handler (struct host *h,
                         const char *topic,
                         flux_plugin_arg_t *args)
{
    struct policy *pol = h->cur;
    lua_State *L = pol->L;
    int base = lua_gettop (L);
    struct callctx c = { .h = h, .topic = topic, .args = args };
    int rc;

    /* one budget per outermost call: nested calls must not reset it */
    if (pol->depth++ == 0)
        budget_reset (pol);
    lua_pushcfunction (L, protected_call);
    lua_pushlightuserdata (L, &c);
    if (lua_pcall (L, 1, 0, 0) != LUA_OK) {
        const char *msg = lua_tostring (L, -1);
        free (c.what);
        c.what = strdup (msg ? msg : "error");
    }
    pol->depth--;
    lua_settop (L, base);
    if (c.what) {
        rc = policy_failed (h, topic, args, c.has_id, c.id, c.what);
        free (c.what);
    }
    else
        rc = c.rc;
    return rc;
}

static int dispatch (flux_plugin_t *p,
                     const char *topic,
                     flux_plugin_arg_t *args,
                     void *arg)
{
    struct host *h = arg;
    (void)p;
    if (!h->cur)
        return 0;
    return call_handler (h, topic, args);
}

/* --- states: create, load, swap ---------------------------------------- */

static void policy_destroy (struct policy *pol)
{
    if (pol) {
        if (pol->L)
            lua_close (pol->L);
        free (pol->source);
        free (pol);
    }
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

static void sandbox (struct host *h, lua_State *L)
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

/* The jobtap module table: built in C, completed by the prelude. */
static int open_jobtap (lua_State *L)
{
    struct host *h = host_of (L);
    const char *conf = NULL;

    luaL_newlib (L, jobtap_funcs);
    lua_pushlightuserdata (L, &null_sentinel);
    lua_setfield (L, -2, "null");
    lua_pushstring (L, h->name);
    lua_setfield (L, -2, "name");
    lua_pushstring (L, h->script);
    lua_setfield (L, -2, "path");
    lua_pushinteger (L, 0);
    lua_setfield (L, -2, "PRIORITY_MIN");
    lua_pushinteger (L, 4294967295LL);
    lua_setfield (L, -2, "PRIORITY_MAX");
    lua_pushinteger (L, LOG_ERR);
    lua_setfield (L, -2, "LOG_ERR");
    lua_pushinteger (L, LOG_WARNING);
    lua_setfield (L, -2, "LOG_WARNING");
    lua_pushinteger (L, LOG_NOTICE);
    lua_setfield (L, -2, "LOG_NOTICE");
    lua_pushinteger (L, LOG_INFO);
    lua_setfield (L, -2, "LOG_INFO");
    lua_pushinteger (L, LOG_DEBUG);
    lua_setfield (L, -2, "LOG_DEBUG");
    if ((conf = flux_plugin_get_conf (h->p))) {
        json_t *o = json_loads (conf, 0, NULL);
        if (o) {
            push_json (L, o, 0);
            json_decref (o);
        }
        else
            lua_newtable (L);
    }
    else
        lua_newtable (L);
    lua_setfield (L, -2, "conf");
    lua_newtable (L);
    lua_setfield (L, -2, "state");
    lua_getfield (L, LUA_REGISTRYINDEX, "jobtap.fields");
    lua_setfield (L, -2, "_fields");
    lua_pushcfunction (L, l_jobspec_get);
    lua_setfield (L, -2, "_jobspec_get");
    return 1;
}

static int read_file (const char *path, char **bufp, size_t *lenp)
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

/* Load 'source' into a fresh state.  NULL with err set on failure. */
static void copy_value (lua_State *from, int idx, lua_State *to);

static struct policy *policy_create (struct host *h,
                                     struct policy *old,
                                     char *source,
                                     size_t len,
                                     char *err,
                                     size_t errlen)
{
    struct policy *pol = calloc (1, sizeof (*pol));
    lua_State *L;
    char chunkname[512];

    if (!pol) {
        snprintf (err, errlen, "out of memory");
        free (source);
        return NULL;
    }
    pol->h = h;
    pol->source = source;
    pol->source_len = len;
    pol->mem_limit = h->mem_limit;
    pol->instruction_limit = h->instruction_limit;
    if (!(L = pol->L = lua_newstate (policy_alloc, pol))) {
        snprintf (err, errlen, "cannot create a Lua state");
        goto error;
    }
    lua_sethook (L, count_hook, LUA_MASKCOUNT, HOOK_COUNT);
    luaL_openlibs (L);
    sandbox (h, L);
    luaL_newmetatable (L, ARRAY_MT);
    lua_pop (L, 1);
    luaL_newlib (L, job_methods);
    lua_newtable (L);
    lua_pushvalue (L, -1);
    lua_setfield (L, LUA_REGISTRYINDEX, "jobtap.fields");
    luaL_newmetatable (L, JOB_MT);
    pol->job_mt = lua_topointer (L, -1);
    lua_rotate (L, -3, 1); /* metatable, methods, fields */
    lua_pushcclosure (L, job_index, 2);
    lua_setfield (L, -2, "__index");
    lua_pushcfunction (L, job_newindex);
    lua_setfield (L, -2, "__newindex");
    lua_pushcfunction (L, job_tostring);
    lua_setfield (L, -2, "__tostring");
    lua_pop (L, 1);
    lua_newtable (L);
    lua_setfield (L, LUA_REGISTRYINDEX, "jobtap.handlers");
    luaL_requiref (L, "jobtap", open_jobtap, 1);
    lua_pop (L, 1);
    lua_pushcfunction (L, l_print);
    lua_setglobal (L, "print");

    lua_pushcfunction (L, traceback);
    budget_reset (pol);
    if (luaL_loadbufferx (L, prelude_lua, strlen (prelude_lua), "=prelude",
                          "t") != LUA_OK
        || lua_pcall (L, 0, 0, -2) != LUA_OK) {
        snprintf (err, errlen, "prelude: %s", lua_tostring (L, -1));
        goto error;
    }
    if (old) {
        /* jobtap.state carries over, before the script looks at it */
        lua_State *from = old->L;
        lua_getfield (from, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
        lua_getfield (from, -1, "jobtap");
        lua_getfield (from, -1, "state");
        lua_getfield (L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
        lua_getfield (L, -1, "jobtap");
        copy_value (from, -1, L);
        lua_setfield (L, -2, "state");
        lua_pop (L, 2);
        lua_pop (from, 3);
    }
    snprintf (chunkname, sizeof (chunkname), "@%s", h->name);
    budget_reset (pol);
    if (luaL_loadbufferx (L, source, len, chunkname, "t") != LUA_OK
        || lua_pcall (L, 0, 0, -2) != LUA_OK) {
        snprintf (err, errlen, "%s", lua_tostring (L, -1));
        goto error;
    }
    lua_settop (L, 0);
    return pol;
error:
    policy_destroy (pol);
    return NULL;
}

/* Copy a plain-data value from one state to another (via JSON, which
 * drops functions and userdata). */
static void copy_value (lua_State *from, int idx, lua_State *to)
{
    struct tojson_ctx c = { .o = NULL, .lenient = true };
    if (convert (from, idx, &c) < 0) /* out of memory */
        lua_pop (from, 1);
    if (c.o && json_is_object (c.o) && json_object_size (c.o) == 0) {
        lua_newtable (to);
    }
    else if (c.o)
        push_json (to, c.o, 0);
    else
        lua_newtable (to);
    json_decref (c.o);
}

/* Swap in 'pol': move jobtap.state and every job.data table over,
 * re-register topics, close the old state. */
static int policy_swap (struct host *h, struct policy *pol)
{
    struct policy *old = h->cur;

    if (old) {
        lua_State *from = old->L;
        lua_State *to = pol->L;
        for (struct jobdata *jd = h->jobdata; jd; jd = jd->next) {
            lua_rawgeti (from, LUA_REGISTRYINDEX, jd->ref);
            copy_value (from, -1, to);
            lua_pop (from, 1);
            luaL_unref (from, LUA_REGISTRYINDEX, jd->ref);
            jd->ref = luaL_ref (to, LUA_REGISTRYINDEX);
        }
    }
    /* handlers: drop the old topics, add the new state's */
    size_t i;
    json_t *v;
    json_array_foreach (h->topics, i, v) {
        flux_plugin_remove_handler (h->p, json_string_value (v));
    }
    json_array_clear (h->topics);
    h->cur = pol;
    lua_State *L = pol->L;
    lua_getfield (L, LUA_REGISTRYINDEX, "jobtap.handlers");
    lua_Integer n = (lua_Integer)lua_rawlen (L, -1);
    for (lua_Integer k = 1; k <= n; k++) {
        lua_rawgeti (L, -1, k);
        lua_rawgeti (L, -1, 1);
        if (register_topic (h, lua_tostring (L, -1)) < 0)
            hlog (h, LOG_ERR, "cannot register topic %s", lua_tostring (L, -1));
        lua_pop (L, 2);
    }
    lua_pop (L, 1);
    policy_destroy (old);
    return 0;
}

/* conf.update: reload the script if it changed, then pass the call on to
 * the script's own conf.update handler, if any. */
static int conf_update_cb (flux_plugin_t *p,
                           const char *topic,
                           flux_plugin_arg_t *args,
                           void *arg)
{
    struct host *h = arg;
    char *source;
    size_t len;
    (void)p;

    if (read_file (h->script, &source, &len) < 0)
        hlog (h, LOG_ERR, "reload: %s: %s; keeping the loaded version",
              h->script, strerror (errno));
    else if (h->cur && len == h->cur->source_len
             && !memcmp (source, h->cur->source, len))
        free (source);
    else {
        char err[1024];
        struct policy *pol = policy_create (h, h->cur, source, len, err,
                                            sizeof (err));
        if (!pol)
            hlog (h, LOG_ERR, "reload failed, keeping the loaded version: %s",
                  err);
        else {
            policy_swap (h, pol);
            hlog (h, LOG_INFO, "reloaded %s", h->script);
        }
    }
    return call_handler (h, topic, args);
}

static void setting_bool (struct host *h, json_t *lua, const char *key,
                          bool *v)
{
    json_t *o = json_object_get (lua, key);
    if (o && json_is_boolean (o))
        *v = json_is_true (o);
    else if (o)
        hlog (h, LOG_ERR, "lua.%s must be true or false; ignored", key);
}

/* Host settings live in the policy conf's "lua" table. */
static int read_settings (struct host *h, char *err, size_t errlen)
{
    const char *s = flux_plugin_get_conf (h->p);
    json_t *conf = s ? json_loads (s, 0, NULL) : NULL;
    json_t *lua = conf ? json_object_get (conf, "lua") : NULL;
    int rc = 0;

    h->instruction_limit = DEFAULT_INSTRUCTION_LIMIT;
    h->mem_limit = (size_t)DEFAULT_MEMORY_LIMIT_MB << 20;
    if (lua && json_is_object (lua)) {
        json_t *o;
        const char *mode;
        if ((o = json_object_get (lua, "on-error"))) {
            mode = json_string_value (o);
            if (mode && !strcmp (mode, "accept"))
                h->on_error_accept = true;
            else if (!mode || strcmp (mode, "reject") != 0) {
                snprintf (err, errlen,
                          "lua.on-error must be \"reject\" or \"accept\"");
                rc = -1;
            }
        }
        if ((o = json_object_get (lua, "instruction-limit"))) {
            if (!json_is_integer (o) || json_integer_value (o) < 1000) {
                snprintf (err, errlen,
                          "lua.instruction-limit must be an integer >= 1000");
                rc = -1;
            }
            else
                h->instruction_limit = (long)json_integer_value (o);
        }
        if ((o = json_object_get (lua, "memory-limit-mb"))) {
            if (!json_is_integer (o) || json_integer_value (o) < 1
                || json_integer_value (o) > 65536) {
                snprintf (err, errlen,
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

static void host_destroy (void *arg)
{
    struct host *h = arg;
    if (h) {
        for (struct jobdata *jd = h->jobdata; jd; jd = jd->next)
            jd->h = NULL; /* leaked by the runtime: never touch us */
        policy_destroy (h->cur);
        json_decref (h->topics);
        free (h->script);
        free (h->name);
        free (h);
    }
}

static void set_load_error (flux_plugin_t *p, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

static void set_load_error (flux_plugin_t *p, const char *fmt, ...)
{
    char *s = NULL;
    va_list ap;
    va_start (ap, fmt);
    if (vasprintf (&s, fmt, ap) < 0)
        s = NULL;
    va_end (ap);
    if (s && flux_plugin_aux_set (p, "slurm-jobtap::lua-error", s, free) < 0)
        free (s);
}

int flux_plugin_init (flux_plugin_t *p)
{
    const char *script = flux_plugin_aux_get (p, "slurm-jobtap::lua-script");
    struct host *h;
    char err[1024];
    char *source;
    size_t len;
    struct policy *pol;

    if (!script) {
        flux_log (flux_jobtap_get_flux (p), LOG_ERR,
                  "jobtap-lua.so: load a .lua policy, not this plugin");
        set_load_error (p, "jobtap-lua.so is loaded through a *.lua entry");
        return -1;
    }
    if (!(h = calloc (1, sizeof (*h))) || !(h->topics = json_array ())
        || !(h->script = strdup (script))) {
        host_destroy (h);
        return -1;
    }
    const char *base = strrchr (script, '/');
    h->name = strdup (base ? base + 1 : script);
    h->p = p;
    if (!h->name || flux_plugin_aux_set (p, "lua::host", h, host_destroy) < 0) {
        host_destroy (h);
        return -1;
    }
    if (read_settings (h, err, sizeof (err)) < 0) {
        set_load_error (p, "%s: %s", script, err);
        return -1;
    }
    if (read_file (script, &source, &len) < 0) {
        set_load_error (p, "%s: %s", script, strerror (errno));
        return -1;
    }
    if (flux_plugin_add_handler (p, "conf.update", conf_update_cb, h) < 0)
        return -1;
    if (!(pol = policy_create (h, NULL, source, len, err, sizeof (err)))) {
        hlog (h, LOG_ERR, "load failed: %s", err);
        set_load_error (p, "%s: %s", script, err);
        return -1;
    }
    policy_swap (h, pol);
    return 0;
}

/* vi: ts=4 sw=4 expandtab
 */
