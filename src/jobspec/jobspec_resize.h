/* jobspec_resize: an update of a job's resources or tasks as the Slurm
 * request that has them (docs/jobspec.md, "Resources and tasks").
 *
 * Owns the inverse of jobspec_build's resources and task count: from a
 * new resources or tasks value and the job's fields now, the node count,
 * slots per node, task count, cores per task and exclusive node that
 * jobspec_build turns back into exactly that value.  A value no Slurm
 * request builds is refused with a message naming the key.  Slurm-free:
 * src/slurm_adapter/jobspec_apply.c writes the result into a job_desc,
 * jobtap-run refuses what slurmctld would. */
#ifndef SLURM_JOBTAP_JOBSPEC_RESIZE_H
#define SLURM_JOBTAP_JOBSPEC_RESIZE_H

#include <jansson.h>

#include "host_error.h"
#include "jobspec_build.h"

/* The fields of the job *now describes after the checked updates flat
 * (jobspec_updates_check's result, with "resources" or "tasks" or both),
 * in *out: now's, with the node count, max_nodes, task count, tasks per
 * node, cores per task and exclusive changed as the new values ask
 * (strings stay borrowed from now and flat).  0, or -1 with err set. */
int jobspec_resize (const struct jobspec_fields *now,
                    json_t *flat,
                    struct jobspec_fields *out,
                    jobtap_host_error_t *err);

#endif
