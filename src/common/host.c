/* The host API (host.h): the one runtime of the process, its start and
 * end, and what the scheduler tells it of jobs (run, finish, inactive,
 * purge, urgency) and asks of it (state, priority, info, plugins).
 * Submission, restore, update, config and service calls have modules of
 * their own (submit.c, restore.c, update.c, jobtap_conf.c,
 * host_service.c).  Each entry point takes the runtime lock; a caller
 * holding slurmctld locks took them first. */
#include <dlfcn.h>
#include <errno.h>
#include <libgen.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include <flux/core.h>
#include <flux/jobtap.h>

#include "compact.h"
#include "host_error.h"
#include "jobtap_conf.h"
#include "dispatch.h"
#include "event.h"
#include "flux_handle.h"
#include "host.h"
#include "job.h"
#include "jsonpool.h"
#include "jtplugin.h"
#include "log.h"
#include "loader.h"
#include "priority.h"
#include "reactor.h"
#include "rsummary.h"
#include "runtime.h"
#include "spec.h"
#include "state.h"
#include "store.h"
#include "update_memo.h"

void jobtap_host_compact (void)
{
    spec_compact_resting (host_runtime ());
}

/* Slurm opens its plugins, and so this library they link, with
 * RTLD_LOCAL: a jobtap plugin built as Flux builds its -module plugins,
 * without linking us, would find no flux_* symbols at its dlopen.  Put
 * this library and what it links (jansson) in the global scope. */
static void symbols_global (void)
{
    Dl_info info;
    void *self;

    if (dladdr ((void *)(uintptr_t)jobtap_host_init, &info) && info.dli_fname
        && (self = dlopen (info.dli_fname,
                           RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL)))
        dlclose (self); /* the scope stays global; this only drops our ref */
}

/* The process's one runtime, its modules' state and the scheduler's
 * actions it calls (none until jobtap_host_init copies the host's): the
 * host API is process-wide, as Slurm's plugin API is.  Zeroed state is
 * empty state, so the runtime is whole before init and after fini. */
static struct jobtap_host_ops host_ops;
static struct job_table jobs;
static struct dispatch dispatch;
static struct compact_memo compact_memo;
static struct update_memo update_memo;
/* The runtime before init, and what fini puts back. */
#define RUNTIME_AT_REST                                                        \
    {                                                                          \
        .ops = &host_ops, .jobs = &jobs, .dispatch = &dispatch,                \
        .compact_memo = &compact_memo, .update_memo = &update_memo,            \
    }
static struct runtime instance = RUNTIME_AT_REST;

struct runtime *host_runtime (void)
{
    return &instance;
}

int jobtap_host_init (const struct jobtap_host_ops *ops, void *arg)
{
    struct runtime *rt = host_runtime ();
    runtime_lock ();
    if (rt->refcount == 0) {
        if (!(rt->h = flux_handle_create (rt))) {
            runtime_unlock ();
            errno = ENOMEM;
            return -1;
        }
        symbols_global ();
    }
    if (rt->refcount++ == 0 || (!host_ops.log && !host_ops.hold && ops)) {
        if (ops) {
            host_ops = *ops;
            rt->ops_arg = arg;
            runtime_log_sink (ops->log, arg);
            conf_settings_apply (rt); /* the host's keep_eventlog */
        }
        if (!rt->inactive_order)
            rt->inactive_order = json_array ();
    }
    runtime_unlock ();
    return 0;
}

void jobtap_host_fini (void)
{
    struct runtime *rt = host_runtime ();
    flux_reactor_t *reactor = NULL;
    runtime_lock ();
    if (rt->refcount > 0 && --rt->refcount == 0) {
        loader_unload_all (rt);
        jobs_free_all (rt);
        store_close (rt); /* what was recorded is written */
        reactor = reactor_detach (rt); /* after the destructors above */
        jobtap_json_pool_log_stats ();
        conf_release (rt);
        json_decref (rt->inactive_order);
        compact_memo_clear (rt->compact_memo);
        update_memo_clear (rt->update_memo);
        spec_memo_clear (rt);
        dispatch_clear (rt);
        flux_handle_destroy (rt->h);
        memset (&host_ops, 0, sizeof (host_ops));
        *rt = (struct runtime)RUNTIME_AT_REST;
        runtime_log_sink (NULL, NULL);
    }
    runtime_unlock ();
    reactor_destroy (reactor); /* its thread needs the lock to finish */
}

