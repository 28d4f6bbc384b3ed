/* array_record: which Slurm job record holds a jobtap job, and which
 * jobtap jobs a record stands for (array_id.h gives a task its id).
 *
 * - A plain job's record is its own, with its job id.
 * - A task split off its array (to start it, or because a decision
 *   differs for it), and the array's last task, has a record of its own:
 *   the task's id.
 * - An array's record with several tasks still pending stands for all of
 *   them; its first pending task (the one Slurm starts next) represents
 *   it (array_record_id), and the others agree with that one, or the
 *   agent splits them off (array_sync.h).
 * - A hetjob's components: its leader's id (het_job.h).
 * An array submitted before its tasks were jobs (an older slurm-jobtap,
 * kept state) is one jobtap job with the record's id, as it was.
 *
 * Callers hold the job read lock (the job write lock where they change
 * records); the runtime's lock is taken inside. */
#ifndef SLURM_JOBTAP_ADAPTER_ARRAY_RECORD_H
#define SLURM_JOBTAP_ADAPTER_ARRAY_RECORD_H

#include <stdbool.h>
#include <stdint.h>

#include "src/slurmctld/slurmctld.h"

/* Whether jobtap knows the job (bound; not a provisional one). */
bool array_known (uint64_t id);

/* A record holding more than one pending task of its array. */
bool array_is_pending_meta (const job_record_t *job);

/* The jobtap id the record stands for (for an array's record with
 * several tasks pending, its first task's): the id jobtap knows it by, or
 * will. */
uint64_t array_record_id (const job_record_t *job);

/* The record that holds jobtap job 'id' now: its own, or its array's
 * while it waits there. NULL if Slurm has none (gone, or never made). */
job_record_t *array_record_of (uint64_t id);

/* Call fn for every jobtap job the record stands for, in task order,
 * until fn returns non-zero (returned). */
int array_for_each_id (const job_record_t *job,
                       int (*fn) (uint64_t id, void *arg),
                       void *arg);

#endif
