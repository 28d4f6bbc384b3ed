/* The adapter's state: one struct, handed down to every module that needs
 * more than one part of it (the runtime's callbacks get it as their arg).
 * Each member belongs to the module named beside it; other modules use it
 * through that module's functions. The one instance is reached only by
 * the Slurm entry points (instance.h). */
#ifndef SLURM_JOBTAP_ADAPTER_CTX_H
#define SLURM_JOBTAP_ADAPTER_CTX_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "agent.h"
#include "array_dirty.h"
#include "conf.h"
#include "control.h"
#include "fence.h"
#include "het_job.h"
#include "keep.h"
#include "queue.h"

struct adapter_ctx {
    pthread_mutex_t lock; /* adapter.c: refcount (leaf lock) */
    int refcount;         /* adapter.c: plugins sharing this copy */
    uint64_t boot;        /* adapter.c sets it at init: this process's marks */
    struct conf conf;     /* conf.c */
    struct queue queue;   /* queue.c */
    struct agent agent;   /* agent.c */
    struct control control; /* control.c: the control socket */
    struct keep keep;     /* keep.c: the jobs' kept state */
    struct fences fences; /* fence.c: new jobs kept from starting until the
                           * agent applies jobtap's hold */
    struct array_dirty array_dirty; /* array_sync.c: array records whose
                                     * tasks may no longer agree */
    struct array_dirty array_unbound; /* array_sync.c: array records whose
                                       * tasks are not all jobs yet */
    bool new_in_allocate; /* adapter.c sets it at init: job.new runs in
                           * site_factor_p_set, inside the submission;
                           * false: jobs are created held (the fallback) */
    struct het_job_creating het_creating; /* bind.c, under the job write
                                           * lock: the leader just bound */
    uint32_t scan_next;   /* bind.c, under the job write lock (the agent, or
                           * the first bind in a submission): the first job
                           * id not looked at yet; 0 = scan every job */
};

#define ADAPTER_CTX_INIT                                                       \
    {                                                                          \
        .lock = PTHREAD_MUTEX_INITIALIZER, .conf = CONF_INIT,                  \
        .queue = QUEUE_INIT,                                                   \
    }

#endif
