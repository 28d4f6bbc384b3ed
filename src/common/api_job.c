/* The flux_jobtap_* calls about one job: aux, dependencies, flags,
 * exceptions, events, jobspec updates, lookups and results,
 * subscriptions, prolog and epilog.  Entry points of the Flux API: each
 * takes the runtime lock and reaches the runtime through its plugin. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <flux/core.h>
#include <flux/jobtap.h>

#include "aux.h"
#include "dispatch.h"
#include "event.h"
#include "host.h"
#include "job.h"
#include "jtplugin.h"
#include "log.h"
#include "plugin_arg.h"
#include "quickpack.h"
#include "runtime.h"
#include "spec.h"
#include "state.h"
#include "update_memo.h"

int flux_jobtap_job_aux_set (flux_plugin_t *p,
                             flux_jobid_t id,
                             const char *name,
                             void *val,
                             flux_free_f free_fn)
{
    struct jt_plugin *jt;
    struct job *job;
    struct job_aux *a;
    int rc = -1;

    runtime_lock ();
    if (!(jt = jt_get (p))) {
        errno = EINVAL;
        goto out;
    }
    if (!(job = lookup_jobid (p, id))) {
        errno = ENOENT;
        goto out;
    }
    if (!(a = job_aux_find (job, jt))) {
        if ((!name && !val) || (!val && free_fn) || (!name && !free_fn)) {
            errno = EINVAL;
            goto out;
        }
        if (!(a = calloc (1, sizeof (*a))))
            goto out;
        a->plugin = jt;
        a->next = job->aux;
        job->aux = a;
    }
    rc = aux_set (&a->items, name, val, free_fn);
out:
    runtime_unlock ();
    return rc;
}

void *flux_jobtap_job_aux_get (flux_plugin_t *p,
                               flux_jobid_t id,
                               const char *name)
{
    struct jt_plugin *jt;
    struct job *job;
    struct job_aux *a;
    void *val = NULL;

    runtime_lock ();
    if (!(jt = jt_get (p)))
        errno = EINVAL;
    else if ((job = lookup_jobid (p, id)) && (a = job_aux_find (job, jt)))
        val = aux_get (a->items, name);
    runtime_unlock ();
    return val;
}

int flux_jobtap_job_aux_delete_value (flux_plugin_t *p,
                                      flux_jobid_t id,
                                      void *val)
{
    struct jt_plugin *jt;
    struct job *job;
    struct job_aux *a;
    int rc = -1;

    runtime_lock ();
    if (!(jt = jt_get (p)))
        errno = EINVAL;
    else if (!(job = lookup_jobid (p, id)))
        errno = ENOENT;
    else {
        if ((a = job_aux_find (job, jt)))
            aux_delete_value (&a->items, val);
        rc = 0;
    }
    runtime_unlock ();
    return rc;
}

int flux_jobtap_job_aux_delete (flux_plugin_t *p, flux_jobid_t id, void *val)
{
    return flux_jobtap_job_aux_delete_value (p, id, val);
}

/* The job for dependency add/remove: the current job if ids match,
 * otherwise an active job by literal id. */
static struct job *dependency_job (flux_plugin_t *p, flux_jobid_t id)
{
    struct runtime *rt = jt_runtime (p);
    struct job *cur;
    struct job *job;

    if (!rt) {
        errno = EINVAL;
        return NULL;
    }
    cur = current_job (rt);
    if (cur && cur->id == id)
        job = cur;
    else if (!(job = table_find (rt, id))
             || job->state == FLUX_JOB_STATE_INACTIVE) {
        errno = ENOENT;
        return NULL;
    }
    if (job->state != FLUX_JOB_STATE_DEPEND
        && job->state != FLUX_JOB_STATE_NEW) {
        errno = EINVAL;
        return NULL;
    }
    return job;
}

int flux_jobtap_dependency_add (flux_plugin_t *p,
                                flux_jobid_t id,
                                const char *description)
{
    struct job *job;
    int rc = -1;

    runtime_lock ();
    if (!(job = dependency_job (p, id)))
        goto out;
    if (!description) {
        errno = EINVAL;
        goto out;
    }
    if (json_object_get (job->deps, description))
        rc = 0; /* idempotent */
    else {
        json_t *ctx = json_pack ("{s:s}", "description", description);
        rc = event_post_known (job, EV_DEPENDENCY_ADD, ctx);
        json_decref (ctx);
    }
out:
    runtime_unlock ();
    return rc;
}

