/* submit.c: jobtap_host_submit (job.create, job.validate, dependency
 * schemes, rejections and updates), the provisional token, abort and
 * expiry, and jobtap_host_job_new, on the process's runtime with
 * in-process plugins. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flux/core.h>
#include <flux/jobtap.h>

#include "dispatch.h"
#include "host.h"
#include "job.h"
#include "jtplugin.h"
#include "runtime.h"
#include "spec.h"
#include "submit.h"
#include "core_util.h"
#include "tap.h"

static char last_log[512];

static void op_log (int level, const char *msg, void *arg)
{
    (void)level;
    (void)arg;
    snprintf (last_log, sizeof (last_log), "%s", msg);
}

static const struct jobtap_host_ops ops = {
    .log = op_log,
    .hold = core_trace_hold,
    .release = core_trace_release,
    .set_priority = core_trace_set_priority,
    .keep_eventlog = true,
};

/* attributes.system.policy of the job in args, or NULL. */
static json_t *policy_of (flux_plugin_arg_t *args)
{
    json_t *policy = NULL;
    flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN,
                            "{s:{s:{s:{s:o}}}}",
                            "jobspec", "attributes", "system", "policy",
                            &policy);
    return policy;
}

/* Plugin "a": traces its topics; job.validate follows the policy. */
static int cb_trace (flux_plugin_t *p, const char *topic,
                     flux_plugin_arg_t *args, void *arg)
{
    (void)p;
    (void)args;
    core_trace ("%s:%s", (const char *)arg, topic);
    return 0;
}

static int cb_validate (flux_plugin_t *p, const char *topic,
                        flux_plugin_arg_t *args, void *arg)
{
    json_t *policy = policy_of (args);
    const char *msg;
    json_int_t duration;

    cb_trace (p, topic, args, arg);
    if (json_unpack (policy, "{s:s}", "reject", &msg) == 0)
        return flux_jobtap_reject_job (p, args, "policy: %s", msg);
    if (json_is_true (json_object_get (policy, "reject-bare")))
        return -1;
    if (json_unpack (policy, "{s:I}", "duration", &duration) == 0
        && flux_jobtap_jobspec_update_pack (p, "{s:I}",
                                            "attributes.system.duration",
                                            duration) < 0)
        return flux_jobtap_reject_job (p, args, "update failed");
    return 0;
}

/* job.dependency.y: reject with a message if the value is "msg",
 * without one if "bare", else accept. */
static int cb_dep_y (flux_plugin_t *p, const char *topic,
                     flux_plugin_arg_t *args, void *arg)
{
    const char *value = "";
    (void)topic;
    (void)arg;
    flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:{s?s}}",
                            "dependency", "value", &value);
    if (!strcmp (value, "msg"))
        return flux_jobtap_reject_job (p, args, "y says no");
    if (!strcmp (value, "bare"))
        return -1;
    core_trace ("y:%s", value);
    return 0;
}

static void make_plugins (void)
{
    struct jt_plugin *a = core_plugin_make (host_runtime (), "a");
    struct jt_plugin *b = core_plugin_make (host_runtime (), "b");

    if (flux_plugin_add_handler (a->p, "job.create", cb_trace, "a") < 0
        || flux_plugin_add_handler (a->p, "job.validate", cb_validate, "a")
               < 0
        || flux_plugin_add_handler (a->p, "job.new", cb_trace, "a") < 0
        || flux_plugin_add_handler (a->p, "job.destroy", cb_trace, "a") < 0
        || flux_plugin_add_handler (b->p, "job.validate", cb_trace, "b") < 0
        || flux_plugin_add_handler (b->p, "job.dependency.y", cb_dep_y,
                                    NULL) < 0)
        bail_out ("add_handler failed");
}

/* A jobspec whose attributes.system is 'system' (stolen). */
static json_t *spec_with (json_t *system)
{
    return json_pack ("{s:i s:{s:o}}", "version", 1, "attributes", "system",
                      system);
}

static json_t *spec_policy (const char *fmt, ...)
{
    va_list ap;
    json_t *policy;
    va_start (ap, fmt);
    policy = json_vpack_ex (NULL, 0, fmt, ap);
    va_end (ap);
    return spec_with (json_pack ("{s:o}", "policy", policy));
}

static int submit (json_t *spec, json_t **updates, uint64_t *token,
                   jobtap_host_error_t *err)
{
    int rc;
    memset (err, 0, sizeof (*err));
    rc = jobtap_host_submit (spec, 1000, 16, 1.0, 0, updates, token, err);
    json_decref (spec);
    return rc;
}

