/* Restore after a scheduler restart (jobtap_host_jobs_restore), and the
 * host's handle on the store that makes it lose nothing (jobtap_host_
 * store_*).  A job whose history the store kept is rebuilt from it (its
 * state, dependencies, flags, urgency, priority, perilog and jobspec
 * updates), as Flux replays a job's eventlog; a job it did not keep comes
 * back through submit and its states from the start.  Then, as flux-core's
 * restart does: dependency schemes are checked for jobs in NEW or DEPEND,
 * job.create and job.new go to each plugin in its load sort order, a job
 * in SCHED goes back to PRIORITY (flux-restart) for a new priority, and a
 * job past DEPEND is not given job.state.depend or job.state.run again.
 * A kept history may end part way through what one event set off (a
 * SIGKILL can cut the store's write short): a job it leaves in PRIORITY
 * is asked for its priority, as by a plugin's reprioritize-all.
 * A host API entry point; calls event.c, loader.c, priority.c, submit.c,
 * dispatch.c, job.c, state.c and store.c. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <flux/core.h>
#include <flux/jobtap.h>

#include "dispatch.h"
#include "event.h"
#include "host.h"
#include "host_error.h"
#include "job.h"
#include "jtplugin.h"
#include "log.h"
#include "loader.h"
#include "priority.h"
#include "runtime.h"
#include "spec.h"
#include "state.h"
#include "store.h"
#include "submit.h"

/* Jobs restored after a scheduler restart, with the state the scheduler
 * kept for each (the sort key of the load sort orders). */
struct restored {
    struct job *job;
    int state;
    bool kept;      /* rebuilt from the store's history */
    json_t *resend; /* jobspec values the scheduler may have lost */
};

/* The value at a dotted key of a jobspec, or NULL. */
static json_t *dotted_get (json_t *o, const char *key)
{
    char part[256];
    while (o && *key) {
        const char *dot = strchr (key, '.');
        size_t n = dot ? (size_t)(dot - key) : strlen (key);
        if (n >= sizeof (part))
            return NULL;
        memcpy (part, key, n);
        part[n] = '\0';
        o = json_object_get (o, part);
        key = dot ? dot + 1 : key + n;
    }
    return o;
}

static const char *entry_name (json_t *entry)
{
    const char *s = json_string_value (json_object_get (entry, "name"));
    return s ? s : "";
}

/* Seconds a kept submit entry may precede the scheduler's t_submit. */
#define KEPT_SUBMIT_SLACK 2.0

/* A job rebuilt from its kept eventlog: each entry applied to the job's
 * data by the state machine alone (no callbacks, nothing told to the
 * host), on the jobspec the scheduler kept.  *resend: the jobspec values
 * the history set that differ from the scheduler's (it may have lost an
 * update that jobtap kept).  NULL if the history is not this job's. */
