/* update.c: jobtap_host_job_update(_ex) on the process's runtime with
 * in-process plugins: job.update.<key> deciding each key, extra updates,
 * job.validate on the updated jobspec, the final updates and the job's
 * jobspec. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flux/core.h>
#include <flux/jobtap.h>

#include "host.h"
#include "job.h"
#include "jtplugin.h"
#include "runtime.h"
#include "spec.h"
#include "core_util.h"
#include "tap.h"

static void op_jobspec_update (uint64_t id, json_t *updates,
                               const char *plugin, void *arg)
{
    (void)plugin;
    (void)updates;
    (void)arg;
    core_trace ("host-update %ju", (uintmax_t)id);
}

static void op_log (int level, const char *msg, void *arg)
{
    (void)level;
    (void)msg;
    (void)arg;
}

static const struct jobtap_host_ops ops = {
    .log = op_log,
    .jobspec_update = op_jobspec_update,
};

static json_int_t duration_of (json_t *jobspec)
{
    json_int_t d = -1;
    json_unpack (jobspec, "{s:{s:{s:I}}}", "attributes", "system",
                 "duration", &d);
    return d;
}

/* job.update.attributes.system.duration: rejects over 1000, adds an
 * extra update for 500, marks 600 validated. */
static int cb_duration (flux_plugin_t *p, const char *topic,
                        flux_plugin_arg_t *args, void *arg)
{
    json_int_t value = 0, userid = -1, rolemask = -1;
    const char *key = "";
    (void)arg;

    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN,
                                "{s:{s:I s:I} s:s s:I}",
                                "cred", "userid", &userid,
                                "rolemask", &rolemask,
                                "key", &key, "value", &value) < 0)
        return flux_jobtap_error (p, args, "unpack: %s",
                                  flux_plugin_arg_strerror (args));
    core_trace ("%s %s=%jd by %jd/%jd", topic, key, (intmax_t)value,
                (intmax_t)userid, (intmax_t)rolemask);
    if (value > 1000)
        return flux_jobtap_error (p, args, "duration %jd too long",
                                  (intmax_t)value);
    if (value == 500)
        return flux_plugin_arg_pack (args, FLUX_PLUGIN_ARG_OUT,
                                     "{s:{s:s}}", "updates",
                                     "attributes.system.queue", "debug");
    if (value == 600)
        return flux_plugin_arg_pack (args, FLUX_PLUGIN_ARG_OUT, "{s:i}",
                                     "validated", 1);
    if (value == 800)
        return flux_plugin_arg_pack (args, FLUX_PLUGIN_ARG_OUT,
                                     "{s:{s:i}}", "updates", "bogus.key", 1);
    if (value == 900)
        return -1;
    return 0;
}

/* job.validate: traces the duration it sees; rejects 700. */
static int cb_validate (flux_plugin_t *p, const char *topic,
                        flux_plugin_arg_t *args, void *arg)
{
    json_t *jobspec = NULL;
    json_int_t d;
    (void)arg;

    flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:o}", "jobspec",
                            &jobspec);
    d = duration_of (jobspec);
    core_trace ("%s duration=%jd", topic, (intmax_t)d);
    if (d == 700)
        return flux_jobtap_reject_job (p, args, "validate: %jd", (intmax_t)d);
    return 0;
}

static int cb_job_update (flux_plugin_t *p, const char *topic,
                          flux_plugin_arg_t *args, void *arg)
{
    json_t *updates = NULL;
    char *s;
    (void)p;
    (void)arg;
    flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:o}", "updates",
                            &updates);
    s = json_dumps (updates, JSON_COMPACT | JSON_SORT_KEYS);
    core_trace ("%s %s", topic, s ? s : "?");
    free (s);
    return 0;
}

static struct job *job_of (uint64_t id)
{
    return table_find (host_runtime (), id);
}

static char *dumps (json_t *o)
{
    static char buf[512];
    char *s = json_dumps (o, JSON_COMPACT | JSON_SORT_KEYS);
    snprintf (buf, sizeof (buf), "%s", s ? s : "(null)");
    free (s);
    return buf;
}

static int update (uint64_t id, const char *key, json_int_t value, int flags,
                   json_t **final, jobtap_host_error_t *err)
{
    json_t *u = json_pack ("{s:I}", key, value);
    int rc;
    memset (err, 0, sizeof (*err));
    core_trace_reset ();
    if (final)
        *final = NULL;
    rc = jobtap_host_job_update_ex (id, u, 500, JOBTAP_ROLE_USER, flags,
                                    final, err);
    json_decref (u);
    return rc;
}

