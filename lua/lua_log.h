/* Logging for the Lua host: every line a policy causes reads
 * "lua: <policy>: <message>" through the runtime's flux_log, whether it
 * comes from the host (errors, reloads) or from the script (jobtap._log,
 * which the prelude's jobtap.log_* wrap, and print).
 *
 * Called by every module of jobtap-lua.so; the two lua_CFunctions are
 * installed by lua_module.c.
 */
#ifndef SLURM_JOBTAP_LUA_LOG_H
#define SLURM_JOBTAP_LUA_LOG_H

#include <lua.h>

#include "lua_context.h"

void host_log (struct host *h, int level, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

/* jobtap._log (level, msg) */
int log_lua_log (lua_State *L);

/* print (...): tab-separated, at info */
int log_lua_print (lua_State *L);

#endif /* !SLURM_JOBTAP_LUA_LOG_H */

/* vi: ts=4 sw=4 expandtab
 */
