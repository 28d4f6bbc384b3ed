/* Handler registration and dispatch: jobtap.on (topic, fn) records a
 * handler in the state and registers its topic with the plugin (only
 * for the live state); a callback on such a topic runs the first
 * matching handler with a fresh job object, in a protected call within
 * the instruction budget, and turns its result or error into the
 * callback's result (docs/lua.md, "Handlers and return values" and
 * "Errors").
 *
 * The topics registered with the plugin are the host's (h->topics):
 * lua_state.c re-registers them when a state is swapped in, and the
 * entry point calls handlers_call for conf.update after a reload.
 */
#ifndef SLURM_JOBTAP_LUA_HANDLERS_H
#define SLURM_JOBTAP_LUA_HANDLERS_H

#include <lua.h>

#include <flux/core.h>

#include "lua_context.h"

/* jobtap.on (topic, fn) */
int handlers_on (lua_State *L);

/* Call the live state's handler for 'topic': the callback's result. */
int handlers_call (struct host *h,
                   const char *topic,
                   flux_plugin_arg_t *args);

/* Drop the plugin handlers of the previous state and register the topics
 * of h->cur's handlers. */
void handlers_reset (struct host *h);

/* A message handler for lua_pcall: the error with a traceback. */
int handlers_traceback (lua_State *L);

#endif /* !SLURM_JOBTAP_LUA_HANDLERS_H */

/* vi: ts=4 sw=4 expandtab
 */
