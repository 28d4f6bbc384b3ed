/* Submission: a job's provisional life from jobtap_host_submit (job.create,
 * job.validate, dependency schemes; rejections with the plugin's message)
 * to jobtap_host_job_new, which binds it to the scheduler's id and gives
 * it job.new; unbound submissions expire.  Host API entry points; calls
 * event.c, dispatch.c, job.c, spec.c and jobtap_conf.c. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <flux/core.h>
#include <flux/jobtap.h>

#include "host_error.h"
#include "jobtap_conf.h"
#include "dispatch.h"
#include "event.h"
#include "host.h"
#include "job.h"
#include "json_util.h"
#include "log.h"
#include "runtime.h"
#include "spec.h"
#include "state.h"
#include "submit.h"

/* A provisional job that will never become real. */
static void provisional_drop (struct job *job)
{
    fifo_unlink (job->rt->jobs->fifo, FIFO_PROV, job);
    stack_notify (job, "job.destroy");
    job_forget (job);
}

/* Runs on every submission: drop the oldest unbound submissions while
 * there are too many or they are too old. O(1) per dropped job. */
static void provisional_expire (struct runtime *rt)
{
    struct job_fifo *prov = &rt->jobs->fifo[FIFO_PROV];
    if (!prov->head)
        return; /* the usual case: the last submission was bound */
    json_int_t max = setting_int (rt, "provisional-max", 1024);
    json_int_t timeout = setting_int (rt, "provisional-timeout", 600);
    double t = now ();

    while (prov->head
           && ((json_int_t)prov->count >= max
               || t - prov->head->t_created > (double)timeout)) {
        struct job *oldest = prov->head;
        runtime_log (LOG_DEBUG,
                     "jobtap: expiring provisional job %ju",
                     (uintmax_t)oldest->id);
        provisional_drop (oldest);
    }
}

/* Stack-call a submit-time topic; rc<0 rejects with OUT errmsg. */
int submit_call (struct job *job,
                        const char *topic,
                        json_t *in,
                        const char *dflt,
                        jobtap_host_error_t *err)
{
    struct runtime *rt = job->rt;
    flux_plugin_arg_t *args;
    int rc;

    if (!stack_handles (rt, topic))
        return 0;
    if (!(args = job_args_create (job))) {
        errprintf (err, "out of memory");
        return -1;
    }
    if (in)
        flux_plugin_arg_pack (args, FLUX_PLUGIN_ARG_IN, "O", in);
    rc = stack_call (job, topic, args);
    if (rc < 0) {
        const char *msg = out_errmsg (args);
        errprintf (err, "%s", msg ? msg : dflt);
        errno = EINVAL;
    }
    job_args_done (job->rt, args);
    return rc;
}

static int check_dependency_list (struct job *job,
                                  json_t *deps,
                                  jobtap_host_error_t *err)
{
    size_t i;
    json_t *entry;

    if (!deps)
        return 0;
    if (!json_is_array (deps)) {
        errprintf (err, "dependencies object must be an array");
        errno = EINVAL;
        return -1;
    }
    json_array_foreach (deps, i, entry) {
        const char *scheme = NULL;
        char topic[256];
        json_t *in;
        int rc;
        if (json_unpack (entry, "{s:s}", "scheme", &scheme) < 0) {
            errprintf (err, "dependency[%zu] missing string scheme", i);
            errno = EINVAL;
            return -1;
        }
        if (snprintf (topic, sizeof (topic), "job.dependency.%s", scheme)
            > 128) {
            errprintf (err, "rejecting absurdly long dependency scheme");
            errno = EINVAL;
            return -1;
        }
        in = json_pack ("{s:O}", "dependency", entry);
        rc = submit_call (job,
                          topic,
                          in,
                          "rejected by job-manager dependency plugin",
                          err);
        json_decref (in);
        if (rc < 0)
            return -1;
        if (rc == 0) {
            errprintf (err, "dependency scheme \"%s\" not supported", scheme);
            errno = EINVAL;
            return -1;
        }
    }
    return 0;
}

int check_dependencies (struct job *job, jobtap_host_error_t *err)
{
    json_t *deps = job_dependencies (job);
    int rc = check_dependency_list (job, deps, err);
    json_decref (deps);
    return rc;
}

/* The submission of job (new, holding its jobspec or the host's recipe
 * for it; the reference is taken), under the runtime lock. */
static int submit_job (struct job *job,
                       uint32_t userid,
                       int urgency,
                       int flags,
                       json_t **updates,
                       uint64_t *token,
                       jobtap_host_error_t *err)
{
    struct runtime *rt = job->rt;

    job->token = ++rt->next_token;
    job->id = JOBTAP_PROVISIONAL_ID_BIT | job->token;
    table_insert (job);
    fifo_push (rt->jobs->fifo, FIFO_PROV, job);
    /* TAKE_JOBSPEC is the call's, not the job's */
    event_post_submit (job, userid, urgency,
                       flags & ~JOBTAP_SUBMIT_TAKE_JOBSPEC);

    if (submit_call (job, "job.create", NULL, "rejected by job-manager plugin",
                     err) < 0
        || submit_call (job, "job.validate", NULL,
                        "rejected by job-manager plugin", err) < 0
        || check_dependencies (job, err) < 0) {
        int e = errno;
        provisional_drop (job);
        errno = e;
        return -1;
    }
    if (updates) /* shared: the job keeps it */
        *updates = json_incref (job->all_updates);
    *token = job->token;
    return 0;
}