static struct job *provisional (uint64_t token)
{
    return table_find (host_runtime (), JOBTAP_PROVISIONAL_ID_BIT | token);
}

static void test_reject (void)
{
    jobtap_host_error_t err;
    uint64_t token = 0;
    json_t *updates = NULL;

    core_trace_reset ();
    errno = 0;
    ok (submit (spec_policy ("{s:s}", "reject", "too big"), &updates, &token,
                &err) == -1,
        "a job.validate rejection fails the submission");
    is (err.text, "policy: too big", "with the plugin's message");
    isint (errno, EINVAL, "errno is EINVAL");
    ok (updates == NULL && token == 0, "no updates and no token");
    is (core_trace_text (), "a:job.create; a:job.validate; a:job.destroy",
        "job.create, job.validate (b not called), then job.destroy");

    core_trace_reset ();
    ok (submit (spec_policy ("{s:b}", "reject-bare", 1), NULL, &token, &err)
            == -1,
        "a rejection without errmsg fails the submission");
    is (err.text, "rejected by job-manager plugin",
        "with the default message");
    isint (host_runtime ()->jobs->fifo[FIFO_PROV].count, 0,
           "rejected submissions leave no provisional job");

    ok (jobtap_host_submit (NULL, 1, 16, 1.0, 0, NULL, &token, &err) == -1
            && !strcmp (err.text, "invalid argument"),
        "a NULL jobspec is an invalid argument");
    json_t *spec = json_object ();
    ok (jobtap_host_submit (spec, 1, 32, 1.0, 0, NULL, &token, &err) == -1
            && !strcmp (err.text, "invalid argument"),
        "urgency 32 is an invalid argument");
    ok (jobtap_host_submit (spec, 1, 16, 1.0, 0, NULL, NULL, &err) == -1
            && errno == EINVAL,
        "a NULL token pointer is an invalid argument");
    json_decref (spec);
}

static void test_accept (void)
{
    jobtap_host_error_t err;
    uint64_t t1 = 0, t2 = 0;
    json_t *updates = NULL;
    struct job *job;
    char *s;

    core_trace_reset ();
    ok (submit (spec_policy ("{s:i}", "duration", 60), &updates, &t1, &err)
            == 0,
        "a job with an update from job.validate is accepted");
    s = json_dumps (updates, JSON_COMPACT | JSON_SORT_KEYS);
    is (s, "{\"attributes.system.duration\":60}",
        "the update comes back in *updates");
    free (s);
    json_decref (updates);
    is (core_trace_text (), "a:job.create; a:job.validate; b:job.validate",
        "job.create, then job.validate on both plugins in load order");
    ok (t1 != 0, "a token is given");
    ok ((job = provisional (t1)) != NULL && job->token == t1,
        "the provisional job is found by its id with bit 63 set");
    ok (job && job->state == FLUX_JOB_STATE_NEW, "it is in NEW");
    ok (job
            && json_integer_value (json_object_get (
                   json_object_get (json_object_get (job_jobspec (job),
                                                     "attributes"),
                                    "system"),
                   "duration"))
                   == 60,
        "its jobspec has the update applied");
    isint (jobtap_host_job_state (JOBTAP_PROVISIONAL_ID_BIT | t1), -1,
           "the host cannot see it as a job yet");

    ok (submit (spec_policy ("{}"), &updates, &t2, &err) == 0,
        "a second submission is accepted");
    isint ((long long)(t2 - t1), 1, "its token is the next one");
    ok (updates == NULL, "with no updates: none given");
    json_decref (updates);

    core_trace_reset ();
    jobtap_host_submit_abort (t1);
    is (core_trace_text (), "a:job.destroy", "submit_abort calls job.destroy");
    ok (provisional (t1) == NULL, "the aborted job is gone");
    jobtap_host_submit_abort (t1);
    jobtap_host_submit_abort (0);
    is (core_trace_text (), "a:job.destroy",
        "aborting an unknown token or 0 does nothing");
    jobtap_host_submit_abort (t2);
    isint (host_runtime ()->jobs->fifo[FIFO_PROV].count, 0,
           "no provisional jobs are left");
}

