/* Updates of a job's jobspec asked for by the scheduler's user
 * (jobtap_host_job_update): job.update.<key> on the stack decides each
 * key, job.validate sees the result unless a plugin validated it, then
 * one jobspec-update event applies it.  A host API entry point; calls
 * event.c, submit.c, dispatch.c, spec.c and job.c. */
#include <errno.h>
#include <stdbool.h>
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
#include "log.h"
#include "runtime.h"
#include "spec.h"
#include "state.h"
#include "submit.h"

/* Whether the job carries flag (set-flags events). */
static bool job_has_flag (struct job *job, const char *flag)
{
    size_t i;
    json_t *f;

    json_array_foreach (job->flags, i, f)
    {
        if (json_is_string (f) && !strcmp (json_string_value (f), flag))
            return true;
    }
    return false;
}

int jobtap_host_job_update (uint64_t id,
                            json_t *updates,
                            uint32_t userid,
                            uint32_t rolemask,
                            json_t **final,
                            jobtap_host_error_t *err)
{
    return jobtap_host_job_update_ex (id, updates, userid, rolemask, 0,
                                      final, err);
}

int jobtap_host_job_update_ex (uint64_t id,
                               json_t *updates,
                               uint32_t userid,
                               uint32_t rolemask,
                               int flags,
                               json_t **final,
                               jobtap_host_error_t *err)
{
    struct runtime *rt = host_runtime ();
    struct job *job;
    json_t *all = NULL;
    const char *key;
    json_t *val;
    bool validated = true; /* every key's handler said so */
    int rc = -1;

    if (!json_is_object (updates) || json_object_size (updates) == 0) {
        errprintf (err, "invalid update request");
        errno = EINVAL;
        return -1;
    }
    runtime_lock ();
    if (!(job = table_find_bound (rt, id))) {
        errprintf (err, "unknown job");
        goto out;
    }
    if (job->state == FLUX_JOB_STATE_INACTIVE) {
        errprintf (err, "job is inactive");
        errno = EINVAL;
        goto out;
    }
    /* As Flux: once the instance owner changed a job past its
     * validation, only the owner may change it again. */
    if (job_has_flag (job, "immutable") && !(rolemask & FLUX_ROLE_OWNER)) {
        errprintf (err, "job is immutable due to previous instance owner "
                   "update");
        errno = EPERM;
        goto out;
    }
    if (!(all = json_deep_copy (updates)))
        goto out;
    json_object_foreach (updates, key, val) {
        char topic[512];
        flux_plugin_arg_t *args = job_args_create (job);
        int r, v = 0;
        json_t *extra = NULL;
        if (!args)
            goto out;
        snprintf (topic, sizeof (topic), "job.update.%s", key);
        flux_plugin_arg_pack (args,
                              FLUX_PLUGIN_ARG_IN,
                              "{s:{s:I s:I} s:s s:O}",
                              "cred",
                                "userid", (json_int_t)userid,
                                "rolemask", (json_int_t)rolemask,
                              "key", key,
                              "value", val);
        r = stack_call (job, topic, args);
        if (r == 0 && (flags & JOBTAP_UPDATE_UNHANDLED_OK)) {
            flux_plugin_arg_destroy (args);
            validated = false;
            continue; /* the scheduler's own rules decide */
        }
        if (r == 0) {
            errprintf (err, "update of %s not supported", key);
            errno = EINVAL;
        }
        else if (r < 0) {
            const char *m = out_errmsg (args);
            errprintf (err, "%s", m ? m : "update rejected by job-manager plugin");
            errno = EINVAL;
        }
        else if (flux_plugin_arg_unpack (args,
                                         FLUX_PLUGIN_ARG_OUT,
                                         "{s?i s?o}",
                                         "validated", &v,
                                         "updates", &extra) == 0) {
            if (!v)
                validated = false;
            if (json_is_object (extra))
                json_object_update (all, extra);
        }
        flux_plugin_arg_destroy (args);
        if (r <= 0)
            goto out;
    }
    if (validate_updates (all) < 0) {
        errprintf (err, "invalid jobspec update key");
        errno = EINVAL;
        goto out;
    }
    if (!validated) {
        /* job.validate sees the updated jobspec in the current state */
        struct spec_trial trial;
        int r;
        spec_trial_begin (job, &trial);
        if (spec_apply_updates (job, all) < 0) {
            spec_trial_end (job, &trial);
            goto out;
        }
        r = submit_call (job, "job.validate", NULL,
                         "rejected by job-manager plugin", err);
        spec_trial_end (job, &trial);
        if (r < 0)
            goto out;
    }
    if (flags & JOBTAP_UPDATE_CHECK_ONLY) {
        rc = 0;
        goto out;
    }
    job->quiet_update = true;
    rc = event_post_host (job, "jobspec-update", all);
    job->quiet_update = false;
    /* The owner's update skipped a validation that would have run on the
     * job of another user (Flux's reasons: a later update of another key
     * would fail on this one, and a user's update must not ride on it). */
    if (rc == 0 && validated && (rolemask & FLUX_ROLE_OWNER)
        && userid != job->userid && stack_handles (rt, "job.validate")
        && !job_has_flag (job, "immutable")) {
        json_t *ctx = json_pack ("{s:[s]}", "flags", "immutable");
        if (!ctx || event_post_known (job, EV_SET_FLAGS, ctx) < 0)
            runtime_log (LOG_ERR, "jobtap: job %ju: cannot set the "
                         "immutable flag", (uintmax_t)job->id);
        json_decref (ctx);
    }
    if (rc == 0 && final)
        *final = json_incref (all);
out:
    json_decref (all);
    runtime_unlock ();
    return rc;
}

int jobtap_host_job_jobspec_sync (uint64_t id, json_t *values)
{
    struct job *job;
    int rc = -1;

    if (!json_is_object (values)) {
        errno = EINVAL;
        return -1;
    }
    runtime_lock ();
    if ((job = table_find_bound (host_runtime (), id))) {
        job->quiet_update = true;
        rc = event_post_host (job, "jobspec-update", values);
        job->quiet_update = false;
    }
    runtime_unlock ();
    return rc;
}
