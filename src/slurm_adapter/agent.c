/* The agent thread (agent.h). */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "src/common/slurm_xlator.h"
#include "src/common/log.h"
#include "src/slurmctld/locks.h"
#include "src/slurmctld/slurmctld.h"

#include "actions.h"
#include "array_record.h"
#include "array_sync.h"
#include "agent.h"
#include "bind.h"
#include "conf.h"
#include "control.h"
#include "ctx.h"
#include "hooks_prep.h"
#include "host.h"
#include "keep.h"
#include "queue.h"
#include "slurm_compat.h"
#include "write_scope.h"

/* The safety net for what Slurm reports no other way (the PrEp hooks give
 * run and cleanup as they happen, hooks_prep.c): jobs that started or
 * ended unseen (no prep/jobtap, or cancelled while pending), and records
 * Slurm purged (MinJobAge), which Flux calls job.inactive-remove. A job
 * that ran passes through RUN first, with its R if Slurm still has it.
 * A pending job jobtap holds has its reason's Slurm dependency part
 * brought up to date. */
static void sweep_jobs (void)
{
    size_t n = 0;
    uint64_t *ids = jobtap_host_job_ids (&n);

    for (size_t i = 0; i < n; i++) {
        uint64_t id = ids[i];
        job_record_t *job = array_record_of (id);
        int state = jobtap_host_job_state (id);
        if (!job) {
            bind_finish (id, NULL);
            if (jobtap_host_job_state (id) == JOBTAP_STATE_INACTIVE)
                (void)jobtap_host_job_purge (id);
        }
        else if (state >= JOBTAP_STATE_CLEANUP) {
            /* done, or waiting for its epilogs */
        }
        else if (IS_JOB_FINISHED (job)
                 || (IS_JOB_COMPLETING (job) && !IS_JOB_PENDING (job))) {
            /* (pending and completing: requeued, its processes still
             * ending; the epilog hook already gave it its new start) */
            if (job->nodes && job->nodes[0] && state == JOBTAP_STATE_SCHED)
                bind_run (job);
            bind_finish (id, job);
        }
        else if ((IS_JOB_RUNNING (job) || IS_JOB_SUSPENDED (job))
                 && state < JOBTAP_STATE_RUN)
            bind_run (job);
        else if (IS_JOB_PENDING (job))
            actions_hold_refresh (job); /* its Slurm dependency may be met */
    }
    free (ids);
}

/* slurmctld has finished starting, after the priority plugin's init()
 * (slurm_compat.h says how each release shows it).  Before that the agent
 * must not act: setting a priority (set_job_prio) would load
 * priority/multifactor, whose init() takes the job write lock the agent
 * holds, and slurmctld dies with
 * "lock_slurmctld: pthread_rwlock_wrlock(): Resource deadlock avoided".
 * No submission can arrive before then either. */
static bool slurmctld_ready (void)
{
    return JOBTAP_SLURMCTLD_STARTED ();
}

