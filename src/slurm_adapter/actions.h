/* actions: the runtime's decisions done to Slurm job records: hold,
 * release, set priority, hold by urgency, cancel.
 *
 * The runtime calls the *_cb functions (installed as host ops by
 * lifecycle.c, arg = the adapter context) from any thread, with its mutex
 * held. An action is applied at once when the calling thread holds the
 * slurmctld job write lock in one of our entry points (it has a
 * write_scope), and otherwise queued for the agent (queue.h), which
 * applies it under that lock.
 *
 * Locks: the functions taking a job_record_t need the slurmctld job write
 * lock held by the caller. Nothing here takes a slurmctld lock (hooks run
 * under slurmctld's locks already); the conf and queue leaf locks are
 * taken and released within a call. */
#ifndef SLURM_JOBTAP_ADAPTER_ACTIONS_H
#define SLURM_JOBTAP_ADAPTER_ACTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "src/slurmctld/slurmctld.h"

#include "holder.h"
#include "queue.h"
#include "urgency_hold.h"
#include "write_scope.h"

struct adapter_ctx;

/* Host ops (struct jobtap_host_ops), arg = struct adapter_ctx *. */
void actions_hold_cb (uint64_t id, const char *reason, void *arg);
void actions_release_cb (uint64_t id, void *arg);
void actions_set_priority_cb (uint64_t id, int64_t priority, void *arg);
void actions_urgency_hold_cb (uint64_t id, bool held, void *arg);
void actions_cancel_cb (uint64_t id,
                        const char *type,
                        const char *note,
                        void *arg);

/* Apply one action to its job, if the job still exists (counted in the
 * scope's applied). */
void actions_apply (struct adapter_ctx *ctx,
                    struct write_scope *scope,
                    const struct action *a);

/* Put the jobtap priority into the job whose priority site_factor_p_set
 * computes (the scope's), where slurmctld sets it right after. */
void actions_site_factor_priority (struct adapter_ctx *ctx,
                                   const struct write_scope *scope,
                                   int64_t priority);

/* Hold a pending job with reason (which should start with HOLD_PREFIX);
 * with test_dependency, an unsatisfied Slurm dependency of the job is
 * named after it (Slurm's test takes assoc_mgr locks: never inside
 * site_factor_p_set; the agent's sweep adds it, actions_hold_refresh). */
void actions_hold (job_record_t *job, const char *reason, bool test_dependency);

/* Bring a jobtap-held job's reason up to date with its Slurm dependency
 * (the agent's sweep: Slurm's dependencies change with other jobs). */
void actions_hold_refresh (job_record_t *job);

/* Hold a job the Slurm way, as its user asked (-H, urgency 0), so the
 * user can release it. */
void actions_user_hold (job_record_t *job);

/* Lift any hold from a pending job: back to the operator priority of its
 * submission mark, or to its computed priority. */
void actions_release (struct adapter_ctx *ctx, job_record_t *job);

#endif
