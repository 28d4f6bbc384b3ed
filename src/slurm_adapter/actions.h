/* actions: the runtime's decisions done to Slurm job records: hold,
 * release, set priority, hold by urgency, cancel.
 *
 * The runtime calls the *_cb functions (installed as host ops by
 * adapter.c, arg = the adapter context) from any thread, with its mutex
 * held. An action is applied at once when the calling thread holds the
 * slurmctld job write lock (a hook, or the agent, marked it with
 * actions_write_begin), and otherwise queued for the agent (queue.h),
 * which applies it under that lock.
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

#include "queue.h"
#include "urgency_hold.h"

struct adapter_ctx;

/* Every hold the shim owns shows this prefix in the job's reason. */
#define HOLD_PREFIX "jobtap: "

/* The calling thread holds the slurmctld job write lock from begin to end.
 * begin returns the previous state, for end to restore (hooks nest). */
bool actions_write_begin (void);
void actions_write_end (bool had);

/* How many actions this thread applied to job records since the reset:
 * the agent asks for a scheduler pass after any. */
void actions_applied_reset (void);
unsigned actions_applied (void);

/* Host ops (struct jobtap_host_ops), arg = struct adapter_ctx *. */
void actions_hold_cb (uint64_t id, const char *reason, void *arg);
void actions_release_cb (uint64_t id, void *arg);
void actions_set_priority_cb (uint64_t id, int64_t priority, void *arg);
void actions_urgency_hold_cb (uint64_t id, bool held, void *arg);
void actions_cancel_cb (uint64_t id,
                        const char *type,
                        const char *note,
                        void *arg);

/* Apply one queued action to its job, if the job still exists. */
void actions_apply (struct adapter_ctx *ctx, const struct action *a);

/* The calling thread is inside site_factor_p_set for job from begin to
 * end: holds and cancels of it the runtime decides meanwhile go to the
 * agent, the job fenced until then (fence.h). begin returns the previous
 * job, for end to restore (a release inside recomputes another job's
 * priority: it nests). */
job_record_t *actions_site_factor_begin (job_record_t *job);
void actions_site_factor_end (job_record_t *had);

/* Put the jobtap priority into the job from inside site_factor_p_set,
 * where slurmctld computes the job's priority right after. */
void actions_site_factor_priority (struct adapter_ctx *ctx,
                                   job_record_t *job,
                                   int64_t priority);

/* Whether the job is held by the shim (priority 0, HOLD_PREFIX reason). */
static inline bool actions_held_by_shim (const job_record_t *job)
{
    return job->priority == 0 && job->state_desc
           && !strncmp (job->state_desc, HOLD_PREFIX, strlen (HOLD_PREFIX));
}

/* Who holds the job now (urgency_hold.h): the shim, its user, an
 * operator, or nobody. Inline: jobspec.c's unit test links no actions. */
static inline enum held_by actions_held_by (const job_record_t *job)
{
    if (job->priority != 0)
        return HELD_BY_NOBODY;
    if (actions_held_by_shim (job))
        return HELD_BY_JOBTAP;
    if (job->state_reason == WAIT_HELD_USER)
        return HELD_BY_USER;
    if (job->state_reason == WAIT_HELD)
        return HELD_BY_OPERATOR;
    return HELD_BY_NOBODY;
}

/* Hold a pending job with reason (which should start with HOLD_PREFIX);
 * an unsatisfied Slurm dependency of the job is named after it. */
void actions_hold (job_record_t *job, const char *reason);

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