static struct job *job_from_kept (struct runtime *rt,
                                  flux_jobid_t id,
                                  uint32_t userid,
                                  double t_submit,
                                  json_t *spec,
                                  json_t *log,
                                  json_t **resend)
{
    json_t *first = json_array_get (log, 0);
    json_t *ctx = json_object_get (first, "context");
    json_int_t kept_userid = -1;
    int urgency = FLUX_JOB_URGENCY_DEFAULT;
    double t_first = 0;
    json_t *base = NULL, *e;
    struct job *job;
    size_t i;

    if (strcmp (entry_name (first), "submit")
        || json_unpack (first, "{s:F}", "timestamp", &t_first) < 0
        || json_unpack (ctx, "{s:I s?i}", "userid", &kept_userid, "urgency",
                        &urgency) < 0
        || kept_userid != (json_int_t)userid) {
        runtime_log (LOG_WARNING,
                     "jobtap: job %ju: the kept history is not this job's "
                     "(user %jd, not %u): it starts anew",
                     (uintmax_t)id, (intmax_t)kept_userid, userid);
        return NULL;
    }
    /* A history submitted well before the scheduler's job was: a job it
     * lost, whose id a later one took before the history was dropped
     * (a restart cut short, e.g. 24.11's reconfigure under load). The
     * scheduler's t_submit is whole seconds, taken just after submit. */
    if (t_first < t_submit - KEPT_SUBMIT_SLACK) {
        runtime_log (LOG_WARNING,
                     "jobtap: job %ju: the kept history is not this job's "
                     "(submitted at %.3f, this job at %.0f): it starts anew",
                     (uintmax_t)id, t_first, t_submit);
        return NULL;
    }
    /* t_submit is the scheduler's, as job_new gave it: the submit
     * entry's timestamp is when jobtap_host_submit ran */
    if (!(job = job_create (rt, spec, userid, urgency, t_submit)))
        return NULL;
    job->id = id;
    table_insert (job);
    /* the scheduler's values of what the history updates, before it does */
    json_array_foreach (log, i, e) {
        const char *k;
        json_t *v;
        if (strcmp (entry_name (e), "jobspec-update"))
            continue;
        json_object_foreach (json_object_get (e, "context"), k, v) {
            json_t *cur = dotted_get (job_jobspec (job), k);
            if ((base || (base = json_object ()))
                && !json_object_get (base, k))
                json_object_set_new (base, k,
                                     cur ? json_deep_copy (cur) : json_null ());
        }
    }
    json_array_foreach (log, i, e) {
        const char *name = json_string_value (json_object_get (e, "name"));
        struct event ev = {0};
        if (i == 0 || !name)
            continue; /* submit made the job */
        ev.kind = known_event (name);
        ev.name = name;
        ev.context = json_object_get (e, "context");
        (void)json_unpack (e, "{s:F}", "timestamp", &ev.timestamp);
        if (ev.kind == EV_ANNOTATIONS)
            job_annotations_merge (job,
                                   json_object_get (ev.context, "annotations"));
        (void)event_job_update (job, &ev);
        json_decref (ev.entry);
    }
    /* the submit entry in the job's eventlog too, when kept */
    if (job->eventlog)
        json_array_insert (job->eventlog, 0, first);
    job->posted |= 1u << EV_SUBMIT;
    if (base) {
        const char *k;
        json_t *v;
        json_object_foreach (base, k, v) {
            json_t *now_v = dotted_get (job_jobspec (job), k);
            if (now_v && !json_equal (now_v, v)
                && (*resend || (*resend = json_object ())))
                json_object_set (*resend, k, now_v);
        }
        json_decref (base);
    }
    store_mark_kept (job);
    return job;
}

static int restored_cmp (const void *a, const void *b, int dir)
{
    const struct restored *x = a, *y = b;
    if (x->state != y->state)
        return x->state < y->state ? -dir : dir;
    return x->job->id < y->job->id ? -1 : x->job->id > y->job->id;
}

static int restored_cmp_state (const void *a, const void *b)
{
    return restored_cmp (a, b, 1);
}

static int restored_cmp_rstate (const void *a, const void *b)
{
    return restored_cmp (a, b, -1);
}

