/* agent: the adapter's own thread. It is the only place that takes
 * slurmctld locks: in each pass it takes the job write lock (with conf,
 * node, partition and federation locks as slurmctld's own job updates do)
 * and, holding it, discovers and binds new jobs (bind.h), applies queued
 * actions (actions.h), sweeps the lifecycle of known jobs and
 * reprioritizes; then, outside slurmctld's locks, compacts the runtime.
 *
 * Lock order: slurmctld locks, then (inside the runtime calls) the
 * runtime's mutex, then the leaf locks of the queue and conf. The queue's
 * lock is never held while slurmctld locks are being taken.
 *
 * Callers: the entry points (lifecycle.c) start and stop it, with no
 * slurmctld lock held (init/fini). */
#ifndef SLURM_JOBTAP_ADAPTER_AGENT_H
#define SLURM_JOBTAP_ADAPTER_AGENT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

struct adapter_ctx;

struct agent {
    pthread_t thread;
    bool started;
    /* set by a (re)load of jobtap.conf: the next pass names the [queues]
     * that are no partition of this cluster */
    atomic_bool check_queues;
};

/* 0, or -1 with errno set if the thread cannot be created. */
int agent_start (struct adapter_ctx *ctx);

/* After jobtap.conf was (re)loaded: have the next pass (which holds the
 * partition read lock) log each [queues] entry that names no partition. */
void agent_check_queues (struct adapter_ctx *ctx);

/* Stop the thread and wait for it; a no-op if it is not running. */
void agent_stop (struct adapter_ctx *ctx);

#endif