int jobtap_host_plugin_load (const char *name,
                             json_t *conf,
                             jobtap_host_error_t *err)
{
    struct runtime *rt = host_runtime ();
    int rc = 0;

    if (!name) {
        errno = EINVAL;
        return errprintf (err, "no plugin name");
    }
    runtime_lock ();
    const char *dir = NULL;
    char *tmp = rt->config_path ? strdup (rt->config_path) : NULL;
    if (tmp)
        dir = dirname (tmp);
    if (!loader_load (rt, name, conf, dir, err))
        rc = -1;
    free (tmp);
    runtime_unlock ();
    return rc;
}

int jobtap_host_plugin_remove (const char *name, jobtap_host_error_t *err)
{
    jobtap_host_error_t e;
    int rc;

    if (!name) {
        errno = EINVAL;
        return errprintf (err, "no plugin name");
    }
    runtime_lock ();
    if ((rc = loader_remove (host_runtime (), name, &e)) < 0)
        errprintf (err, "%s: %s", name, e.text);
    runtime_unlock ();
    return rc;
}

json_t *jobtap_host_plugin_list (bool all)
{
    struct runtime *rt = host_runtime ();
    json_t *a = json_array ();
    runtime_lock ();
    for (struct jt_plugin *jt = rt->plugins; a && jt; jt = jt->next)
        if (all || jt->list_name[0] != '.')
            json_array_append_new (a, json_string (jt->list_name));
    runtime_unlock ();
    return a;
}

json_t *jobtap_host_plugin_query (const char *name, jobtap_host_error_t *err)
{
    struct jt_plugin *jt;
    flux_plugin_arg_t *args = NULL;
    json_t *o = NULL;
    char *s = NULL;

    runtime_lock ();
    if (!name || !(jt = loader_find (host_runtime (), name))) {
        errprintf (err, "%s: plugin not found", name ? name : "(null)");
        errno = ENOENT;
        goto out;
    }
    if (!(args = flux_plugin_arg_create ())
        || flux_plugin_arg_pack (args,
                                 FLUX_PLUGIN_ARG_OUT,
                                 "{s:s s:s}",
                                 "name", jt->list_name,
                                 "path", jt->path ? jt->path : "builtin") < 0)
        goto out;
    if (jt_call (jt, "plugin.query", args) < 0) {
        errprintf (err, "plugin.query failed");
        errno = EINVAL;
        goto out;
    }
    if (flux_plugin_arg_get (args, FLUX_PLUGIN_ARG_OUT, &s) == 0)
        o = json_loads (s, JSON_DECODE_ANY, NULL);
out:
    free (s);
    flux_plugin_arg_destroy (args);
    runtime_unlock ();
    return o;
}

int jobtap_host_job_priority (uint64_t id, int64_t *priority)
{
    struct runtime *rt = host_runtime ();
    struct job *job;
    int rc = -1;

    runtime_lock ();
    if (!priority)
        errno = EINVAL;
    else if ((job = table_find_bound (rt, id))) {
        /* at rest in PRIORITY means no plugin has given a priority */
        *priority = job->state == FLUX_JOB_STATE_PRIORITY
                        ? JOBTAP_PRIORITY_UNAVAIL
                        : job->priority;
        rc = 0;
    }
    runtime_unlock ();
    return rc;
}

int jobtap_host_job_urgency_get (uint64_t id)
{
    struct job *job;
    int urgency = -1;

    runtime_lock ();
    if ((job = table_find_bound (host_runtime (), id)))
        urgency = job->urgency;
    runtime_unlock ();
    return urgency;
}

bool jobtap_host_priority_from_plugins (void)
{
    runtime_lock ();
    bool answer = plugins_give_priority (host_runtime ());
    runtime_unlock ();
    return answer;
}

int jobtap_host_job_event_posted (uint64_t id, const char *name)
{
    struct job *job;
    int rc = -1;

    runtime_lock ();
    if (!name)
        errno = EINVAL;
    else if ((job = table_find_bound (host_runtime (), id)))
        rc = posted_test (job, name) ? 1 : 0;
    runtime_unlock ();
    return rc;
}

/* The annotation Flux's schedulers give an allocation, just before its
 * alloc event: annotations.sched.resource_summary, R's one-line summary. */
static void sched_annotate (struct job *job)
{
    char *summary = job->R ? rsummary (job->R) : NULL;
    json_t *sched = summary ? json_object () : NULL;
    json_t *a = sched ? json_object () : NULL;

    /* built by hand: json_pack's format walk costs more than the rest */
    if (a && !json_object_set_new (sched, "resource_summary",
                                   json_string (summary))
        && !json_object_set (a, "sched", sched))
        annotations_post (job, a);
    json_decref (sched);
    json_decref (a);
    free (summary);
}

