/* array_sync: a job array's tasks as jobtap jobs of their own, kept in
 * agreement with the Slurm records that hold them (array_record.h).
 *
 * - bind: job.new for each task of an array this slurmctld has just
 *   created, in task order. The submission fenced the array's record
 *   (fence.h), since its tasks do not exist when site_factor_p_set sees
 *   it: the agent binds them, then lifts the fence.
 * - split: a task whose decision (hold, urgency hold, priority) differs
 *   from its record's first task is split off into a record of its own,
 *   as `scontrol hold 7_3` does, and its decision told again for that
 *   record (jobtap_host_job_resync). So Slurm starts exactly the tasks no
 *   plugin holds, in priority order, and tasks that agree stay one record
 *   (squeue's 7_[3-9]).
 *
 * Only the agent's locked pass calls these: splitting adds a record to
 * Slurm's job list, which nothing else may be walking then. */
#ifndef SLURM_JOBTAP_ADAPTER_ARRAY_SYNC_H
#define SLURM_JOBTAP_ADAPTER_ARRAY_SYNC_H

#include <stdbool.h>
#include <stdint.h>

#include "src/slurmctld/slurmctld.h"

#include "ctx.h"
#include "write_scope.h"

/* job.new for the tasks of 'meta' jobtap does not know yet, in task
 * order; 'token' is the submission's provisional job (the first task
 * binds it; 0 for none), 'urgency' the submission's. At most a chunk of
 * tasks a pass: the rest wait for the next (array_sync_continue), the
 * record fenced. Once every task is a job, the record's fence is lifted
 * and the record looked at again (array_sync_dirty). Returns the tasks
 * bound. */
int array_sync_bind (struct adapter_ctx *ctx,
                     job_record_t *meta,
                     uint64_t token,
                     int urgency);

/* The next chunk of each array whose tasks are not all jobs yet
 * (ctx->array_unbound); the agent asks for another pass while any is. */
void array_sync_continue (struct adapter_ctx *ctx);
/* Whether an array waits for its next chunk. */
bool array_sync_unbound_left (const struct adapter_ctx *ctx);

/* After a restart: whether some of an array record's tasks were made
 * jobs but not all, as the runtime knows them (partly_bound) or, at
 * start-up before the restore, as the store kept them (partly_kept);
 * array_sync_resume fences such a record again and has the agent make
 * the rest jobs. */
bool array_sync_partly_bound (const job_record_t *meta);
bool array_sync_partly_kept (const job_record_t *meta);
void array_sync_resume (struct adapter_ctx *ctx, job_record_t *meta);

/* Split task 'task' off 'meta' (an array's record holding it with other
 * tasks), lifting the record's fence first. Returns the task's new
 * record, or NULL (logged). */
job_record_t *array_sync_split (struct adapter_ctx *ctx,
                                job_record_t *meta,
                                uint32_t task);

/* The records marked dirty (ctx->array_dirty): split off each task whose
 * decision differs from its record's first task. */
void array_sync_dirty (struct adapter_ctx *ctx, struct write_scope *scope);

#endif
