/* jobspec_apply: jobspec updates made in Slurm's terms: applied to a
 * job_desc (a submission's, or an update request for a job record), and
 * a job_modify request read as jobspec updates. Through src/jobspec
 * (jobspec_update, jobspec_resize, jobspec_mail) and jobspec.c's fields.
 *
 * Callers: hooks_submit (submissions, job_modify), post_update (plugins'
 * later updates). */
#ifndef SLURM_JOBTAP_ADAPTER_JOBSPEC_APPLY_H
#define SLURM_JOBTAP_ADAPTER_JOBSPEC_APPLY_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "host_error.h"

#include "src/slurmctld/slurmctld.h"

/* The fields a job_modify request for job changes, as dotted jobspec
 * keys (e.g. {"attributes.system.duration": 3600.0}; a new node count,
 * task count or cpus per task as the new "resources" and "tasks").  New
 * reference. */
json_t *jobspec_updates_from_desc (const job_desc_msg_t *desc,
                                   const job_record_t *job);

struct jobspec_update_key; /* src/jobspec/jobspec_update.h */

/* A checked update: its table entry and value (borrowed from the
 * flattened updates). */
struct jobspec_checked {
    const struct jobspec_update_key *m;
    json_t *v;
};

/* The updates of the last submission, as checked: a policy that sets one
 * default on job after job packs the runtime's kept update, one object
 * shared by those jobs and never changed while shared, so the next job
 * that brings the same object is not checked again.  Its own lock: the
 * submit hook may run in several threads at once (job_submit is called
 * without the job write lock on 24.11 and later, and for 22.05's salloc
 * and srun). */
#define APPLY_MEMO_KEYS 8
struct apply_memo {
    atomic_flag busy;       /* a leaf lock, held for a few copies */
    json_t *updates, *flat; /* references held; NULL: empty */
    size_t n;
    bool shape;
    struct jobspec_checked checked[APPLY_MEMO_KEYS];
};

#define APPLY_MEMO_INIT                                                        \
    {                                                                          \
        .busy = ATOMIC_FLAG_INIT                                               \
    }

/* Let go of what memo holds. */
void apply_memo_clear (struct apply_memo *memo);

/* Apply jobspec updates (dotted keys -> values) to a job_desc: a whole
 * submission when job is NULL, else a request to update job (post-submit
 * updates and job_modify), which Slurm's update_job then makes.  Returns
 * 0, or -1 with err naming the first key that has no
 * Slurm equivalent, a value of the wrong type or a change Slurm cannot
 * make there; desc is then left unchanged.  With job, needs the job read
 * lock.  memo (a submission's only, or NULL) keeps the check of updates
 * for the next call with the same object. */
int jobspec_apply_updates (job_desc_msg_t *desc,
                           const job_record_t *job,
                           json_t *updates,
                           struct apply_memo *memo,
                           jobtap_host_error_t *err);

#endif