int jobtap_host_job_run (uint64_t id, json_t *R)
{
    struct runtime *rt = host_runtime ();
    struct job *job;
    int rc = -1;

    runtime_lock ();
    if (!(job = table_find_bound (rt, id)))
        goto out;
    if (job->state == FLUX_JOB_STATE_RUN) {
        rc = 0;
        goto out;
    }
    if (job->state != FLUX_JOB_STATE_SCHED) {
        errno = EINVAL;
        goto out;
    }
    if (R && !job->R)
        job->R = json_incref (R);
    job_incref (job);
    sched_annotate (job);
    rc = event_post_host (job, "alloc", NULL);
    /* the job starts now, unless a plugin's prolog holds it: then once
     * its prologs are done (perilog_settle), as Flux's start follows
     * prolog-finish */
    if (rc == 0 && job->state == FLUX_JOB_STATE_RUN
        && job->perilog_active == 0)
        rc = event_post_host (job, "start", NULL);
    job_decref (job);
out:
    runtime_unlock ();
    return rc;
}

static int finish_locked (struct job *job, int result, int status,
                          const char *note)
{
    json_t *ctx;
    int rc;

    if (job->state == FLUX_JOB_STATE_CLEANUP
        || job->state == FLUX_JOB_STATE_INACTIVE)
        return 0;
    if (job->state == FLUX_JOB_STATE_NEW) {
        errno = EINVAL;
        return -1;
    }
    if (job->state == FLUX_JOB_STATE_RUN
        && (result == JOBTAP_RESULT_COMPLETED
            || result == JOBTAP_RESULT_FAILED)) {
        if (result == JOBTAP_RESULT_FAILED && status == 0)
            status = 256;
        if (result == JOBTAP_RESULT_COMPLETED)
            status = 0;
        ctx = json_pack ("{s:i}", "status", status);
        rc = event_post_host (job, "finish", ctx);
    }
    else {
        const char *type = result == JOBTAP_RESULT_TIMEOUT ? "timeout"
                           : result == JOBTAP_RESULT_CANCELED ? "cancel"
                                                              : "exception";
        ctx = json_pack ("{s:s s:i s:s s:I}",
                         "type", type,
                         "severity", 0,
                         "note", note ? note : "",
                         "userid", (json_int_t)getuid ());
        rc = event_post_host (job, "exception", ctx);
    }
    json_decref (ctx);
    if (rc == 0 && job->state == FLUX_JOB_STATE_CLEANUP)
        event_post_host (job, "release", NULL);
    return rc;
}

int jobtap_host_job_finish (uint64_t id,
                            int result,
                            int status,
                            const char *note)
{
    struct runtime *rt = host_runtime ();
    struct job *job;
    int rc = -1;

    runtime_lock ();
    if ((job = table_find_bound (rt, id))) {
        job_incref (job);
        rc = finish_locked (job, result, status, note);
        job_decref (job);
    }
    runtime_unlock ();
    return rc;
}

static void inactive_purge (struct job *job)
{
    stack_notify (job, "job.inactive-remove");
    store_forget (job);
    job_forget (job);
}

static void inactive_trim (struct runtime *rt)
{
    json_int_t max = setting_int (rt, "inactive-max", 1000);
    while ((json_int_t)json_array_size (rt->inactive_order) > max) {
        flux_jobid_t id = json_integer_value (json_array_get (rt->inactive_order,
                                                              0));
        struct job *job = table_find (rt, id);
        json_array_remove (rt->inactive_order, 0);
        if (job && job->state == FLUX_JOB_STATE_INACTIVE)
            inactive_purge (job);
    }
}

int jobtap_host_job_inactive (uint64_t id)
{
    struct runtime *rt = host_runtime ();
    struct job *job;
    int rc = -1;

    runtime_lock ();
    if (!(job = table_find_bound (rt, id)))
        goto out;
    if (job->state == FLUX_JOB_STATE_INACTIVE) {
        rc = 0;
        goto out;
    }
    job_incref (job);
    if (job->state != FLUX_JOB_STATE_CLEANUP)
        finish_locked (job, JOBTAP_RESULT_CANCELED, 0, "job removed");
    event_post_host (job, "free", NULL);
    rc = event_post_host (job, "clean", NULL);
    if (job->state == FLUX_JOB_STATE_INACTIVE) {
        stack_notify (job, "job.inactive-add");
        stack_notify (job, "job.destroy");
        job_aux_destroy_all (job);
        subs_clear (job); /* subscriptions end with the job */
        if (job->hold_reason) {
            free (job->hold_reason);
            job->hold_reason = NULL;
        }
        json_array_append_new (rt->inactive_order, json_integer (id));
        inactive_trim (rt);
    }
    job_decref (job);
out:
    runtime_unlock ();
    return rc;
}

