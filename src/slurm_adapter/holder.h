/* holder: who holds a pending Slurm job: the shim (priority 0, a reason
 * starting with HOLD_PREFIX), its user, an operator, or nobody. Header
 * only: jobspec.c (whose unit test links none of the adapter's actions)
 * and the modules that hold and release jobs read it.
 *
 * Locks: the job read lock, as for any job record. */
#ifndef SLURM_JOBTAP_ADAPTER_HOLDER_H
#define SLURM_JOBTAP_ADAPTER_HOLDER_H

#include <stdbool.h>
#include <string.h>

#include "src/slurmctld/slurmctld.h"

#include "urgency_hold.h"

/* Every hold the shim owns shows this prefix in the job's reason. */
#define HOLD_PREFIX "jobtap: "

/* Whether the job is held by the shim (priority 0, HOLD_PREFIX reason). */
static inline bool holder_is_shim (const job_record_t *job)
{
    return job->priority == 0 && job->state_desc
           && !strncmp (job->state_desc, HOLD_PREFIX, strlen (HOLD_PREFIX));
}

/* Who holds the job now (urgency_hold.h): the shim, its user, an
 * operator, or nobody. */
static inline enum held_by holder_of (const job_record_t *job)
{
    if (job->priority != 0)
        return HELD_BY_NOBODY;
    if (holder_is_shim (job))
        return HELD_BY_JOBTAP;
    if (job->state_reason == WAIT_HELD_USER)
        return HELD_BY_USER;
    if (job->state_reason == WAIT_HELD)
        return HELD_BY_OPERATOR;
    return HELD_BY_NOBODY;
}

#endif
