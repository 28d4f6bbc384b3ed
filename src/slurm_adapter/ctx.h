/* The adapter's state: one struct, handed down to every module that needs
 * more than one part of it (the runtime's callbacks get it as their arg).
 * Each member belongs to the module named beside it; other modules use it
 * through that module's functions. The modules' state is behind pointers
 * to their types, so this header includes none of theirs. The one
 * instance (defined in lifecycle.c) is reached only by the Slurm entry
 * points (instance.h). */
#ifndef SLURM_JOBTAP_ADAPTER_CTX_H
#define SLURM_JOBTAP_ADAPTER_CTX_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "mark.h"

struct agent;
struct apply_memo;
struct array_dirty;
struct conf;
struct control;
struct fences;
struct keep;
struct queue;

struct adapter_ctx {
    pthread_mutex_t lock; /* lifecycle.c: refcount (leaf lock) */
    int refcount;         /* lifecycle.c: plugins sharing this copy */
    struct mark_boot boot; /* lifecycle.c sets it at init: this process's marks */
    struct conf *conf;    /* conf.c */
    struct queue *queue;  /* queue.c */
    struct agent *agent;  /* agent.c */
    struct control *control; /* control.c: the control socket */
    struct keep *keep;    /* keep.c: the jobs' kept state */
    struct apply_memo *apply_memo; /* jobspec_apply.c: the last submission's
                                    * updates, checked */
    struct fences *fences; /* fence.c: new jobs kept from starting until the
                            * agent applies jobtap's hold */
    struct array_dirty *array_dirty; /* array_sync.c: array records whose
                                      * tasks may no longer agree */
    struct array_dirty *array_unbound; /* array_sync.c: array records whose
                                        * tasks are not all jobs yet */
    bool new_in_allocate; /* lifecycle.c sets it at init: job.new runs in
                           * site_factor_p_set, inside the submission;
                           * false: jobs are created held (the fallback) */
    uint64_t het_leader_token; /* bind.c, under the job write lock: the */
    uint32_t het_leader_id;    /* hetjob leader just bound (het_job.h) */
    uint32_t scan_next;   /* bind.c, under the job write lock (the agent, or
                           * a submission's bind): the first job id not
                           * looked at or bound yet; 0 = scan every job */
};

#endif
