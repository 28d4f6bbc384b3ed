/* The job object (lua_job.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <lua.h>
#include <lauxlib.h>

#include <flux/core.h>
#include <flux/jobtap.h>

#include "lua_context.h"
#include "lua_json.h"
#include "lua_ops.h"
#include "lua_job.h"

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

const char *job_state_name (json_int_t state)
{
    const char *s = flux_job_statetostr ((flux_job_state_t)state, "L");
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

json_t *job_arg (struct jobref *j, const char *key)
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

static int job_set_priority (lua_State *L)
{
    struct jobref *j = check_job (L, 1);
    lua_Integer v = ops_check_priority (L, 2);
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

/* The job:* form of an op (lua_ops.h): where jobtap.* returns nil and
 * the error, the method raises "what: error".  A failure on the current
 * job is a policy bug (the runtime matches dependencies by literal id,
 * as Flux). */
static int method_result (lua_State *L, int nret, const char *what)
{
    if (nret == 2)
        return luaL_error (L, "%s: %s", what, lua_tostring (L, -1));
    return nret;
}

static int job_add_dependency (lua_State *L)
{
    flux_jobid_t id = job_id (check_job (L, 1));
    return method_result (L, ops_dependency (L, id, 2, true), "add_dependency");
}

static int job_remove_dependency (lua_State *L)
{
    flux_jobid_t id = job_id (check_job (L, 1));
    return method_result (L, ops_dependency (L, id, 2, false),
                          "remove_dependency");
}

static int job_raise (lua_State *L)
{
    flux_jobid_t id = job_id (check_job (L, 1));
    return method_result (L, ops_raise (L, id, 2), "raise");
}

static int job_post_event (lua_State *L)
{
    flux_jobid_t id = job_id (check_job (L, 1));
    return method_result (L, ops_post_event (L, id, 2), "post_event");
}

static int job_update (lua_State *L)
{
    check_job (L, 1);
    luaL_checktype (L, 2, LUA_TTABLE);
    json_t *o = ljson_check (L, 2);
    int rc = flux_jobtap_jobspec_update_pack (host_of (L)->p, "O", o);
    json_decref (o);
    if (rc < 0)
        return luaL_error (L, "update: invalid jobspec update (keys must "
                              "start with attributes., resources or tasks)");
    return 0;
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
    json_t *o = ljson_check (L, 2);
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

/* The field's node, unpacked alone while the jobspec was not fetched
 * whole: the runtime then tells these scalars without making the tree. */
static json_t *spec_field_node (struct jobref *j, const struct spec_field *f)
{
    json_t *o = NULL;
    int rc;

    if (j->have_jobspec) {
        o = j->jobspec;
        for (size_t i = 0; o && i < 4 && f->path[i]; i++)
            o = json_object_get (o, f->path[i]);
        return o;
    }
    if (f->path[3])
        rc = flux_plugin_arg_unpack (j->args, FLUX_PLUGIN_ARG_IN,
                                     "{s?{s?{s?{s?{s?o}}}}}", "jobspec",
                                     f->path[0], f->path[1], f->path[2],
                                     f->path[3], &o);
    else
        rc = flux_plugin_arg_unpack (j->args, FLUX_PLUGIN_ARG_IN,
                                     "{s?{s?{s?{s?o}}}}", "jobspec",
                                     f->path[0], f->path[1], f->path[2], &o);
    return rc < 0 ? NULL : o;
}

static void push_spec_field (lua_State *L, struct jobref *j,
                             const struct spec_field *f)
{
    json_t *o = spec_field_node (j, f);
    if (o)
        ljson_push (L, o, 0);
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
            lua_pushstring (L, job_state_name (json_integer_value (v)));
        else
            ljson_push (L, v, 0);
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

/* jobtap._jobspec_get (job, key...): one node of the job's jobspec (keys
 * are object keys or 1-based array indexes), converted alone.  The
 * prelude's fields (job.duration, job.queue...) read a few scalars;
 * converting the whole jobspec for them was most of a policy's cost. */
int job_lua_jobspec_get (lua_State *L)
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
        ljson_push (L, o, 0);
    else
        lua_pushnil (L);
    return 1;
}

/* The metatable's __index closes over the methods and the computed
 * fields (the prelude fills jobtap._fields, which is this table). */
void job_open (struct policy *pol)
{
    lua_State *L = pol->L;

    luaL_newlib (L, job_methods);
    lua_newtable (L);
    lua_pushvalue (L, -1);
    lua_setfield (L, LUA_REGISTRYINDEX, FIELDS_KEY);
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
}

/* vi: ts=4 sw=4 expandtab
 */
