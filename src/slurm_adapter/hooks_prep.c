/* The PrEp hooks (prep/jobtap): jobtap's job.state.run when Slurm has
 * allocated a job, job.state.cleanup when it ends, and the plugins'
 * prologs and epilogs holding the job's start or end meanwhile, as Flux's
 * job manager holds them.
 *
 *   prolog_slurmctld   bind the job if the agent has not yet, give it R
 *                      and job.state.run; if a plugin started a prolog,
 *                      Slurm's start waits (async) until perilog_done
 *   epilog_slurmctld   job.state.cleanup with Slurm's result; if a plugin
 *                      started an epilog, Slurm's completion waits; else
 *                      job.state.inactive at once
 *   perilog_done       (a host op, any thread) queue Slurm's callback for
 *                      the agent, which calls it without slurmctld locks
 *
 * A restart re-runs the prolog of jobs slurmctld kept in CONFIGURING
 * before the jobs are restored: those wait (async) for the agent, which
 * asks the restored job whether a prolog still holds it.
 *
 * A requeued job ends in jobtap like any other (cleanup, inactive); the
 * agent then forgets it and binds it anew, so it passes through job.new,
 * depend, priority and sched again, as a resubmitted Flux job would.
 *
 * Both hooks run with the job write lock held (slurm-hooks.md). */
#include <config.h>

#include <stdbool.h>
#include <stdlib.h>

#include "src/common/slurm_xlator.h"
#include "src/common/log.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

#pragma GCC visibility push(default)
#include "adapter.h"
#pragma GCC visibility pop

#include "actions.h"
#include "array_id.h"
#include "array_record.h"
#include "bind.h"
#include "ctx.h"
#include "hooks_prep.h"
#include "het_job.h"
#include "host.h"
#include "instance.h"
#include "keep.h"
#include "write_scope.h"
#include "queue.h"
#include "slurm_compat.h"

/* job.state.run for a bound job; true if a plugin's prolog now holds it. */
static bool run_job (job_record_t *job)
{
    bind_run (job);
    return jobtap_host_job_perilog_wait (array_record_id (job)) == 1;
}

int jobtap_slurm_prep_prolog (job_record_t *job, bool *async)
{
    struct write_scope scope = {.computing = NULL};

    if (het_job_is_component (job))
        return SLURM_SUCCESS; /* a hetjob runs at its leader's prolog */

    write_scope_enter (&scope);

    if (!JOBTAP_SLURMCTLD_STARTED ()) {
        /* A restart re-runs the prolog of jobs that were CONFIGURING, as
         * slurmctld starts: hold them until the agent has restored the
         * jobs and the plugins have said (A_PROLOG_RESTART). */
        queue_push (adapter_instance.queue, A_PROLOG_RESTART, job->job_id, 0,
                    NULL, 0);
        *async = true;
    }
    else if (bind_ensure (&adapter_instance, &scope, job)) {
        /* already RUN: slurmctld restarted (24.11 runs this once it is
         * up, after the jobs were restored) and re-runs the hook */
        bool again =
            jobtap_host_job_state (array_record_id (job)) == JOBTAP_STATE_RUN;
        if (run_job (job)) {
            *async = true;
            if (again)
                info ("jobtap: %pJ waits for a jobtap prolog again after the "
                      "restart", job);
            else
                debug ("jobtap: %pJ waits for a jobtap prolog", job);
        }
        keep_write (&adapter_instance);
    }
    write_scope_leave (&scope);
    return SLURM_SUCCESS;
}

int jobtap_slurm_prep_epilog (job_record_t *job, bool *async)
{
    struct write_scope scope = {.computing = NULL};
    uint64_t id = array_record_id (job);

    if (het_job_is_component (job))
        return SLURM_SUCCESS; /* a hetjob ends at its leader's epilog */
    write_scope_enter (&scope);

    if (JOBTAP_SLURMCTLD_STARTED () && array_known (id)) {
        bool requeued = job->job_state & JOB_REQUEUE;
        bind_end (job, requeued);
        if (jobtap_host_job_perilog_wait (id) == 1) {
            *async = true;
            debug ("jobtap: %pJ waits for a jobtap epilog", job);
        }
        else {
            jobtap_host_job_inactive (id);
            if (requeued)
                queue_push (adapter_instance.queue, A_REQUEUED, id, 0, NULL,
                            0);
        }
        keep_write (&adapter_instance);
    }
    write_scope_leave (&scope);
    return SLURM_SUCCESS;
}

