/* The 'jobtap' module a policy requires (also the global 'jobtap'): its
 * functions on other jobs and on the whole policy, its constants, the
 * policy's conf and state tables.  Built in C here, completed by the
 * prelude (lua/prelude.lua: log_* wrappers, computed job fields).
 *
 * Called by lua_state.c when it creates a state (luaL_requiref).
 */
#ifndef SLURM_JOBTAP_LUA_MODULE_H
#define SLURM_JOBTAP_LUA_MODULE_H

#include <lua.h>

/* lua_CFunction for luaL_requiref: push the module table. */
int module_open (lua_State *L);

#endif /* !SLURM_JOBTAP_LUA_MODULE_H */

/* vi: ts=4 sw=4 expandtab
 */