int jobtap_host_job_purge (uint64_t id)
{
    struct runtime *rt = host_runtime ();
    struct job *job;
    int rc = -1;

    runtime_lock ();
    if (!(job = table_find_bound (rt, id)))
        goto out;
    if (job->state != FLUX_JOB_STATE_INACTIVE) {
        errno = EINVAL;
        goto out;
    }
    size_t i;
    json_t *v;
    json_array_foreach (rt->inactive_order, i, v) {
        if ((flux_jobid_t)json_integer_value (v) == id) {
            json_array_remove (rt->inactive_order, i);
            break;
        }
    }
    inactive_purge (job);
    rc = 0;
out:
    runtime_unlock ();
    return rc;
}

int jobtap_host_job_urgency (uint64_t id, int urgency)
{
    struct runtime *rt = host_runtime ();
    struct job *job;
    int rc = -1;

    runtime_lock ();
    if (urgency < 0 || urgency > 31)
        errno = EINVAL;
    else if ((job = table_find_bound (rt, id))) {
        if (job->state == FLUX_JOB_STATE_RUN
            || job->state == FLUX_JOB_STATE_CLEANUP
            || job->state == FLUX_JOB_STATE_INACTIVE)
            errno = EINVAL;
        else {
            json_t *ctx = json_pack ("{s:i s:I}",
                                     "urgency", urgency,
                                     "userid", (json_int_t)getuid ());
            rc = event_post_host (job, "urgency", ctx);
            json_decref (ctx);
        }
    }
    runtime_unlock ();
    return rc;
}

bool jobtap_host_topic_handled (const char *topic)
{
    bool handled;
    runtime_lock ();
    handled = topic && stack_handles (host_runtime (), topic);
    runtime_unlock ();
    return handled;
}

int jobtap_host_reprioritize_all (void)
{
    int rc;
    runtime_lock ();
    rc = reprioritize_scheduled (host_runtime (), false);
    runtime_unlock ();
    return rc;
}

int jobtap_host_reprioritize_all_yielding (void)
{
    int rc;
    runtime_lock ();
    rc = reprioritize_scheduled (host_runtime (), true);
    runtime_unlock ();
    return rc;
}

int jobtap_host_job_state (uint64_t id)
{
    struct runtime *rt = host_runtime ();
    struct job *job;
    int state = -1;

    runtime_lock ();
    if ((job = table_find_bound (rt, id)))
        state = job->state;
    runtime_unlock ();
    return state;
}

/* New reference to 'o', or an empty array / object if it was never made. */
static json_t *ref_or_empty (json_t *o, bool array)
{
    return o ? json_incref (o) : array ? json_array () : json_object ();
}

json_t *jobtap_host_job_info (uint64_t id)
{
    struct runtime *rt = host_runtime ();
    struct job *job;
    json_t *o = NULL;

    runtime_lock ();
    if ((job = table_find_bound (rt, id))) {
        json_t *deps = json_array ();
        const char *k;
        json_t *v;
        json_object_foreach (job->deps, k, v)
            json_array_append_new (deps, json_string (k));
        o = json_pack ("{s:I s:I s:i s:I s:i s:s s:f s:O s:o s:o s:o s:o}",
                       "id", (json_int_t)job->id,
                       "userid", (json_int_t)job->userid,
                       "urgency", job->urgency,
                       "priority", (json_int_t)job->priority,
                       "state", job->state,
                       "state_name", flux_job_statetostr (job->state, "L"),
                       "t_submit", job->t_submit,
                       "jobspec", job_jobspec (job),
                       "dependencies", deps,
                       "annotations", ref_or_empty (job->annotations, false),
                       "flags", ref_or_empty (job->flags, true),
                       "eventlog", ref_or_empty (job->eventlog, true));
    }
    runtime_unlock ();
    return o;
}

uint64_t *jobtap_host_job_ids (size_t *count)
{
    uint64_t *ids;

    runtime_lock ();
    ids = table_bound_ids (host_runtime (), count);
    runtime_unlock ();
    return ids;
}
