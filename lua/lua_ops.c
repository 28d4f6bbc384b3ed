/* Operations on a job named by id (lua_ops.h). */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <jansson.h>
#include <lua.h>
#include <lauxlib.h>

#include <flux/core.h>
#include <flux/jobtap.h>

#include "lua_context.h"
#include "lua_json.h"
#include "lua_ops.h"

lua_Integer ops_check_priority (lua_State *L, int idx)
{
    int isnum;
    lua_Integer v = lua_tointegerx (L, idx, &isnum);
    if (!isnum || v < 0 || v > 4294967295LL)
        luaL_argerror (L, idx, "priority must be an integer 0..4294967295");
    return v;
}

/* Read errno before anything else can change it. */
int ops_push_result (lua_State *L, int rc)
{
    if (rc < 0) {
        lua_pushnil (L);
        lua_pushstring (L, strerror (errno));
        return 2;
    }
    lua_pushboolean (L, 1);
    return 1;
}

flux_jobid_t ops_check_id (lua_State *L, int idx)
{
    return (flux_jobid_t)luaL_checkinteger (L, idx);
}

int ops_dependency (lua_State *L, flux_jobid_t id, int idx, bool add)
{
    const char *desc = luaL_checkstring (L, idx);
    struct host *h = host_of (L);
    int rc = add ? flux_jobtap_dependency_add (h->p, id, desc)
                 : flux_jobtap_dependency_remove (h->p, id, desc);
    return ops_push_result (L, rc);
}

int ops_raise (lua_State *L, flux_jobid_t id, int idx)
{
    const char *type = luaL_checkstring (L, idx);
    int severity = (int)luaL_checkinteger (L, idx + 1);
    const char *note = luaL_optstring (L, idx + 2, "");
    if (severity < 0 || severity > 7)
        return luaL_argerror (L, idx + 1, "severity must be 0..7");
    return ops_push_result (L, flux_jobtap_raise_exception (host_of (L)->p,
                                                            id, type, severity,
                                                            "%s", note));
}

int ops_post_event (lua_State *L, flux_jobid_t id, int idx)
{
    const char *name = luaL_checkstring (L, idx);
    json_t *ctx = NULL;
    int rc;
    if (!lua_isnoneornil (L, idx + 1)) {
        luaL_checktype (L, idx + 1, LUA_TTABLE);
        ctx = ljson_check (L, idx + 1);
    }
    if (ctx)
        rc = flux_jobtap_event_post_pack (host_of (L)->p, id, name, "O", ctx);
    else
        rc = flux_jobtap_event_post_pack (host_of (L)->p, id, name, NULL);
    json_decref (ctx);
    return ops_push_result (L, rc);
}

/* vi: ts=4 sw=4 expandtab
 */