int flux_jobtap_dependency_remove (flux_plugin_t *p,
                                   flux_jobid_t id,
                                   const char *description)
{
    struct job *job;
    int rc = -1;

    runtime_lock ();
    if (!(job = dependency_job (p, id)))
        goto out;
    if (!description) {
        errno = EINVAL;
        goto out;
    }
    json_t *ctx = json_pack ("{s:s}", "description", description);
    rc = event_post_known (job, EV_DEPENDENCY_REMOVE, ctx);
    json_decref (ctx);
out:
    runtime_unlock ();
    return rc;
}

int flux_jobtap_job_set_flag (flux_plugin_t *p,
                              flux_jobid_t id,
                              const char *flag)
{
    struct job *job;
    int rc = -1;

    runtime_lock ();
    if (!p || !flag || !jt_get (p)) {
        errno = EINVAL;
        goto out;
    }
    if (!(job = lookup_active_jobid (p, id)))
        goto out;
    if (strcmp (flag, "alloc-bypass") && strcmp (flag, "debug")
        && strcmp (flag, "immutable")) {
        errno = EINVAL;
        goto out;
    }
    json_t *ctx = json_pack ("{s:[s]}", "flags", flag);
    rc = event_post_known (job, EV_SET_FLAGS, ctx);
    json_decref (ctx);
out:
    runtime_unlock ();
    return rc;
}

int flux_jobtap_raise_exception (flux_plugin_t *p,
                                 flux_jobid_t id,
                                 const char *type,
                                 int severity,
                                 const char *fmt,
                                 ...)
{
    struct job *job;
    char note[1024];
    va_list ap;
    int n, rc = -1;

    runtime_lock ();
    if (!p || !type || !fmt || !jt_get (p)) {
        errno = EINVAL;
        goto out;
    }
    if (!(job = lookup_active_jobid (p, id)))
        goto out;
    va_start (ap, fmt);
    n = vsnprintf (note, sizeof (note), fmt, ap);
    va_end (ap);
    if (n >= (int)sizeof (note))
        note[sizeof (note) - 2] = '+';
    rc = raise_exception_internal (job, type, severity, note);
out:
    runtime_unlock ();
    return rc;
}

/* Events that move a job between states belong to the scheduler here:
 * a plugin posting them would desynchronise Slurm and the runtime. */
static bool scheduler_owned_event (const char *name)
{
    static const char *owned[] = {
        "submit", "validate", "invalidate", "depend", "priority", "alloc",
        "start", "finish", "release", "free", "clean", "flux-restart",
        "dependency-add", "dependency-remove", "jobspec-update", NULL,
    };
    for (int i = 0; owned[i]; i++)
        if (!strcmp (name, owned[i]))
            return true;
    return false;
}

int flux_jobtap_event_post_pack (flux_plugin_t *p,
                                 flux_jobid_t id,
                                 const char *name,
                                 const char *fmt,
                                 ...)
{
    struct job *job;
    json_t *ctx = NULL;
    int rc = -1;

    runtime_lock ();
    if (!p || !name || !jt_get (p)) {
        errno = EINVAL;
        goto out;
    }
    if (!(job = lookup_active_jobid (p, id)))
        goto out;
    if (scheduler_owned_event (name)) {
        runtime_log (LOG_ERR,
                     "jobtap: %s: event '%s' cannot be posted by a plugin "
                     "under slurm-jobtap",
                     jt_name (p),
                     name);
        errno = EPERM;
        goto out;
    }
    if (fmt) {
        json_error_t err;
        va_list ap;
        va_start (ap, fmt);
        ctx = plugin_vpack (&err, fmt, ap);
        va_end (ap);
        if (!ctx) {
            errno = EINVAL;
            goto out;
        }
    }
    rc = event_post (job, name, ctx);
    json_decref (ctx);
out:
    runtime_unlock ();
    return rc;
}

static bool updates_allowed (struct job *job)
{
    return job->state != FLUX_JOB_STATE_RUN
           && job->state != FLUX_JOB_STATE_CLEANUP
           && job->state != FLUX_JOB_STATE_INACTIVE;
}

