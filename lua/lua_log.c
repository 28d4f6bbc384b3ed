/* Logging for the Lua host (lua_log.h). */
#include <stdarg.h>
#include <stdio.h>
#include <syslog.h>
#include <lua.h>
#include <lauxlib.h>

#include <flux/core.h>
#include <flux/jobtap.h>

#include "lua_context.h"
#include "lua_log.h"

void host_log (struct host *h, int level, const char *fmt, ...)
{
    char buf[4096];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (buf, sizeof (buf), fmt, ap);
    va_end (ap);
    flux_log (flux_jobtap_get_flux (h->p), level, "lua: %s: %s", h->name, buf);
}

int log_lua_log (lua_State *L)
{
    int level = (int)luaL_checkinteger (L, 1);
    const char *msg = luaL_checkstring (L, 2);
    host_log (host_of (L), level, "%s", msg);
    return 0;
}

int log_lua_print (lua_State *L)
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
    host_log (host_of (L), LOG_INFO, "%s", lua_tostring (L, -1));
    return 0;
}

/* vi: ts=4 sw=4 expandtab
 */