int jobtap_host_jobs_restore (json_t *jobs, jobtap_host_error_t *err)
{
    struct runtime *rt = host_runtime ();
    size_t n = json_array_size (jobs), k = 0, i;
    struct restored *v, *order;
    json_t *entry;

    if (!json_is_array (jobs)) {
        errprintf (err, "invalid argument");
        errno = EINVAL;
        return -1;
    }
    runtime_lock ();
    v = calloc (n ? n : 1, sizeof (*v));
    order = calloc (n ? n : 1, sizeof (*order));
    if (!v || !order) {
        errprintf (err, "out of memory");
        free (v);
        free (order);
        runtime_unlock ();
        return -1;
    }
    json_array_foreach (jobs, i, entry) {
        json_int_t id, userid;
        int urgency, state = FLUX_JOB_STATE_SCHED;
        double t_submit;
        json_t *spec, *ctx, *R = NULL, *log;
        struct job *job = NULL;
        if (json_unpack (entry, "{s:I s:I s:i s:F s:o s?i s?o}",
                         "id", &id, "userid", &userid, "urgency", &urgency,
                         "t_submit", &t_submit, "jobspec", &spec,
                         "state", &state, "R", &R) < 0
            || id <= 0 || ((uint64_t)id & JOBTAP_PROVISIONAL_ID_BIT)
            || urgency < 0 || urgency > 31 || table_find (rt, id)) {
            runtime_log (LOG_ERR,
                         "restore: skipping invalid or known job entry %zu",
                         i);
            continue;
        }
        if ((log = store_take_kept (rt, (flux_jobid_t)id))) {
            job = job_from_kept (rt, (flux_jobid_t)id, (uint32_t)userid,
                                 t_submit, spec, log, &v[k].resend);
            json_decref (log);
        }
        if (job) {
            v[k].kept = true;
            state = job->state;
        }
        else {
            if (!(job = job_create (rt, spec, userid, urgency, t_submit)))
                continue;
            job->id = id;
            table_insert (job);
            ctx = submit_context (userid, urgency, NULL);
            event_post_known (job, EV_SUBMIT, ctx);
            json_decref (ctx);
        }
        if (R && !job->R && job->state >= FLUX_JOB_STATE_SCHED)
            job->R = json_incref (R);
        v[k].job = job;
        v[k].state = state;
        job_incref (job);
        k++;
    }
    /* As on a Flux restart: dependency schemes are checked first for jobs
     * in NEW or DEPEND, and a missing one is an informational exception. */
    for (i = 0; i < k; i++) {
        jobtap_host_error_t derr;
        if (v[i].job->state > FLUX_JOB_STATE_DEPEND)
            continue;
        if (check_dependencies (v[i].job, &derr) < 0) {
            char note[600];
            snprintf (note, sizeof (note),
                      "%s (job may be stuck in DEPEND state)", derr.text);
            raise_exception_internal (v[i].job, "dependency", 4, note);
        }
    }
    /* Each plugin, in load order, gets job.create and job.new for every
     * restored job in its own load sort order (set_load_sort_order), as
     * when a plugin is loaded while jobs exist. */
    int np;
    struct jt_plugin **plugins = jt_snapshot (rt, &np);
    jt_hold_all (rt); /* a callback may remove a plugin of the snapshot */
    for (int j = 0; plugins && j < np; j++) {
        struct jt_plugin *jt = plugins[j];
        memcpy (order, v, k * sizeof (*v));
        sort_for_plugin (jt, order, k, sizeof (*order), restored_cmp_state,
                         restored_cmp_rstate);
        for (i = 0; i < k && is_loaded (rt, jt); i++) {
            stack_push (order[i].job);
            create_and_new_on (jt, order[i].job);
            stack_pop (rt);
        }
    }
    jt_release_all (rt);
    free (plugins);
    /* Then each job carries on from where it stands: a new one through
     * its states with the whole stack; a kept one in SCHED back to
     * PRIORITY for its priority, in PRIORITY asked for it (job.priority.get:
     * a priority the cut history lost, or still unavailable), in DEPEND
     * with no dependency left on to PRIORITY, in any other state as it is
     * (no second job.state.run). */
    for (i = 0; i < k; i++) {
        struct job *job = v[i].job;
        if (!v[i].kept || job->state == FLUX_JOB_STATE_NEW)
            event_post_known (job, EV_VALIDATE, NULL);
        else if (job->state == FLUX_JOB_STATE_SCHED) {
            job->priority = -1;
            event_post_known (job, EV_FLUX_RESTART, NULL);
        }
        else if (job->state == FLUX_JOB_STATE_PRIORITY)
            get_priority (job);
        else if (job->state == FLUX_JOB_STATE_DEPEND
                 && json_object_size (job->deps) == 0
                 && !posted_test (job, "depend"))
            event_post_known (job, EV_DEPEND, NULL);
        job_sync_host (job);
        if (v[i].resend && job->state < FLUX_JOB_STATE_RUN
            && rt->ops->jobspec_update)
            rt->ops->jobspec_update (job->id, v[i].resend, NULL, rt->ops_arg);
        json_decref (v[i].resend);
        job_spec_rest (job);
        job_decref (job);
    }
    free (v);
    free (order);
    runtime_unlock ();
    return (int)k;
}

/* --- The store ---------------------------------------------------------- */

int jobtap_host_store_open (const char *dir, jobtap_host_error_t *err)
{
    struct runtime *rt = host_runtime ();
    int rc;

    if (!dir) {
        errno = EINVAL;
        return errprintf (err, "invalid argument");
    }
    runtime_lock ();
    rc = store_open (rt, dir, err);
    runtime_unlock ();
    return rc;
}

ssize_t jobtap_host_store_flush (bool sync)
{
    return store_flush (host_runtime (), sync);
}

bool jobtap_host_store_kept (uint64_t id)
{
    runtime_lock ();
    bool kept = store_has_kept (host_runtime (), id);
    runtime_unlock ();
    return kept;
}

int jobtap_host_store_maintain (void)
{
    return store_maintain (host_runtime (), false);
}

int jobtap_host_store_drop_missing (bool (*exists) (uint64_t id, void *arg),
                                    void *arg)
{
    int n;
    runtime_lock ();
    n = store_drop_missing (host_runtime (), exists, arg);
    runtime_unlock ();
    return n;
}

int jobtap_host_store_drop_kept (void)
{
    struct runtime *rt = host_runtime ();
    int n;

    runtime_lock ();
    n = store_drop_kept (rt);
    runtime_unlock ();
    return n;
}