int flux_jobtap_jobspec_update_pack (flux_plugin_t *p, const char *fmt, ...)
{
    struct runtime *rt = jt_runtime (p);
    struct job *job;
    json_t *o = NULL;
    json_error_t err;
    struct update_memo_key key;
    va_list ap;
    int rc = -1;

    runtime_lock ();
    if (!p || !fmt || !jt_get (p) || !(job = current_job (rt))
        || !updates_allowed (job)) {
        errno = EINVAL;
        goto out;
    }
    jobtap_host_json_pool_begin ();
    va_start (ap, fmt);
    o = update_memo_find (rt->update_memo, &key, fmt, ap);
    va_end (ap);
    if (!o) {
        va_start (ap, fmt);
        o = plugin_vpack (&err, fmt, ap);
        va_end (ap);
        if (o && validate_updates (o) < 0) {
            json_decref (o);
            o = NULL;
        }
        update_memo_keep (rt->update_memo, &key, o);
    }
    if (o && !job->pending_updates) {
        job->pending_updates = json_incref (o);
        rc = 0;
    }
    else if (o) {
        /* the first may be shared (a kept one): merged into a copy */
        json_t *merged = own_object (job->pending_updates);
        if (merged && json_object_update (merged, o) == 0) {
            json_decref (job->pending_updates);
            job->pending_updates = merged;
            rc = 0;
        }
        else
            json_decref (merged);
    }
    jobtap_host_json_pool_end ();
    if (rc < 0) {
        errno = EINVAL;
        goto out;
    }
out:
    json_decref (o);
    runtime_unlock ();
    return rc;
}

int flux_jobtap_jobspec_update_id_pack (flux_plugin_t *p,
                                        flux_jobid_t id,
                                        const char *fmt,
                                        ...)
{
    struct runtime *rt = jt_runtime (p);
    struct job *job;
    json_t *o = NULL;
    json_error_t err;
    va_list ap;
    int rc = -1;

    runtime_lock ();
    if (!p || !fmt || !jt_get (p) || !(job = table_find (rt, id))
        || !updates_allowed (job) || job == current_job (rt)) {
        errno = EINVAL;
        goto out;
    }
    va_start (ap, fmt);
    o = plugin_vpack (&err, fmt, ap);
    va_end (ap);
    if (!o || validate_updates (o) < 0) {
        errno = EINVAL;
        goto out;
    }
    rc = event_post_known (job, EV_JOBSPEC_UPDATE, o);
out:
    json_decref (o);
    runtime_unlock ();
    return rc;
}

flux_plugin_arg_t *flux_jobtap_job_lookup (flux_plugin_t *p, flux_jobid_t id)
{
    struct job *job;
    flux_plugin_arg_t *args = NULL;

    runtime_lock ();
    if (!p || !jt_get (p))
        errno = EINVAL;
    else if (!(job = lookup_jobid (p, id)))
        errno = ENOENT;
    else if ((args = job_args_create (job)))
        plugin_arg_resolve (args); /* the plugin may keep them past the job */
    runtime_unlock ();
    return args;
}

int flux_jobtap_get_job_result (flux_plugin_t *p,
                                flux_jobid_t id,
                                flux_job_result_t *resultp)
{
    struct job *job;
    const char *name = NULL;
    json_t *ctx = NULL;
    int rc = -1;

    runtime_lock ();
    if (!p || !resultp || !jt_get (p)) {
        errno = EINVAL;
        goto out;
    }
    if (!(job = lookup_jobid (p, id))) {
        errno = ENOENT;
        goto out;
    }
    if ((job->state != FLUX_JOB_STATE_CLEANUP
         && job->state != FLUX_JOB_STATE_INACTIVE)
        || !job->end_event
        || json_unpack (job->end_event,
                        "{s:s s:o}",
                        "name", &name,
                        "context", &ctx) < 0) {
        errno = EINVAL;
        goto out;
    }
    if (!strcmp (name, "finish")) {
        int status = -1;
        json_unpack (ctx, "{s:i}", "status", &status);
        *resultp = status == 0 ? FLUX_JOB_RESULT_COMPLETED
                               : FLUX_JOB_RESULT_FAILED;
    }
    else {
        const char *type = "";
        json_unpack (ctx, "{s:s}", "type", &type);
        if (!strcmp (type, "cancel"))
            *resultp = FLUX_JOB_RESULT_CANCELED;
        else if (!strcmp (type, "timeout"))
            *resultp = FLUX_JOB_RESULT_TIMEOUT;
        else
            *resultp = FLUX_JOB_RESULT_FAILED;
    }
    rc = 0;
out:
    runtime_unlock ();
    return rc;
}