/* The config sets provisional-max = 3. */
static void test_expiry (void)
{
    jobtap_host_error_t err;
    uint64_t t[5];

    for (int i = 0; i < 3; i++)
        if (submit (spec_policy ("{}"), NULL, &t[i], &err) < 0)
            bail_out ("submit: %s", err.text);
    isint (host_runtime ()->jobs->fifo[FIFO_PROV].count, 3,
           "three provisional jobs are kept");
    core_trace_reset ();
    last_log[0] = '\0';
    ok (submit (spec_policy ("{}"), NULL, &t[3], &err) == 0,
        "a fourth submission is accepted");
    is (core_trace_text (),
        "a:job.destroy; a:job.create; a:job.validate; b:job.validate",
        "the oldest unbound one is destroyed first");
    ok (provisional (t[0]) == NULL && provisional (t[1]) != NULL,
        "the oldest expired, the next stays");
    isint (host_runtime ()->jobs->fifo[FIFO_PROV].count, 3,
           "provisional-max bounds the provisional jobs");
    char want[128];
    snprintf (want, sizeof (want), "jobtap: expiring provisional job %ju",
              (uintmax_t)(JOBTAP_PROVISIONAL_ID_BIT | t[0]));
    is (last_log, want, "the expiry is logged");
    errno = 0;
    ok (jobtap_host_job_new (t[0], 77, 1000, 16, 1.0, NULL, &err) == -1,
        "job_new with the expired token fails");
    is (err.text, "unknown or expired submit token", "with its reason");
    isint (errno, ENOENT, "errno is ENOENT");
    for (int i = 1; i < 4; i++)
        jobtap_host_submit_abort (t[i]);
}

static void test_job_new (void)
{
    jobtap_host_error_t err;
    uint64_t token;
    int64_t prio = 0;
    struct job *job;

    if (submit (spec_policy ("{s:i}", "duration", 30), NULL, &token, &err)
        < 0)
        bail_out ("submit: %s", err.text);
    core_trace_reset ();
    ok (jobtap_host_job_new (token, 101, 2000, 20, 5.0, NULL, &err) == 0,
        "job_new binds the token to id 101");
    is (core_trace_text (), "a:job.new; priority 101 20",
        "job.new runs once, then the host gets the default priority");
    ok (provisional (token) == NULL, "the provisional id is gone");
    ok ((job = table_find (host_runtime (), 101)) != NULL
            && job->token == 0 && job->userid == 2000 && job->urgency == 20
            && job->t_submit == 5.0,
        "the job has the id, userid, urgency and t_submit given");
    isint (jobtap_host_job_state (101), JOBTAP_STATE_SCHED,
           "the job reaches SCHED");
    ok (jobtap_host_job_priority (101, &prio) == 0 && prio == 20,
        "its priority is its urgency (.priority-default)");
    ok (job
            && json_integer_value (json_object_get (
                   json_object_get (json_object_get (job_jobspec (job),
                                                     "attributes"),
                                    "system"),
                   "duration"))
                   == 30,
        "without a new jobspec the submitted one (updated) stays");

    errno = 0;
    ok (jobtap_host_job_new (0, 101, 1, 16, 1.0, NULL, &err) == -1
            && errno == EEXIST,
        "job_new of a known id fails with EEXIST");
    is (err.text, "job 101 already known", "with its reason");
    ok (jobtap_host_job_new (0, JOBTAP_PROVISIONAL_ID_BIT | 5, 1, 16, 1.0,
                             NULL, &err) == -1
            && !strcmp (err.text, "invalid argument"),
        "an id with bit 63 set is an invalid argument");
    ok (jobtap_host_job_new (0, 102, 1, -1, 1.0, NULL, &err) == -1
            && !strcmp (err.text, "invalid argument"),
        "a negative urgency is an invalid argument");

    core_trace_reset ();
    json_t *spec = spec_policy ("{s:s}", "reject", "ignored");
    ok (jobtap_host_job_new (0, 102, 3000, 16, 1.0, spec, &err) == 0,
        "job_new without a token creates a job never seen at submit");
    json_decref (spec);
    is (core_trace_text (), "a:job.create; a:job.new; priority 102 16",
        "it gets job.create and job.new, not job.validate");
    isint (jobtap_host_job_state (102), JOBTAP_STATE_SCHED,
           "the job reaches SCHED");
}

