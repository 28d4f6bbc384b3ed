/* array_dirty: a set of array records, by job id, for the agent to look
 * at again in its pass (array_sync.h): those whose pending tasks may no
 * longer agree (a decision for one of them changed), and those whose
 * tasks are not all jobs yet.
 *
 * Locks: the slurmctld job write lock, held by every caller. */
#ifndef SLURM_JOBTAP_ADAPTER_ARRAY_DIRTY_H
#define SLURM_JOBTAP_ADAPTER_ARRAY_DIRTY_H

#include <stddef.h>
#include <stdint.h>

struct array_dirty {
    uint32_t *ids; /* malloc'd */
    size_t n, size;
};

/* Add the record's id (once). Returns -1 out of memory. */
int array_dirty_mark (struct array_dirty *d, uint32_t id);

/* Hand the set over (to be freed by the caller) and start a new one. */
struct array_dirty array_dirty_take (struct array_dirty *d);

void array_dirty_free (struct array_dirty *d);

#endif