static void test_rejections (void)
{
    jobtap_host_error_t err;
    json_t *final;

    errno = 0;
    ok (update (1, "attributes.system.queue", 1, 0, &final, &err) == -1,
        "an update no plugin handles fails");
    is (err.text, "update of attributes.system.queue not supported",
        "with 'update of KEY not supported'");
    isint (errno, EINVAL, "errno is EINVAL");
    ok (final == NULL, "no final updates");

    ok (update (1, "attributes.system.duration", 2000, 0, &final, &err)
            == -1,
        "a plugin's job.update.<key> rejection fails the update");
    is (err.text, "duration 2000 too long", "with the plugin's message");
    is (core_trace_text (),
        "job.update.attributes.system.duration "
        "attributes.system.duration=2000 by 500/2",
        "the handler got key, value and the caller's cred");
    ok (update (1, "attributes.system.duration", 900, 0, NULL, &err) == -1,
        "a bare rejection fails the update");
    is (err.text, "update rejected by job-manager plugin",
        "with the default message");
    ok (update (1, "attributes.system.duration", 800, 0, NULL, &err) == -1,
        "an extra update of a key outside the jobspec fails");
    is (err.text, "invalid jobspec update key", "with its reason");

    ok (update (1, "attributes.system.duration", 700, 0, NULL, &err) == -1,
        "job.validate rejecting the updated jobspec fails the update");
    is (err.text, "validate: 700", "with job.validate's message");
    isint (duration_of (job_jobspec (job_of (1))), 100,
           "the jobspec is as it was after a rejected update");

    json_t *empty = json_object ();
    ok (jobtap_host_job_update (1, empty, 1, 1, NULL, &err) == -1
            && !strcmp (err.text, "invalid update request"),
        "an empty update is an invalid request");
    json_decref (empty);
    ok (update (99, "attributes.system.duration", 5, 0, NULL, &err) == -1
            && !strcmp (err.text, "unknown job"),
        "an update of an unknown job fails");
    isint (strlen (core_trace_text ()), 0, "no plugin was called for it");
}

/* Asked only: the handlers and job.validate say yes or no, and the job
 * is left as it was. */
static void test_check_only (void)
{
    jobtap_host_error_t err;

    ok (update (1, "attributes.system.duration", 2000,
                JOBTAP_UPDATE_CHECK_ONLY, NULL, &err)
                == -1
            && !strcmp (err.text, "duration 2000 too long"),
        "an update checked only is refused as it would be");
    ok (update (1, "attributes.system.duration", 300,
                JOBTAP_UPDATE_CHECK_ONLY, NULL, &err)
            == 0,
        "an acceptable one passes the check");
    like (core_trace_text (), "job.update.attributes.system.duration",
          "its handler ran");
    isint (duration_of (job_jobspec (job_of (1))), 100,
           "and the jobspec is as it was");
}

static void test_accepted (void)
{
    jobtap_host_error_t err;
    json_t *final = NULL;

    ok (update (1, "attributes.system.duration", 200, 0, &final, &err) == 0,
        "an update a plugin handles succeeds");
    is (dumps (final), "{\"attributes.system.duration\":200}",
        "the final updates are returned");
    json_decref (final);
    is (core_trace_text (),
        "job.update.attributes.system.duration "
        "attributes.system.duration=200 by 500/2; "
        "job.validate duration=200; "
        "job.update {\"attributes.system.duration\":200}",
        "job.validate sees the updated jobspec, then job.update runs");
    isint (duration_of (job_jobspec (job_of (1))), 200,
           "the job's jobspec is changed");
    ok (strstr (core_trace_text (), "host-update") == NULL,
        "the host is not told of the update it asked for");

    ok (update (1, "attributes.system.duration", 500, 0, &final, &err) == 0,
        "an update with a plugin's extra update succeeds");
    is (dumps (final),
        "{\"attributes.system.duration\":500,"
        "\"attributes.system.queue\":\"debug\"}",
        "the extra update is merged into the final updates");
    json_decref (final);
    json_t *js = job_jobspec (job_of (1));
    ok (duration_of (js) == 500
            && !strcmp (json_string_value (json_object_get (
                            json_object_get (json_object_get (js,
                                                              "attributes"),
                                             "system"),
                            "queue")),
                        "debug"),
        "both are applied to the jobspec");

    ok (update (1, "attributes.system.duration", 600, 0, &final, &err) == 0,
        "an update the handler validated succeeds");
    is (core_trace_text (),
        "job.update.attributes.system.duration "
        "attributes.system.duration=600 by 500/2; "
        "job.update {\"attributes.system.duration\":600}",
        "job.validate is not called when validated");
    json_decref (final);

    ok (update (1, "attributes.system.queue", 3, JOBTAP_UPDATE_UNHANDLED_OK,
                &final, &err) == 0,
        "JOBTAP_UPDATE_UNHANDLED_OK lets an unhandled key through");
    is (dumps (final), "{\"attributes.system.queue\":3}",
        "it is in the final updates");
    json_decref (final);
    is (core_trace_text (),
        "job.validate duration=600; job.update {\"attributes.system.queue\":3}",
        "job.validate still sees the updated jobspec");
    json_t *q = json_object_get (json_object_get (
        json_object_get (job_jobspec (job_of (1)), "attributes"), "system"),
        "queue");
    isint (json_integer_value (q), 3, "the jobspec has the new value");
}

static int update_as (uint64_t id, json_t *u, uint32_t userid, int rolemask,
                      jobtap_host_error_t *err)
{
    int rc;
    memset (err, 0, sizeof (*err));
    core_trace_reset ();
    rc = jobtap_host_job_update_ex (id, u, userid, rolemask,
                                    JOBTAP_UPDATE_UNHANDLED_OK, NULL, err);
    json_decref (u);
    return rc;
}

