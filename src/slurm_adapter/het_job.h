/* het_job: a heterogeneous job (sbatch ... : ..., salloc/srun with
 * components) is one jobtap job, as a Flux job with several resource sets
 * is one job. Its id is the leader's (component 0's, Slurm's het_job_id);
 * what jobtap decides for it (hold, release, priority, cancel) is done to
 * every component's record, and its lifecycle is the leader's (job.new in
 * the leader's site_factor_p_set, run at the leader's prolog, cleanup at
 * its epilog). The other components each pass job.create and job.validate
 * in job_submit, then leave their provisional job: their records map to
 * the leader's id (array_record.h).
 *
 * Slurm sets het_job_id and het_job_offset only after job_allocate
 * returns, so a component being created is known by its submission mark
 * (mark.h) and the leader bound just before it in the same job write lock
 * (the context's het_leader_token and het_leader_id, bind.c).
 *
 * Locks: the slurmctld job write lock, held by every caller. */
#ifndef SLURM_JOBTAP_ADAPTER_HET_JOB_H
#define SLURM_JOBTAP_ADAPTER_HET_JOB_H

#include <stdbool.h>
#include <stdint.h>

#include "src/slurmctld/slurmctld.h"


/* A hetjob's component other than its leader, once Slurm made it one. */
static inline bool het_job_is_component (const job_record_t *job)
{
    return job->het_job_id != 0 && job->het_job_id != NO_VAL
           && job->het_job_offset != 0 && job->het_job_offset != NO_VAL;
}

/* In job_submit, where Slurm sets het_job_offset in the request (NO_VAL
 * for any other job): the leader's, and another component's. */
static inline bool het_job_desc_is_leader (const job_desc_msg_t *desc)
{
    return desc->het_job_offset == 0;
}

static inline bool het_job_desc_is_component (const job_desc_msg_t *desc)
{
    return desc->het_job_offset != NO_VAL && desc->het_job_offset != 0;
}

/* Call fn for each record of the job: every component of a hetjob whose
 * leader this is (the leader first), else the job alone. */
void het_job_each (job_record_t *job,
                   void (*fn) (job_record_t *job, void *arg),
                   void *arg);

#endif