static void test_dependencies (void)
{
    jobtap_host_error_t err;
    uint64_t token;

    ok (submit (spec_with (json_pack ("{s:[{s:s s:s}]}", "dependencies",
                                      "scheme", "x", "value", "1")),
                NULL, &token, &err) == -1,
        "a submission with an unsupported dependency scheme fails");
    is (err.text, "dependency scheme \"x\" not supported", "with its reason");
    ok (submit (spec_with (json_pack ("{s:[{s:s s:s}]}", "dependencies",
                                      "scheme", "afterok", "value", "9")),
                NULL, &token, &err) == 0,
        "Slurm's afterok is accepted by the builtin .dependency-slurm");
    jobtap_host_submit_abort (token);
    core_trace_reset ();
    ok (submit (spec_with (json_pack ("{s:[{s:s s:s}]}", "dependencies",
                                      "scheme", "y", "value", "v1")),
                NULL, &token, &err) == 0,
        "a plugin's scheme accepts its dependency");
    ok (strstr (core_trace_text (), "y:v1") != NULL,
        "job.dependency.y got the dependency entry");
    jobtap_host_submit_abort (token);
    ok (submit (spec_with (json_pack ("{s:[{s:s s:s}]}", "dependencies",
                                      "scheme", "y", "value", "msg")),
                NULL, &token, &err) == -1,
        "a plugin's scheme rejects its dependency");
    is (err.text, "y says no", "with the plugin's message");
    ok (submit (spec_with (json_pack ("{s:[{s:s s:s}]}", "dependencies",
                                      "scheme", "y", "value", "bare")),
                NULL, &token, &err) == -1,
        "a bare rejection of a dependency fails");
    is (err.text, "rejected by job-manager dependency plugin",
        "with the dependency default message");
    ok (submit (spec_with (json_pack ("{s:{}}", "dependencies")), NULL,
                &token, &err) == -1,
        "dependencies that are not an array fail");
    is (err.text, "dependencies object must be an array", "with its reason");
    ok (submit (spec_with (json_pack ("{s:[{s:s}]}", "dependencies", "value",
                                      "1")),
                NULL, &token, &err) == -1,
        "a dependency without scheme fails");
    is (err.text, "dependency[0] missing string scheme", "with its reason");

    /* job_new of a job never seen: a missing scheme is an exception */
    json_t *spec = spec_with (json_pack ("{s:[{s:s s:s}]}", "dependencies",
                                         "scheme", "x", "value", "1"));
    ok (jobtap_host_job_new (0, 103, 1, 16, 1.0, spec, &err) == 0,
        "job_new without a token accepts an unsupported scheme");
    json_decref (spec);
    json_t *info = jobtap_host_job_info (103);
    json_t *ev = json_array_get (json_object_get (info, "eventlog"), 1);
    const char *name = "", *type = "", *note = "";
    int severity = -1;
    json_unpack (ev, "{s:s s:{s:s s:i s:s}}", "name", &name, "context",
                 "type", &type, "severity", &severity, "note", &note);
    ok (!strcmp (name, "exception") && !strcmp (type, "dependency")
            && severity == 4,
        "a severity 4 dependency exception follows submit");
    is (note,
        "dependency scheme \"x\" not supported (job may be stuck in DEPEND "
        "state)",
        "its note says why");
    json_decref (info);
}

static void test_submit_call (void)
{
    jobtap_host_error_t err;
    struct runtime *rt = host_runtime ();
    json_t *spec = spec_policy ("{s:s}", "reject", "called");
    struct job *job = job_create (rt, spec, 1, 16, 1.0);
    json_t *in = json_pack ("{s:i}", "extra", 1);

    json_decref (spec);
    if (!job)
        bail_out ("job_create failed");
    core_trace_reset ();
    isint (submit_call (job, "job.nobody", NULL, "dflt", &err), 0,
           "submit_call of a topic no plugin handles returns 0");
    isint (submit_call (job, "job.create", in, "dflt", &err), 1,
           "submit_call returns how many plugins handled it");
    memset (&err, 0, sizeof (err));
    isint (submit_call (job, "job.validate", NULL, "dflt", &err), -1,
           "a rejection returns -1");
    is (err.text, "policy: called", "with the plugin's message");
    is (core_trace_text (), "a:job.create; a:job.validate",
        "the calls reached the plugin");
    job_decref (job);
    json_decref (in);

    json_t *ctx = submit_context (42, 7, NULL);
    char *s = json_dumps (ctx, JSON_COMPACT | JSON_SORT_KEYS);
    is (s, "{\"urgency\":7,\"userid\":42}", "submit_context without flags");
    free (s);
    json_decref (ctx);
    int flags = 1;
    ctx = submit_context (42, 7, &flags);
    s = json_dumps (ctx, JSON_COMPACT | JSON_SORT_KEYS);
    is (s, "{\"flags\":1,\"urgency\":7,\"userid\":42}",
        "submit_context with flags");
    free (s);
    json_decref (ctx);
}

int main (void)
{
    core_host_setup (&ops, NULL, "[slurm-jobtap]\nprovisional-max = 3\n");
    make_plugins ();

    test_reject ();
    test_accept ();
    test_expiry ();
    test_job_new ();
    test_dependencies ();
    test_submit_call ();

    core_host_teardown ();
    done_testing ();
}
