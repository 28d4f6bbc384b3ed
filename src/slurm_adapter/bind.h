/* bind: bringing Slurm's jobs into the runtime. A job slurmctld created
 * from a submission this process accepted is bound to the provisional job
 * of that submission (found by its mark, mark.h); any other job (after a
 * restart, or from before jobtap was configured) is restored from its
 * record.
 *
 * A new job is bound where slurmctld computes its first priority, inside
 * the submission (bind_in_allocate, from site_factor_p_set): before Slurm
 * tests it against the nodes or starts it, in the same RPC. What jobtap
 * decides there reaches the record through actions.h (a hold through the
 * agent, behind a fence: fence.h). A job bound later by the agent (the
 * fallback that creates jobs held, a job held by its user, a restart) is
 * then settled to agree with the runtime: held while jobtap has not
 * decided, else released.
 *
 * Callers: the agent (discover, finish, run, requeued), the site_factor
 * hook (in_allocate), the job_modify hook (known, ensure) and the PrEp
 * hooks (ensure, run, end).
 *
 * Locks: the caller holds the slurmctld job write lock, in the write_scope
 * it passes; the runtime's mutex and the queue's and conf's leaf locks are
 * taken inside. */
#ifndef SLURM_JOBTAP_ADAPTER_BIND_H
#define SLURM_JOBTAP_ADAPTER_BIND_H

#include <stdbool.h>
#include <stdint.h>

#include "src/slurmctld/slurmctld.h"

#include "write_scope.h"

struct adapter_ctx;

/* Whether the runtime knows the job the record stands for. */
bool bind_known (const job_record_t *job);

/* slurmctld is computing the first priority of a job it just created from
 * one of this process's submissions (job->priority is still NO_VAL): bind
 * it now, running job.new, depend and priority before Slurm can start it.
 * Does nothing and returns false for any other job (one created held, the
 * throw-away record of sbatch --test-only, a job from before a restart). */
bool bind_in_allocate (struct adapter_ctx *ctx,
                       struct write_scope *scope,
                       job_record_t *job);

/* The leader's id, for a hetjob's component slurmctld is creating right
 * after its leader (het_job.h); 0 for any other job. */
uint64_t bind_het_leader_of_new (struct adapter_ctx *ctx,
                                 const job_record_t *job);

/* Bring in the jobs created since the last call (at first, every job
 * slurmctld has). Returns how many were found. */
int bind_discover (struct adapter_ctx *ctx, struct write_scope *scope);

/* The job ended in Slurm (or is gone: job NULL): CLEANUP with its result,
 * then INACTIVE, once a plugin's epilog started in cleanup is done. */
void bind_finish (uint64_t id, const job_record_t *job);

/* The job ended in Slurm: CLEANUP with its result (Slurm's state and exit
 * code; a requeue is a cancel with note "requeued by Slurm"). */
void bind_end (const job_record_t *job, bool requeued);

/* Make sure the runtime knows the job: the agent binds new jobs a few ms
 * after their submission, and a hook may need one before that. Whether
 * it is known now. */
bool bind_ensure (struct adapter_ctx *ctx,
                  struct write_scope *scope,
                  job_record_t *job);

/* job.state.run for a bound job, with its allocation as R. */
void bind_run (job_record_t *job);

/* A requeued job (pending again) that jobtap saw end (its jobtap id):
 * forget it and bind it anew. Does nothing for any other job. */
void bind_requeued (struct adapter_ctx *ctx,
                    struct write_scope *scope,
                    uint64_t id);

#endif