static double clock_ms (clockid_t clock)
{
    struct timespec ts;
    clock_gettime (clock, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The pass over every pending job, its length logged for admins sizing
 * reprioritize-period: wall time, and the agent's CPU time in it (on a
 * busy machine the two part). */
static void reprioritize_timed (void)
{
    double t0 = clock_ms (CLOCK_MONOTONIC);
    double c0 = clock_ms (CLOCK_THREAD_CPUTIME_ID);
    int asked = jobtap_host_reprioritize_all_yielding ();
    if (asked > 0)
        debug ("jobtap: reprioritize pass: %d jobs asked in %.1f ms (%.1f ms "
               "of CPU)",
               asked, clock_ms (CLOCK_MONOTONIC) - t0,
               clock_ms (CLOCK_THREAD_CPUTIME_ID) - c0);
}

/* Flux's queues are Slurm's partitions, by name: a queue that names none
 * has no jobs, so its limits and defaults never apply.  Needs the
 * partition read lock. */
static void log_queues_without_partition (void)
{
    json_t *names = jobtap_host_policy_queues ();
    size_t i;
    json_t *v;

    json_array_foreach (names, i, v)
    {
        const char *name = json_string_value (v);
        if (name && !find_part_record ((char *)name))
            error ("jobtap: jobtap.conf's [queues.%s] is no partition of this "
                   "cluster: its limits and defaults apply to no job",
                   name);
    }
    json_decref (names);
}

void agent_check_queues (struct adapter_ctx *ctx)
{
    atomic_store (&ctx->agent->check_queues, true);
    queue_wake (ctx->queue, false, false);
}

static void *agent_main (void *arg)
{
    struct adapter_ctx *ctx = arg;
    /* by name: 26.05 added a lock (select_node) that the agent does not take */
    slurmctld_lock_t locks = {.conf = READ_LOCK, .job = WRITE_LOCK,
                              .node = WRITE_LOCK, .part = READ_LOCK,
                              .fed = READ_LOCK};
    time_t last_sweep = time (NULL);
    /* slurmctld creates a job after job_submit returns, in the same RPC,
     * so after a submission look again every 5 ms until it shows up. */
    int quick_passes = 0;
    bool in_control = false;

    for (;;) {
        struct queue_batch b;
        time_t now;

        if (!slurmctld_ready ()) {
            if (in_control && !slurmctld_primary) {
                /* a backup back in standby (or exiting) */
                in_control = false;
                control_defer (ctx);
            }
            struct timespec pause = {0, 50 * 1000 * 1000};
            nanosleep (&pause, NULL);
            if (queue_stopping (ctx->queue))
                break;
            continue;
        }
        in_control = true;
        control_start_deferred (ctx); /* a backup that took control */
        if (!queue_wait (ctx->queue, &quick_passes, &b))
            break;

        /* slurmctld is going down: leave its jobs alone from now on. */
        if (slurmctld_config.shutdown_time) {
            queue_batch_free (&b);
            continue;
        }
        now = time (NULL);
        int period = conf_reprioritize_period (ctx->conf);
        /* The lifecycle sweep runs even with reprioritizing turned off,
         * or the runtime would never forget finished jobs. */
        bool periodic = now - last_sweep >= (period > 0 ? period : 30);

        lock_slurmctld (locks);
        /* Again under the locks: control may have gone while this pass
         * waited for them. A backup the primary asked for control back is
         * in standby now (its shutdown time cleared): its job list is
         * stale, and the kept state the primary's. Or the shutdown began
         * (24.11's reconfigure, under load): a pass now would call into
         * plugins slurmctld is unloading, whose fini waits for this thread
         * (agent_stop), a deadlock. */
        if (!slurmctld_ready () || slurmctld_config.shutdown_time) {
            unlock_slurmctld (locks);
            queue_batch_free (&b);
            continue;
        }
        if (atomic_exchange (&ctx->agent->check_queues, false))
            log_queues_without_partition ();
        struct write_scope scope = {.computing = NULL, .agent_pass = true};
        write_scope_enter (&scope);
        array_sync_continue (ctx);
        int found = bind_discover (ctx, &scope);
        for (size_t i = 0; i < b.n; i++) {
            if (b.actions[i].kind >= A_PROLOG_RESTART)
                hooks_prep_locked (ctx, &scope, &b.actions[i]);
            else
                actions_apply (ctx, &scope, &b.actions[i]);
        }
        if (periodic) {
            sweep_jobs ();
            last_sweep = now;
        }
        /* before the lock goes: Slurm starts only tasks no plugin holds */
        array_sync_dirty (ctx, &scope);
        write_scope_leave (&scope);
        /* before Slurm may save what this pass changed */
        keep_write (ctx);
        unlock_slurmctld (locks);
        keep_settle (ctx);
        for (size_t i = 0; i < b.n; i++)
            hooks_prep_unlocked (ctx, &b.actions[i]);
        /* Outside Slurm's locks, letting submissions in every few jobs
         * (a pass over every pending job may be long): the priorities it
         * sets are queued and applied by the next pass, at once. */
        if ((periodic && period > 0) || b.reprioritize)
            reprioritize_timed ();
        jobtap_host_compact ();

        /* Quick passes while accepted submissions wait to be bound (each
         * pass takes the write locks). */
        quick_passes =
            queue_polls_after_pass (ctx->queue, b.discover, quick_passes);
        if (b.n > 0 || found > 0 || scope.applied > 0)
            queue_job_scheduler ();
        if (array_sync_unbound_left (ctx)) /* the next chunk of an array */
            queue_wake (ctx->queue, true, false);
        queue_batch_free (&b);
    }
    return NULL;
}

int agent_start (struct adapter_ctx *ctx)
{
    int e;

    queue_set_stop (ctx->queue, false);
    if ((e = pthread_create (&ctx->agent->thread, NULL, agent_main, ctx))) {
        errno = e;
        return -1;
    }
    ctx->agent->started = true;
    return 0;
}

void agent_stop (struct adapter_ctx *ctx)
{
    if (!ctx->agent->started)
        return;
    queue_set_stop (ctx->queue, true);
    pthread_join (ctx->agent->thread, NULL);
    ctx->agent->started = false;
}
