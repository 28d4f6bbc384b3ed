/* Slurm job <-> Flux jobspec version 1 (docs/jobspec.md is the contract). */
#ifndef SLURM_JOBTAP_JOBSPEC_H
#define SLURM_JOBTAP_JOBSPEC_H

#include <jansson.h>
#include <stdbool.h>

#include "src/slurmctld/slurmctld.h"

/* The jobspec of a job being submitted (job_submit), with Slurm's defaults
 * for partition and time limit resolved as slurmctld will resolve them.
 * Needs the partition read lock (held in job_submit). New reference. */
json_t *jobspec_from_desc (const job_desc_msg_t *desc);

/* The jobspec of an existing job. Needs the job read lock. */
json_t *jobspec_from_record (const job_record_t *job);

/* Jobtap urgency of a job: 0 when held, else the default 16. */
int jobspec_urgency_from_desc (const job_desc_msg_t *desc);
int jobspec_urgency_from_record (const job_record_t *job);

/* The fields a job_modify request changes, as dotted jobspec keys
 * (e.g. {"attributes.system.duration": 3600.0}). New reference. */
json_t *jobspec_updates_from_desc (const job_desc_msg_t *desc);

/* Apply jobspec updates (dotted keys -> values) to a job_desc. Returns 0,
 * or -1 with *errmsg (xmalloc'd) naming the first key that has no Slurm
 * equivalent or a value of the wrong type; desc is then left unchanged. */
int jobspec_apply_updates (job_desc_msg_t *desc, json_t *updates,
                           char **errmsg);

#endif
