/* alloc: a running job's allocation as jobtap's R (RFC 20), from its job
 * record: the nodes in Slurm's order, the cores allocated on each
 * (job_resources' core bitmap) and its GPUs (the "gpu" GRES allocated per
 * node), the start time and the end of its time limit. The Slurm-free
 * builder is src/jobspec/r_build.
 *
 * Callers: hooks_prep (at prolog_slurmctld) and bind (jobs found
 * running). The job read lock at least. */
#ifndef SLURM_JOBTAP_ADAPTER_ALLOC_H
#define SLURM_JOBTAP_ADAPTER_ALLOC_H

#include <jansson.h>

#include "src/slurmctld/slurmctld.h"

/* A new R, or NULL if the job has no resources (yet) or out of memory. */
json_t *alloc_R (job_record_t *job);

#endif
