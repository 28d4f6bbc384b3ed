/* Lua states: create one for a version of the script (libraries, sandbox,
 * job metatable, the jobtap module, the prelude, then the script), swap
 * it in for the live one (carrying jobtap.state and every job.data over)
 * and destroy it.  Also reads script files.
 *
 * Called by the entry point (jobtap-lua.c): at load, and on conf.update
 * when the script changed.
 */
#ifndef SLURM_JOBTAP_LUA_STATE_H
#define SLURM_JOBTAP_LUA_STATE_H

#include <stddef.h>

#include "host_error.h"
#include "lua_context.h"

/* Read a whole file into *bufp (NUL-terminated, length *lenp): 0, or -1
 * with errno set. */
int state_read_file (const char *path, char **bufp, size_t *lenp);

/* Load 'source' (taken over, freed on failure) into a fresh state for
 * h; 'old', if set, is the live state whose jobtap.state the script
 * starts with.  NULL with err set on failure. */
struct policy *state_create (struct host *h,
                             struct policy *old,
                             char *source,
                             size_t len,
                             jobtap_host_error_t *err);

/* Swap in 'pol' as h->cur: move every job.data table over, re-register
 * topics, destroy the old state. */
void state_swap (struct host *h, struct policy *pol);

void state_destroy (struct policy *pol);

#endif /* !SLURM_JOBTAP_LUA_STATE_H */

/* vi: ts=4 sw=4 expandtab
 */