/* Host op: Slurm's callbacks take slurmctld's locks, so the agent calls
 * them from outside its locked pass. */
void hooks_prep_perilog_done (uint64_t id,
                              bool epilog,
                              int status,
                              const char *note,
                              void *arg)
{
    struct adapter_ctx *ctx = arg;

    if (!array_id_is_slurm (id))
        return;
    queue_push (ctx->queue, epilog ? A_EPILOG_DONE : A_PROLOG_DONE, id,
                status, note, note ? strlen (note) + 1 : 0);
}

/* In the agent's locked pass: whether Slurm waits for the epilogs that
 * ended, and a failed prolog fails the job. Slurm
 * requeues a job whose prolog failed; jobtap's rule is Flux's (a prolog
 * exception ends the job), so the job is made not requeueable first, and
 * Slurm then kills it; its reason says why. */
void hooks_prep_locked (struct adapter_ctx *ctx,
                        struct write_scope *scope,
                        struct action *a)
{
    /* a restarted prolog names the record: jobtap may not know it yet */
    job_record_t *job = a->kind == A_PROLOG_RESTART
                            ? find_job_record ((uint32_t)a->id)
                            : array_record_of (a->id);
    uint64_t id = a->kind == A_PROLOG_RESTART && job ? array_record_id (job)
                                                     : a->id;

    a->slurm_id = job ? job->job_id : 0;
    if (a->kind == A_EPILOG_DONE) {
        /* Slurm waits for it in its epilog hook (async); else the job
         * ended with no epilog hook (cancelled while pending), and only
         * jobtap was waiting */
        a->priority = job && job->prep_epilog_cnt > 0;
        if (!a->priority)
            jobtap_host_job_inactive (a->id);
        return;
    }
    if (a->kind == A_REQUEUED) {
        bind_requeued (ctx, scope, a->id);
        return;
    }
    if (a->kind == A_PROLOG_RESTART) {
        /* restored as RUN (the replay gave job.state.run, where a plugin
         * may have started its prolog again), or still to run */
        bool wait = job && IS_JOB_CONFIGURING (job)
                    && bind_ensure (ctx, scope, job)
                    && (jobtap_host_job_state (id) == JOBTAP_STATE_SCHED
                            ? run_job (job)
                            : jobtap_host_job_perilog_wait (id) == 1);
        if (wait)
            info ("jobtap: %pJ waits for a jobtap prolog again after the "
                  "restart", job);
        else
            queue_push (ctx->queue, A_PROLOG_DONE, id, 0, NULL, 0);
        return;
    }
    if (a->kind != A_PROLOG_DONE || a->priority == 0 || !job
        || IS_JOB_FINISHED (job))
        return;
    if (job->details)
        job->details->requeue = 0;
    xfree (job->state_desc);
    job->state_desc = xstrdup_printf (HOLD_PREFIX "%s",
                                      a->text ? a->text : "prolog failed");
    job->state_reason = FAIL_LAUNCH;
    info ("jobtap: %pJ: %s", job, job->state_desc);
}

/* After the agent's locked pass, with no slurmctld lock held: Slurm's
 * callbacks, which take the locks themselves. */
void hooks_prep_unlocked (struct adapter_ctx *ctx, const struct action *a)
{
    switch (a->kind) {
    case A_PROLOG_DONE:
        /* a wait(2) status: exit code 1 fails the prolog */
        if (a->slurm_id)
            prep_prolog_slurmctld_callback (a->priority ? 1 << 8 : 0,
                                            a->slurm_id, false);
        break;
    case A_EPILOG_DONE:
        if (!a->priority)
            break;
        if (a->slurm_id)
            prep_epilog_slurmctld_callback (0, a->slurm_id, false);
        jobtap_host_job_inactive (a->id);
        queue_push (ctx->queue, A_REQUEUED, a->id, 0, NULL, 0);
        break;
    default:
        break;
    }
}
