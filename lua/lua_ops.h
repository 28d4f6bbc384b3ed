/* Operations on a job named by id, shared by the jobtap module's
 * functions (jobtap.raise (id, ...): true, or nil and the error) and the
 * job object's methods (job:raise (...) on the current job, raising the
 * error instead).  Each takes its arguments from L starting at idx and
 * returns its number of Lua results.
 *
 * Called by lua_job.c and lua_module.c.
 */
#ifndef SLURM_JOBTAP_LUA_OPS_H
#define SLURM_JOBTAP_LUA_OPS_H

#include <stdbool.h>
#include <lua.h>

#include <flux/core.h>

/* A flux_jobtap_* result the Lua way: true, or nil and strerror (errno). */
int ops_push_result (lua_State *L, int rc);

/* The argument at idx as a job id / a priority 0..4294967295 (or an
 * argument error). */
flux_jobid_t ops_check_id (lua_State *L, int idx);
lua_Integer ops_check_priority (lua_State *L, int idx);

/* desc at idx */
int ops_dependency (lua_State *L, flux_jobid_t id, int idx, bool add);

/* type, severity, [note] at idx */
int ops_raise (lua_State *L, flux_jobid_t id, int idx);

/* name, [context table] at idx */
int ops_post_event (lua_State *L, flux_jobid_t id, int idx);

#endif /* !SLURM_JOBTAP_LUA_OPS_H */

/* vi: ts=4 sw=4 expandtab
 */
