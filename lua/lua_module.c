/* The 'jobtap' module (lua_module.h). */
#include <stdbool.h>
#include <syslog.h>
#include <jansson.h>
#include <lua.h>
#include <lauxlib.h>

#include <flux/core.h>
#include <flux/jobtap.h>

#include "lua_context.h"
#include "lua_handlers.h"
#include "lua_job.h"
#include "lua_json.h"
#include "lua_log.h"
#include "lua_ops.h"
#include "lua_module.h"

static int l_dependency_add (lua_State *L)
{
    return ops_dependency (L, ops_check_id (L, 1), 2, true);
}

static int l_dependency_remove (lua_State *L)
{
    return ops_dependency (L, ops_check_id (L, 1), 2, false);
}

static int l_raise (lua_State *L)
{
    return ops_raise (L, ops_check_id (L, 1), 2);
}

static int l_post_event (lua_State *L)
{
    return ops_post_event (L, ops_check_id (L, 1), 2);
}

static int l_update_jobspec (lua_State *L)
{
    flux_jobid_t id = ops_check_id (L, 1);
    luaL_checktype (L, 2, LUA_TTABLE);
    json_t *o = ljson_check (L, 2);
    int rc = flux_jobtap_jobspec_update_id_pack (host_of (L)->p, id, "O", o);
    json_decref (o);
    return ops_push_result (L, rc);
}

static int l_reprioritize (lua_State *L)
{
    struct host *h = host_of (L);
    int rc;
    if (lua_isnoneornil (L, 1))
        rc = flux_jobtap_reprioritize_all (h->p);
    else
        rc = flux_jobtap_reprioritize_job (
            h->p, ops_check_id (L, 1), (unsigned int)ops_check_priority (L, 2));
    return ops_push_result (L, rc);
}

static int l_lookup (lua_State *L)
{
    struct host *h = host_of (L);
    flux_plugin_arg_t *args =
        flux_jobtap_job_lookup (h->p, ops_check_id (L, 1));
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
        json_object_set_new (in, "state", json_string (job_state_name (state)));
    /* a job is never nested deeper than MAX_DEPTH: ljson_push won't raise */
    ljson_push (L, in, 0);
    json_decref (in);
    return 1;
}

static int l_result (lua_State *L)
{
    flux_job_result_t result;
    if (flux_jobtap_get_job_result (host_of (L)->p, ops_check_id (L, 1),
                                    &result) < 0) {
        lua_pushnil (L);
        return 1;
    }
    lua_pushstring (L, flux_job_resulttostr (result, "L"));
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

static const luaL_Reg jobtap_funcs[] = {
    { "on", handlers_on },
    { "_log", log_lua_log },
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

/* The jobtap module table: built in C, completed by the prelude. */
int module_open (lua_State *L)
{
    struct host *h = host_of (L);
    const char *conf = NULL;

    luaL_newlib (L, jobtap_funcs);
    ljson_push_null (L);
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
            ljson_push (L, o, 0);
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
    lua_getfield (L, LUA_REGISTRYINDEX, FIELDS_KEY);
    lua_setfield (L, -2, "_fields");
    lua_pushcfunction (L, job_lua_jobspec_get);
    lua_setfield (L, -2, "_jobspec_get");
    return 1;
}

/* vi: ts=4 sw=4 expandtab
 */
