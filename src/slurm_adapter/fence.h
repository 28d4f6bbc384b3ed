/* fence: keeps a new job out of Slurm's reach between the moment job.new,
 * run inside job_allocate (site_factor_p_set), decided to hold it and the
 * agent's next pass, which applies the hold. A hold made there would not
 * stick: slurmctld overwrites the priority right after site_factor_p_set
 * returns, then may start the job in the same RPC, or its schedulers may
 * once the RPC lets the job write lock go.
 *
 * Two levers, both put back by fence_lift as the agent applies the queued
 * hold (or cancel):
 * - a deadline of NO_VAL, which job_allocate reads as "only test the job
 *   against the nodes" (Slurm's own node-configuration test still runs,
 *   and Slurm's refusal reaches the user), but no other code reads as a
 *   deadline;
 * - an eligible time far in the future, which both of Slurm's schedulers
 *   honour.
 * A fence Slurm saved before a kill is found by fence_clear_leftover.
 *
 * Locks: the slurmctld job write lock, held by every caller (the hook and
 * the agent), guards the list: no lock of its own. */
#ifndef SLURM_JOBTAP_ADAPTER_FENCE_H
#define SLURM_JOBTAP_ADAPTER_FENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "src/slurmctld/slurmctld.h"

/* The eligible time a fenced job shows (2038-01-19T03:13:52Z). */
#define FENCE_BEGIN_TIME ((time_t)0x7ffffff0)

struct fence_entry {
    uint32_t id;
    time_t begin_time; /* the job's own, put back */
    time_t deadline;
};

struct fences {
    struct fence_entry *v; /* malloc'd */
    size_t n, size;
};

/* Fence the job (once; a second call does nothing). */
void fence_job (struct fences *f, job_record_t *job);

/* Whether the job is fenced: actions for it wait in the queue behind the
 * deferred one, so that they are applied in the order they were made. */
bool fence_has (const struct fences *f, uint32_t id);

/* Put the job's own values back (job: the record of id, or NULL when it
 * is gone) and forget its fence, if it has one. */
void fence_lift (struct fences *f, uint32_t id, job_record_t *job);

/* A fence Slurm saved (the process died before the agent lifted it):
 * clear it on a job seen after a restart. */
void fence_clear_leftover (job_record_t *job);

void fence_free (struct fences *f);

#endif