int flux_jobtap_job_event_posted (flux_plugin_t *p,
                                  flux_jobid_t id,
                                  const char *name)
{
    struct job *job;
    int rc = -1;

    runtime_lock ();
    if (!p || !name || !jt_get (p))
        errno = EINVAL;
    else if ((job = lookup_jobid (p, id)))
        rc = posted_test (job, name) ? 1 : 0;
    runtime_unlock ();
    return rc;
}

int flux_jobtap_job_subscribe (flux_plugin_t *p, flux_jobid_t id)
{
    struct job *job;
    struct sub *s, **sp;
    int rc = -1;

    runtime_lock ();
    if (!(job = lookup_active_jobid (p, id))) {
        errno = ENOENT;
        goto out;
    }
    if (!(s = calloc (1, sizeof (*s))))
        goto out;
    s->plugin = jt_get (p);
    for (sp = &job->subs; *sp; sp = &(*sp)->next)
        ;
    *sp = s;
    rc = 0;
out:
    runtime_unlock ();
    return rc;
}

void flux_jobtap_job_unsubscribe (flux_plugin_t *p, flux_jobid_t id)
{
    struct job *job;
    struct jt_plugin *jt;

    runtime_lock ();
    if ((jt = jt_get (p)) && (job = lookup_active_jobid (p, id)))
        subs_remove (job, jt);
    runtime_unlock ();
}

static int perilog_post (struct job *job,
                         const char *name,
                         const char *description,
                         int status,
                         bool finish)
{
    json_t *ctx = finish ? json_pack ("{s:s s:i}",
                                      "description", description,
                                      "status", status)
                         : json_pack ("{s:s}", "description", description);
    int rc = event_post (job, name, ctx);
    json_decref (ctx);
    return rc;
}

/* prolog/epilog-start for the current job: a prolog before CLEANUP, an
 * epilog in CLEANUP. */
static int perilog_start (flux_plugin_t *p,
                          const char *name,
                          const char *description,
                          bool epilog)
{
    struct runtime *rt = jt_runtime (p);
    struct job *job;
    int rc = -1;

    runtime_lock ();
    if (!rt || !description || !(job = current_job (rt))
        || (epilog ? job->state != FLUX_JOB_STATE_CLEANUP
                   : job->state == FLUX_JOB_STATE_CLEANUP
                         || job->state == FLUX_JOB_STATE_INACTIVE))
        errno = EINVAL;
    else
        rc = perilog_post (job, name, description, 0, false);
    runtime_unlock ();
    return rc;
}

/* prolog/epilog-finish for an active job (an epilog's in CLEANUP). */
static int perilog_finish (flux_plugin_t *p,
                           flux_jobid_t id,
                           const char *name,
                           const char *description,
                           int status,
                           bool epilog)
{
    struct job *job;
    int rc = -1;

    runtime_lock ();
    if (!jt_get (p))
        errno = EINVAL;
    else if (!(job = lookup_active_jobid (p, id)))
        ;
    else if (!description
             || (epilog && job->state != FLUX_JOB_STATE_CLEANUP))
        errno = EINVAL;
    else
        rc = perilog_post (job, name, description, status, true);
    runtime_unlock ();
    return rc;
}

int flux_jobtap_prolog_start (flux_plugin_t *p, const char *description)
{
    return perilog_start (p, "prolog-start", description, false);
}

int flux_jobtap_prolog_finish (flux_plugin_t *p,
                               flux_jobid_t id,
                               const char *description,
                               int status)
{
    return perilog_finish (p, id, "prolog-finish", description, status, false);
}

int flux_jobtap_epilog_start (flux_plugin_t *p, const char *description)
{
    return perilog_start (p, "epilog-start", description, true);
}

int flux_jobtap_epilog_finish (flux_plugin_t *p,
                               flux_jobid_t id,
                               const char *description,
                               int status)
{
    return perilog_finish (p, id, "epilog-finish", description, status, true);
}