static bool submit_args_valid (int urgency, const uint64_t *token)
{
    return urgency >= 0 && urgency <= 31 && token;
}

static int invalid_argument (jobtap_host_error_t *err)
{
    errprintf (err, "invalid argument");
    errno = EINVAL;
    return -1;
}

int jobtap_host_submit (json_t *jobspec,
                        uint32_t userid,
                        int urgency,
                        double t_submit,
                        int flags,
                        json_t **updates,
                        uint64_t *token,
                        jobtap_host_error_t *err)
{
    struct runtime *rt = host_runtime ();
    struct job *job;
    int rc = -1;
    /* (JOBTAP_SUBMIT_TEST_ONLY needs nothing here: the caller aborts
     * those jobs) */
    json_t *taken = flags & JOBTAP_SUBMIT_TAKE_JOBSPEC ? jobspec : NULL;

    if (!json_is_object (jobspec) || !submit_args_valid (urgency, token)) {
        json_decref (taken);
        return invalid_argument (err);
    }
    runtime_lock ();
    provisional_expire (rt);
    job = job_create (rt, jobspec, userid, urgency, t_submit);
    json_decref (taken); /* the job holds its own */
    if (!job)
        errprintf (err, "out of memory");
    else
        rc = submit_job (job, userid, urgency, flags, updates, token, err);
    runtime_unlock ();
    return rc;
}

int jobtap_host_submit_from_source (void *source,
                                    size_t len,
                                    uint32_t userid,
                                    int urgency,
                                    double t_submit,
                                    int flags,
                                    json_t **updates,
                                    uint64_t *token,
                                    jobtap_host_error_t *err)
{
    struct runtime *rt = host_runtime ();
    struct job *job;
    int rc = -1;

    if (!source || !rt->ops->jobspec_rebuild
        || !submit_args_valid (urgency, token)) {
        free (source);
        return invalid_argument (err);
    }
    runtime_lock ();
    provisional_expire (rt);
    if (!(job = job_create_bare (rt, userid, urgency, t_submit))
        || job_spec_from_source (job, source, len) < 0) {
        if (job)
            job_decref (job);
        else
            free (source);
        errprintf (err, "out of memory");
    }
    else
        rc = submit_job (job, userid, urgency, flags, updates, token, err);
    runtime_unlock ();
    return rc;
}

static struct job *find_token (struct runtime *rt, uint64_t token)
{
    struct job *job;
    if (token == 0)
        return NULL;
    job = table_find (rt, JOBTAP_PROVISIONAL_ID_BIT | token);
    return job && job->token == token ? job : NULL;
}

void jobtap_host_job_source (uint64_t id, void *source, size_t len)
{
    struct job *job;
    runtime_lock ();
    if (id && (job = table_find (host_runtime (), id)))
        job_spec_source (job, source, len);
    else
        free (source);
    runtime_unlock ();
}

void jobtap_host_submit_abort (uint64_t token)
{
    struct job *job;
    runtime_lock ();
    if ((job = find_token (host_runtime (), token)))
        provisional_drop (job);
    runtime_unlock ();
}

int jobtap_host_job_new (uint64_t token,
                         uint64_t id,
                         uint32_t userid,
                         int urgency,
                         double t_submit,
                         json_t *jobspec,
                         jobtap_host_error_t *err)
{
    struct runtime *rt = host_runtime ();
    struct job *job;
    int rc = -1;

    if ((id & JOBTAP_PROVISIONAL_ID_BIT) || id == 0 || urgency < 0
        || urgency > 31) {
        errprintf (err, "invalid argument");
        errno = EINVAL;
        return -1;
    }
    runtime_lock ();
    if (table_find (rt, id)) {
        errprintf (err, "job %ju already known", (uintmax_t)id);
        errno = EEXIST;
        goto out;
    }
    if (token) {
        if (!(job = find_token (rt, token))) {
            errprintf (err, "unknown or expired submit token");
            errno = ENOENT;
            goto out;
        }
        table_remove (job);
        fifo_unlink (rt->jobs->fifo, FIFO_PROV, job);
        job->token = 0;
        job->id = id;
        job->userid = userid;
        job->urgency = urgency;
        job->t_submit = t_submit;
        if (jobspec) {
            json_t *spec = jobspec_redacted (jobspec);
            if (spec)
                job_set_jobspec (job, spec, NULL);
        }
        table_insert (job);
    }
    else {
        /* A job we never saw at submit: create it without rejection. */
        if (!(job = job_create (rt, jobspec, userid, urgency, t_submit))) {
            errprintf (err, "out of memory");
            goto out;
        }
        job->id = id;
        table_insert (job);
        event_post_submit (job, userid, urgency, -1);
        jobtap_call (job, "job.create", NULL);
        /* dependencies the runtime never checked: a missing scheme is
         * an informational exception, as on a Flux restart */
        jobtap_host_error_t derr;
        if (check_dependencies (job, &derr) < 0) {
            char note[600];
            snprintf (note, sizeof (note),
                      "%s (job may be stuck in DEPEND state)", derr.text);
            raise_exception_internal (job, "dependency", 4, note);
        }
    }
    job_incref (job);
    jobtap_call (job, "job.new", NULL);
    event_post_known (job, EV_VALIDATE, NULL);
    job_spec_rest (job);
    job_decref (job);
    rc = 0;
out:
    runtime_unlock ();
    return rc;
}
