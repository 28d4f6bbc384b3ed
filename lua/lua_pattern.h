/* Bounded pattern functions for policies.
 *
 * Replaces string.find, string.match, string.gmatch and string.gsub in a
 * policy's state (the string table, which is also what the string
 * metatable's __index sees, so s:find(...) is covered) with functions
 * that first count the search's steps (lua_pattern_count.c), charge them
 * to the call's instruction budget (lua_limits.c) and refuse a search of
 * more than the policy's pattern-step-limit steps with the Lua error
 * "pattern too costly: more than N matching steps on a subject of L
 * bytes".  Otherwise Lua's own function runs, so results are Lua's.  A
 * plain find (plain = true, or a pattern with no special character) is a
 * linear-time search, charged an instruction per 16 bytes searched.
 *
 * Called by lua_state.c for every new state, after the standard
 * libraries are open and before any script runs.
 */
#ifndef SLURM_JOBTAP_LUA_PATTERN_H
#define SLURM_JOBTAP_LUA_PATTERN_H

#include <lua.h>

void pattern_open (lua_State *L);

#endif /* !SLURM_JOBTAP_LUA_PATTERN_H */

/* vi: ts=4 sw=4 expandtab
 */
