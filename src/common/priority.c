/* Asking the plugins for priorities (priority.h). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <jansson.h>
#include <flux/core.h>
#include <flux/jobtap.h>

#include "dispatch.h"
#include "event.h"
#include "host.h"
#include "job.h"
#include "jtplugin.h"
#include "log.h"
#include "priority.h"
#include "priority_args.h"
#include "runtime.h"

void get_priority (struct job *job)
{
    struct runtime *rt = job->rt;
    flux_plugin_arg_t *args;
    json_int_t priority = JOBTAP_PRIORITY_UNAVAIL;
    int rc;

    int handlers;
    struct jt_plugin *builtin = default_priority (rt, "job.priority.get",
                                                  &handlers);

    if (builtin && handlers == 1) {
        if (job->urgency != job->priority)
            reprioritize_one (job, job->urgency);
        return;
    }
    if (handlers == 0
        || !(args = rt->in_pass ? pass_priority_args (job, builtin)
                                : priority_args (job, NULL, builtin)))
        return;
    rc = stack_call_skip (job, "job.priority.get", args, builtin);
    if (rc == 0)
        goto out;
    if (rc < 0) {
        /* in a pass, the plugin's summary says it (pass_report) */
        runtime_log (rt->in_pass ? LOG_DEBUG : LOG_ERR,
                     "jobtap: job %ju: job.priority.get: callback failed",
                     (uintmax_t)job->id);
        goto out;
    }
    if (flux_plugin_arg_unpack (args,
                                FLUX_PLUGIN_ARG_OUT,
                                "{s?I}",
                                "priority", &priority) < 0) {
        runtime_log (LOG_ERR,
                     "jobtap: job %ju: job.priority.get: %s",
                     (uintmax_t)job->id,
                     flux_plugin_arg_strerror (args));
        goto out;
    }
    if (priority == JOBTAP_PRIORITY_UNAVAIL) {
        if (job->state == FLUX_JOB_STATE_SCHED)
            runtime_log (LOG_ERR,
                         "jobtap: job %ju: BUG: plugin didn't return priority",
                         (uintmax_t)job->id);
        goto out;
    }
    if (priority_applies (job, "job.priority.get", priority)
        && priority != job->priority)
        reprioritize_one (job, priority);
out:
    job_args_done (job->rt, args);
}

/* One line per plugin that failed in the pass just ended. */
static void pass_report (struct runtime *rt, int asked)
{
    for (struct jt_plugin *jt = rt->plugins; jt; jt = jt->next) {
        struct pass_count *c = &jt->pass;
        if (c->failures == 0)
            continue;
        char skipped[160] = "";
        if (c->skipped > 0)
            snprintf (skipped, sizeof (skipped),
                      "; not asked for the other %d after %d failures (they "
                      "keep their priority, or wait in PRIORITY)",
                      c->skipped, PASS_SKIP_FAILURES);
        runtime_log (LOG_ERR,
                     "jobtap: %s: job.priority.get failed for %d of %d jobs "
                     "in this pass (the first: job %ju)%s; %d more log lines "
                     "at debug level (SlurmctldDebug=debug shows them)",
                     jt->list_name, c->failures, asked,
                     (uintmax_t)c->first_failed, skipped, c->quiet_lines);
    }
}

/* Jobs asked between two chances for other threads to take the lock (a
 * host's pass over 10k jobs must not hold up submissions for its whole
 * length). */
#define PASS_SLICE 64

/* The jobs a pass asks. */
enum pass_jobs {
    PASS_PRIORITY_AND_SCHED,
    PASS_SCHED,
};

/* which: the jobs asked; returns how many, or -1. yielding: let other
 * threads take the runtime lock every PASS_SLICE jobs. Only the host's
 * own periodic pass may: a pass started by a load or a reconfigure runs
 * in the middle of it, and a submission let in there would see the
 * plugin stack half built (only the builtins). */
static int pass (struct runtime *rt, enum pass_jobs which, bool yielding)
{
    int n, asked = 0;
    bool outer = !rt->in_pass; /* a plugin may start one from a callback */
    struct job **v = table_snapshot (rt, &n, false);
    if (!v)
        return -1;
    if (outer) {
        rt->in_pass = true;
        for (struct jt_plugin *jt = rt->plugins; jt; jt = jt->next)
            memset (&jt->pass, 0, sizeof (jt->pass));
    }
    for (int i = 0; i < n; i++) {
        if ((v[i]->state == FLUX_JOB_STATE_PRIORITY
             && which == PASS_PRIORITY_AND_SCHED)
            || v[i]->state == FLUX_JOB_STATE_SCHED) {
            get_priority (v[i]);
            if (++asked % PASS_SLICE == 0 && outer && yielding) {
                /* the pass's counts apply to its own calls only */
                rt->in_pass = false;
                (void)runtime_yield (); /* the jobs are held (snapshot) */
                rt->in_pass = true;
            }
        }
    }
    snapshot_free (v, n);
    if (outer) {
        pass_args_free (rt);
        rt->in_pass = false;
        pass_report (rt, asked);
    }
    return asked;
}

int reprioritize_all (struct runtime *rt)
{
    return pass (rt, PASS_PRIORITY_AND_SCHED, false) < 0 ? -1 : 0;
}

int reprioritize_scheduled (struct runtime *rt, bool yielding)
{
    return pass (rt, PASS_SCHED, yielding);
}