/* The builtin .update-duration: the owner's duration update is validated
 * (job.validate does not judge it), which makes another user's job
 * immutable to its user, as in Flux. */
static void test_owner (void)
{
    jobtap_host_error_t err;
    const char *dur = "attributes.system.duration";
    json_t *spec;

    for (uint64_t id = 2; id <= 3; id++) {
        spec = json_pack ("{s:i s:{s:{s:i}}}", "version", 1, "attributes",
                          "system", "duration", 100);
        /* job 2 is user 1000's, job 3 the owner's (uid 0) */
        if (jobtap_host_job_new (0, id, id == 2 ? 1000 : 0, 16, 1.0, spec,
                                 &err)
            < 0)
            bail_out ("job_new: %s", err.text);
        json_decref (spec);
    }
    ok (update_as (2, json_pack ("{s:i}", dur, 700), 1000, JOBTAP_ROLE_USER,
                   &err)
                == -1
            && !strcmp (err.text, "validate: 700"),
        "a user's duration update is judged by job.validate");
    ok (update_as (2, json_pack ("{s:i}", dur, 700), 0, JOBTAP_ROLE_OWNER,
                   &err)
            == 0,
        "the owner's is not (.update-duration validated it)");
    ok (strstr (core_trace_text (), "job.validate") == NULL,
        "job.validate was not called");
    isint (duration_of (job_jobspec (job_of (2))), 700, "it is applied");
    errno = 0;
    ok (update_as (2, json_pack ("{s:i}", dur, 200), 1000, JOBTAP_ROLE_USER,
                   &err)
                == -1
            && errno == EPERM,
        "the job's user cannot update it after that (EPERM)");
    is (err.text, "job is immutable due to previous instance owner update",
        "with Flux's message");
    ok (update_as (2, json_pack ("{s:i}", dur, 300), 0, JOBTAP_ROLE_OWNER,
                   &err)
            == 0,
        "the owner still can");

    ok (update_as (3, json_pack ("{s:i}", dur, 700), 0, JOBTAP_ROLE_OWNER,
                   &err)
            == 0,
        "the owner's update of the owner's own job skips job.validate too");
    ok (update_as (3, json_pack ("{s:i}", dur, 200), 1000, JOBTAP_ROLE_USER,
                   &err)
            == 0,
        "but does not make it immutable");

    ok (update_as (3, json_pack ("{s:i s:i}", dur, 700,
                                 "attributes.system.queue", 1),
                   0, JOBTAP_ROLE_OWNER, &err)
                == -1
            && !strcmp (err.text, "validate: 700"),
        "an owner's update of a key no handler validated is judged whole");
    ok (update_as (3, json_pack ("{s:f}", dur, -5.), 0, JOBTAP_ROLE_OWNER,
                   &err)
                == -1
            && !strcmp (err.text, "duration must not be negative"),
        ".update-duration refuses a negative duration");

    /* loaded again with owner-allow-any = 0: the owner is judged too */
    json_t *conf = json_pack ("{s:i}", "owner-allow-any", 0);
    ok (jobtap_host_plugin_remove (".update-duration", &err) == 0
            && jobtap_host_plugin_load (".update-duration", conf, &err) == 0,
        ".update-duration loaded again with owner-allow-any = 0");
    json_decref (conf);
    ok (update_as (3, json_pack ("{s:i}", dur, 700), 0, JOBTAP_ROLE_OWNER,
                   &err)
                == -1
            && !strcmp (err.text, "validate: 700"),
        "then the owner's duration update is judged by job.validate");
}

static void test_inactive (void)
{
    jobtap_host_error_t err;

    if (jobtap_host_job_inactive (1) < 0)
        bail_out ("job_inactive failed");
    ok (update (1, "attributes.system.duration", 5, 0, NULL, &err) == -1,
        "an inactive job cannot be updated");
    is (err.text, "job is inactive", "with its reason");
}

int main (void)
{
    jobtap_host_error_t err;
    struct jt_plugin *a;
    json_t *spec;

    core_host_setup (&ops, NULL, NULL);
    a = core_plugin_make (host_runtime (), "a");
    if (flux_plugin_add_handler (a->p, "job.update.attributes.system.duration",
                                 cb_duration, NULL) < 0
        || flux_plugin_add_handler (a->p, "job.validate", cb_validate, NULL)
               < 0
        || flux_plugin_add_handler (a->p, "job.update", cb_job_update, NULL)
               < 0)
        bail_out ("add_handler failed");
    spec = json_pack ("{s:i s:{s:{s:i}}}", "version", 1, "attributes",
                      "system", "duration", 100);
    if (jobtap_host_job_new (0, 1, 1000, 16, 1.0, spec, &err) < 0)
        bail_out ("job_new: %s", err.text);
    json_decref (spec);

    test_rejections ();
    test_check_only ();
    test_accepted ();
    test_owner ();
    test_inactive ();

    core_host_teardown ();
    done_testing ();
}
