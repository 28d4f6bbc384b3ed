/* The jobtap host driven through host.h with the test plugins. */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <flux/core.h>
#include <flux/jobtap.h>

#include "host.h"
#include "tap.h"
#include "find_json.h"
#include "util.h"

static jobtap_host_error_t err;

/* wrappers that drop the test's reference to the (borrowed) request */
static int svc_call (const char *topic, json_t *req, uint32_t userid,
                     uint32_t rolemask, json_t **resp,
                     jobtap_host_error_t *e)
{
    int rc = jobtap_host_service_call (topic, req, userid, rolemask, resp, e);
    json_decref (req);
    return rc;
}

static int upd_call (uint64_t id, json_t *req, uint32_t userid,
                     uint32_t rolemask, json_t **final,
                     jobtap_host_error_t *e)
{
    int rc = jobtap_host_job_update (id, req, userid, rolemask, final, e);
    json_decref (req);
    return rc;
}

static void start (const char *plugins_toml)
{
    char text[4096];
    test_reset ();
    snprintf (text, sizeof (text), "[job-manager]\nplugins = [\n%s\n]\n",
              plugins_toml);
    if (jobtap_host_init (&test_ops, NULL) < 0
        || jobtap_host_load_config (write_config ("host.toml", text), &err)
               < 0)
        bail_out ("start: %s", err.text);
}

static void stop (void)
{
    jobtap_host_fini ();
}

static char *load_entry (const char *name, const char *extra)
{
    static char buf[8][1024];
    static int slot;
    char *s = buf[slot++ % 8];
    snprintf (s, 1024, "{ load = \"%s\"%s%s },", plugin_path (name),
              extra ? ", " : "", extra ? extra : "");
    return s;
}

static int submit (json_t *jobspec, int urgency, uint64_t *token,
                   json_t **updates)
{
    int rc = jobtap_host_submit (jobspec, 1000, urgency, 1.0, 0, updates,
                                 token, &err);
    json_decref (jobspec);
    return rc;
}

static int new_job (uint64_t id, json_t *jobspec, int urgency)
{
    uint64_t token = 0;
    if (submit (jobspec, urgency, &token, NULL) < 0)
        return -1;
    return jobtap_host_job_new (token, id, 1000, urgency, 1.0, NULL, &err);
}

static int64_t prio (uint64_t id)
{
    int64_t p = -100;
    jobtap_host_job_priority (id, &p);
    return p;
}

static int state (uint64_t id)
{
    json_t *o = jobtap_host_job_info (id);
    int s = json_integer_value (json_object_get (o, "state"));
    json_decref (o);
    return s;
}

static void is_actions (const char *want, const char *msg)
{
    char *s = actions_str ();
    is (s, want, "%s", msg);
    free (s);
    json_array_clear (test_actions);
}

/* The args.so sequence for one job through its whole life. */
static void test_sequence (void)
{
    static const char *want[] = {
        "job.create: state=NEW prio=-1",
        "job.validate: state=NEW prio=-1",
        "job.new: state=NEW prio=-1",
        "job.event.validate: state=DEPEND",
        "job.state.depend: state=DEPEND",
        "job.event.depend: state=PRIORITY",
        "job.state.priority: state=PRIORITY",
        "job.priority.get",
        "job.event.priority: state=SCHED prio=16",
        "job.state.sched: state=SCHED prio=16",
        "job.event.annotations: state=SCHED",
        "job.event.alloc: state=RUN",
        "job.state.run: state=RUN",
        "job.event.start",
        "job.event.finish: state=CLEANUP",
        "job.state.cleanup",
        "job.event.release",
        "job.event.free",
        "job.event.clean: state=INACTIVE",
        "job.state.inactive",
        "job.inactive-add",
        "job.destroy",
        NULL,
    };
    size_t i, k = 0;
    json_t *v;
    bool in_order = true;

    start (load_entry ("args.so", NULL));
    ok (new_job (100, jobspec_make (NULL), 16) == 0, "submit + job_new");
    is_actions ("priority 100 16", "default priority = urgency is reported");
    json_t *R = json_loads ("{\"version\": 1, \"execution\": {\"R_lite\": "
                            "[{\"rank\": \"0\", \"children\": {\"core\": "
                            "\"0-1\"}}], \"nodelist\": [\"n1\"]}}",
                            0, NULL);
    ok (jobtap_host_job_run (100, R) == 0, "job_run with an R");
    json_decref (R);
    json_t *info = jobtap_host_job_info (100);
    is (json_string_value (json_object_get (
            json_object_get (json_object_get (info, "annotations"), "sched"),
            "resource_summary")),
        "rank0/core[0-1]",
        "annotations.sched.resource_summary, as Flux's schedulers give it");
    json_decref (info);
    ok (jobtap_host_job_finish (100, JOBTAP_RESULT_COMPLETED, 0, NULL) == 0,
        "job_finish");
    ok (jobtap_host_job_inactive (100) == 0, "job_inactive");
    json_array_foreach (test_log, i, v) {
        const char *line = json_string_value (v);
        if (strncmp (line, "args-check: ", 12) != 0)
            continue;
        if (strstr (line, "job.priority.get"))
            continue; /* only on reprioritize */
        if (!want[k] || !strstr (line, want[k])) {
            if (want[k] && !strcmp (want[k], "job.priority.get")) {
                k++;
                if (want[k] && strstr (line, want[k])) {
                    k++;
                    continue;
                }
            }
            diag ("unexpected at %zu: %s (want %s)", k, line,
                  want[k] ? want[k] : "end");
            in_order = false;
            break;
        }
        k++;
        if (want[k] && !strcmp (want[k], "job.priority.get"))
            k++;
    }
    ok (in_order && want[k] == NULL,
        "args.so saw all topics in Flux's order with the right states");
    isint (log_count ("args-check: .*: OK$"), 21,
           "21 OK lines, as flux-core's test of args.c counts");
    stop ();
}

static void test_reject (void)
{
    uint64_t token = 0;
    start (load_entry ("policy.so", NULL));

    ok (submit (jobspec_make ("{s:{s:s}}", "policy", "reject", "too big"), 16,
                &token, NULL) < 0 && errno == EINVAL,
        "validate reject with a message");
    is (err.text, "policy: too big", "... message is the plugin's");
    ok (submit (jobspec_make ("{s:{s:b}}", "policy", "reject-default", 1), 16,
                &token, NULL) < 0,
        "reject_job with NULL fmt");
    is (err.text, "rejected by job-manager plugin 'policy.so'",
        "... default message names the plugin");
    ok (submit (jobspec_make ("{s:{s:b}}", "policy", "fail-bare", 1), 16,
                &token, NULL) < 0,
        "bare -1 from validate rejects");
    is (err.text, "rejected by job-manager plugin", "... generic message");
    ok (submit (jobspec_make ("{s:{s:b}}", "policy", "create-reject", 1), 16,
                &token, NULL) < 0,
        "job.create can reject");
    is (err.text, "create-reject: nope", "... with its message");
    ok (submit (jobspec_make ("{s:[{s:s}]}", "dependencies", "scheme", "nope"),
                16, &token, NULL) < 0,
        "an unknown dependency scheme rejects");
    is (err.text, "dependency scheme \"nope\" not supported",
        "... dependency scheme \"nope\" not supported");
    ok (submit (jobspec_make ("{s:[{s:i}]}", "dependencies", "value", 1), 16,
                &token, NULL) < 0,
        "a dependency without scheme rejects");
    is (err.text, "dependency[0] missing string scheme", "... message");
    ok (submit (jobspec_make ("{s:{}}", "dependencies"), 16, &token, NULL) < 0,
        "dependencies must be an array");
    is (err.text, "dependencies object must be an array", "... message");
    ok (submit (jobspec_make ("{s:[{s:s s:s}]}", "dependencies", "scheme",
                              "test", "value", "bad"),
                16, &token, NULL) < 0,
        "a dependency plugin can reject");
    is (err.text, "bad dependency value", "... with its message");

    const char *slurm[] = { "after", "afterany", "afterok", "afternotok",
                            "singleton", NULL };
    for (int i = 0; slurm[i]; i++) {
        json_t *js = jobspec_make ("{s:[{s:s s:s}]}", "dependencies",
                                   "scheme", slurm[i], "value", "42");
        ok (submit (js, 16, &token, NULL) == 0
                && jobtap_host_job_new (token, 200 + i, 1000, 16, 1.0, NULL,
                                        &err) == 0
                && state (200 + i) == JOBTAP_STATE_SCHED,
            "Slurm scheme %s is accepted and the job is not held", slurm[i]);
    }
    is_actions ("priority 200 16; priority 201 16; priority 202 16; "
                "priority 203 16; priority 204 16",
                "no hold for Slurm-native dependencies");
    stop ();
}

static void test_dependency (void)
{
    json_t *resp = NULL;
    start (load_entry ("policy.so", NULL));

    ok (new_job (300, jobspec_make ("{s:[{s:s s:s}]}", "dependencies",
                                    "scheme", "test", "value", "abc"), 16)
            == 0,
        "job with a jobtap dependency is accepted");
    isint (state (300), JOBTAP_STATE_DEPEND, "job sits in DEPEND");
    isint (prio (300), -1, "priority is unset (-1)");
    is_actions ("hold 300 jobtap: test=abc",
                "the job is held with the dependency as reason");
    json_t *info = jobtap_host_job_info (300);
    is (json_string_value (json_array_get (json_object_get (info,
                                                            "dependencies"),
                                           0)),
        "test=abc", "job_info lists the dependency");
    json_decref (info);
    ok (svc_call ("job-manager.policy.undep",
                                  json_pack ("{s:I s:s}", "id", (json_int_t)300,
                                             "description", "test=abc"),
                                  0, JOBTAP_ROLE_OWNER, &resp, &err) == 0,
        "service removes the dependency");
    is (json_string_value (json_object_get (resp, "removed")), "test=abc",
        "... service response payload");
    json_decref (resp);
    isint (state (300), JOBTAP_STATE_SCHED, "job moved on to SCHED");
    is_actions ("release 300; priority 300 16", "released, then prioritized");
    ok (svc_call ("job-manager.policy.undep",
                                  json_pack ("{s:I s:s}", "id", (json_int_t)300,
                                             "description", "test=abc"),
                                  0, JOBTAP_ROLE_OWNER, &resp, &err) < 0,
        "removing again fails (job no longer in DEPEND)");
    stop ();
}

static void test_priority (void)
{
    json_t *resp = NULL;
    start (load_entry ("policy.so", NULL));

    ok (new_job (400, jobspec_make ("{s:{s:i}}", "policy", "priority", 500),
                 16) == 0 && prio (400) == 500,
        "a later plugin overrides the default priority (last writer wins)");
    ok (new_job (401, jobspec_make ("{s:{s:i}}", "policy", "priority", 500), 0)
                == 0 && prio (401) == 0,
        "urgency 0 (hold) forces priority 0");
    ok (new_job (402, jobspec_make ("{s:{s:i}}", "policy", "priority", 500),
                 31) == 0 && prio (402) == 4294967295LL,
        "urgency 31 (expedite) forces priority max");
    is_actions ("priority 400 500; priority 401 0; priority 402 4294967295",
                "priorities reported");
    ok (new_job (403, jobspec_make ("{s:{s:b}}", "policy", "priority-unavail",
                                    1), 16) == 0,
        "job with priority unavailable");
    isint (state (403), JOBTAP_STATE_PRIORITY, "... stays in PRIORITY");
    isint (prio (403), JOBTAP_PRIORITY_UNAVAIL, "... priority query is -2");
    is_actions ("hold 403 jobtap: priority unavailable", "... and is held");
    ok (svc_call ("job-manager.policy.release",
                                  json_pack ("{s:I s:I}", "id", (json_int_t)403,
                                             "priority", (json_int_t)42000),
                                  0, JOBTAP_ROLE_USER, &resp, &err) < 0
            && errno == EPERM,
        "owner-only service refuses a user: EPERM");
    ok (svc_call ("job-manager.policy.release",
                                  json_pack ("{s:I s:I}", "id", (json_int_t)403,
                                             "priority", (json_int_t)42000),
                                  0, JOBTAP_ROLE_OWNER, &resp, &err) == 0,
        "reprioritize_job through a service");
    json_decref (resp);
    ok (state (403) == JOBTAP_STATE_SCHED && prio (403) == 42000,
        "... job is in SCHED with priority 42000");
    is_actions ("release 403; priority 403 42000", "... released");
    ok (jobtap_host_job_urgency (400, 0) == 0 && prio (400) == 0,
        "urgency change to 0 reprioritizes to 0");
    ok (jobtap_host_job_urgency (400, 16) == 0 && prio (400) == 500,
        "urgency back to 16 gives the plugin's value");
    is_actions ("priority 400 0; priority 400 500", "... both reported");
    ok (jobtap_host_reprioritize_all () > 0, "reprioritize_all");
    is_actions ("", "... nothing changed, nothing reported");
    errno = 0;
    ok (jobtap_host_job_priority (999, &(int64_t){ 0 }) < 0 && errno == ENOENT,
        "priority of an unknown job: ENOENT");
    stop ();
}

/* Builtins only: the runtime answers for .priority-default itself
 * (priority = urgency) and must give what the plugin's call would. */
static void test_default_priority (void)
{
    json_t *o;
    char *events;

    start ("");
    ok (new_job (500, jobspec_make (NULL), 16) == 0 && prio (500) == 16,
        "builtins only: priority = urgency");
    ok (new_job (501, jobspec_make (NULL), 0) == 0 && prio (501) == 0,
        "urgency 0 gives priority 0");
    ok (new_job (502, jobspec_make (NULL), 31) == 0
            && prio (502) == 4294967295LL,
        "urgency 31 gives the maximum");
    is_actions ("priority 500 16; priority 501 0; priority 502 4294967295",
                "... all reported");
    o = jobtap_host_job_info (500);
    events = json_dumps (json_object_get (o, "eventlog"), JSON_COMPACT);
    like (events, "\"name\":\"priority\",\"context\":\\{\"priority\":16\\}",
          "... the eventlog has the priority event");
    isint (state (500), JOBTAP_STATE_SCHED, "... the job is in SCHED");
    free (events);
    json_decref (o);
    ok (jobtap_host_job_urgency (500, 20) == 0 && prio (500) == 20,
        "an urgency change gives the new priority");
    is_actions ("priority 500 20", "... reported");
    isint (jobtap_host_reprioritize_all (), 3,
           "reprioritize_all asks the 3 jobs in SCHED");
    is_actions ("", "... nothing changed, nothing reported");
    stop ();
}

static void test_aux_lifetime (void)
{
    uint64_t token = 0;
    json_t *q;
    start (load_entry ("policy.so", NULL));

    ok (new_job (500, jobspec_make ("{s:{s:s}}", "policy", "tag", "t1"), 16)
            == 0,
        "job with job aux set in validate");
    ok (log_find ("^policy: job.new 500 has tag t1$") != NULL,
        "aux set on the provisional job survives into job.new");
    ok (log_count ("aux destroyed: t1") == 0, "not destroyed while active");
    jobtap_host_job_run (500, NULL);
    jobtap_host_job_finish (500, JOBTAP_RESULT_COMPLETED, 0, NULL);
    jobtap_host_job_inactive (500);
    isint (log_count ("^policy: aux destroyed: t1$"), 1,
           "destroyed once when the job goes inactive");
    ok (log_find ("job.inactive-add 500 result=completed") != NULL,
        "get_job_result in job.inactive-add gives completed");

    ok (submit (jobspec_make ("{s:{s:s}}", "policy", "tag", "t2"), 16, &token,
                NULL) == 0,
        "provisional job with aux");
    jobtap_host_submit_abort (token);
    isint (log_count ("^policy: aux destroyed: t2$"), 1,
           "submit_abort destroys the provisional job's aux");
    ok (log_count ("has tag t2") == 0, "... and job.new never ran");
    jobtap_host_submit_abort (token);
    isint (log_count ("^policy: aux destroyed: t2$"), 1,
           "aborting it again (an unknown token) destroys nothing");

    ok (new_job (501, jobspec_make ("{s:{s:s}}", "policy", "tag", "t3"), 16)
            == 0,
        "another job with aux");
    q = jobtap_host_plugin_query ("policy.so", &err);
    isint (json_integer_value (json_object_get (q, "aux_live")), 1,
           "plugin.query reports one live aux item");
    is (json_string_value (json_object_get (q, "name")), "policy.so",
        "plugin.query name is the list name");
    is (json_string_value (json_object_get (q, "path")),
        plugin_path ("policy.so"), "plugin.query path is the full path");
    json_decref (q);
    ok (jobtap_host_plugin_query ("nope.so", &err) == NULL
            && !strcmp (err.text, "nope.so: plugin not found"),
        "plugin.query of an unknown plugin fails");
    ok (jobtap_host_plugin_remove ("policy.so", &err) == 0,
        "remove the plugin");
    isint (log_count ("^policy: aux destroyed: t3$"), 1,
           "removing the plugin destroys its aux on active jobs");
    stop ();
}

/* attributes.system.<key> of a job's jobspec (from job_info), or -1. */
static json_int_t job_system_int (uint64_t id, const char *key)
{
    json_t *info = jobtap_host_job_info (id);
    json_int_t v = -1;
    (void)json_unpack (info, "{s:{s:{s:{s:I}}}}", "jobspec", "attributes",
                       "system", key, &v);
    json_decref (info);
    return v;
}

static void test_updates (void)
{
    json_t *updates = NULL, *final = NULL, *resp = NULL;
    uint64_t token = 0;
    start (load_entry ("policy.so", NULL));

    ok (submit (jobspec_make ("{s:{s:i}}", "policy", "duration", 60), 16,
                &token, &updates) == 0,
        "validate requests a jobspec update");
    ok (json_integer_value (json_object_get (updates,
                                             "attributes.system.duration"))
            == 60,
        "submit returns {attributes.system.duration: 60}");
    /* The caller's updates are shared with the job, not copied: a later
     * update of the provisional job must leave them as they were. */
    ok (svc_call ("job-manager.policy.update",
                  json_pack ("{s:I}", "id",
                             (json_int_t)(JOBTAP_PROVISIONAL_ID_BIT | token)),
                  0, JOBTAP_ROLE_OWNER, &resp, &err) == 0,
        "the provisional job is updated while the caller holds its updates");
    json_decref (resp);
    resp = NULL;
    ok (json_object_size (updates) == 1
            && !json_object_get (updates, "attributes.system.svc"),
        "... the caller's updates are unchanged");
    json_decref (updates);
    ok (jobtap_host_job_new (token, 600, 1000, 16, 1.0, NULL, &err) == 0,
        "job_new");
    ok (job_system_int (600, "duration") == 60,
        "the update was applied to the jobspec");
    json_array_clear (test_actions);
    ok (svc_call ("job-manager.policy.update",
                                  json_pack ("{s:I}", "id", (json_int_t)600),
                                  0, JOBTAP_ROLE_OWNER, &resp, &err) == 0,
        "update_id_pack from a service");
    json_decref (resp);
    is_actions ("update 600 {\"attributes.system.svc\":\"set\"}",
                "... the scheduler is notified");

    ok (upd_call (600,
                                json_pack ("{s:s}",
                                           "attributes.system.policy-test",
                                           "ok"),
                                1000, JOBTAP_ROLE_USER, &final, &err) == 0,
        "job update accepted by job.update.<key>");
    ok (json_object_size (final) == 1, "... final updates are the request");
    json_decref (final);
    ok (upd_call (600,
                                json_pack ("{s:s}",
                                           "attributes.system.policy-test",
                                           "fail"),
                                1000, JOBTAP_ROLE_USER, &final, &err) < 0,
        "job update rejected");
    is (err.text, "rejecting update: fail", "... with the plugin's message");
    ok (upd_call (600,
                                json_pack ("{s:s}", "attributes.system.other",
                                           "x"),
                                1000, JOBTAP_ROLE_USER, &final, &err) < 0,
        "update of an unhandled key fails");
    is (err.text, "update of attributes.system.other not supported",
        "... not supported");
    final = NULL;
    ok (upd_call (600,
                                json_pack ("{s:s}",
                                           "attributes.system.policy-test",
                                           "extra"),
                                1000, JOBTAP_ROLE_USER, &final, &err) == 0
            && json_object_get (final, "attributes.system.extra"),
        "a handler may add updates");
    json_decref (final);
    stop ();
}

static void start_two (const char *first, const char *second)
{
    char entries[2048];
    snprintf (entries, sizeof (entries), "%s\n%s", load_entry (first, NULL),
              load_entry (second, NULL));
    start (entries);
}

/* A jobspec update from one plugin's callback: a later plugin of the
 * stack reads the jobspec updated (as in Flux, where the args hold the
 * jobspec the update changes), an earlier one read it as it was, and an
 * object someone else still holds is copied, not changed. */
static void test_update_visibility (void)
{
    json_t *spec, *held;
    uint64_t token = 0;

    start_two ("policy.so", "args.so");
    spec = jobspec_make ("{s:{s:i} s:i}", "policy", "duration", 60,
                         "duration", 5);
    held = json_incref (json_object_get (json_object_get (spec, "attributes"),
                                         "system"));
    ok (jobtap_host_submit (spec, 1000, 16, 1.0, JOBTAP_SUBMIT_TAKE_JOBSPEC,
                            NULL, &token, &err) == 0,
        "submit, the runtime taking the jobspec");
    ok (log_find ("args-jobspec: job.validate duration=60") != NULL,
        "a later plugin reads the jobspec as updated by an earlier one");
    ok (json_integer_value (json_object_get (held, "duration")) == 5,
        "an object the submitter still holds is not changed");
    json_decref (held);
    ok (jobtap_host_job_new (token, 700, 1000, 16, 1.0, NULL, &err) == 0,
        "job_new");
    ok (job_system_int (700, "duration") == 60,
        "the job's jobspec has the update");
    stop ();

    start_two ("args.so", "policy.so");
    spec = jobspec_make ("{s:{s:i} s:i}", "policy", "duration", 60,
                         "duration", 5);
    ok (jobtap_host_submit (spec, 1000, 16, 1.0, 0, NULL, &token, &err) == 0
            && json_integer_value (json_object_get (
                   json_object_get (json_object_get (spec, "attributes"),
                                    "system"),
                   "duration")) == 5,
        "without TAKE_JOBSPEC the caller's jobspec stays as it was");
    json_decref (spec);
    ok (log_find ("args-jobspec: job.validate duration=5") != NULL,
        "an earlier plugin read the jobspec before the update");
    stop ();
}

static void test_exception (void)
{
    json_t *resp = NULL;
    start (load_entry ("policy.so", NULL));
    ok (new_job (700, jobspec_make (NULL), 16) == 0, "job");
    json_array_clear (test_actions);
    ok (svc_call ("job-manager.policy.raise",
                                  json_pack ("{s:I}", "id", (json_int_t)700),
                                  1000, JOBTAP_ROLE_USER, &resp, &err) == 0,
        "a user may call a service registered for FLUX_ROLE_USER");
    json_decref (resp);
    is_actions ("cancel 700 test raised by policy",
                "a fatal exception cancels the job");
    isint (state (700), JOBTAP_STATE_CLEANUP, "job is in CLEANUP");
    jobtap_host_job_inactive (700);
    ok (log_find ("job.inactive-add 700 result=failed") != NULL,
        "result of a non-cancel exception is failed");
    ok (svc_call ("job-manager.policy.nope", NULL, 0,
                                  JOBTAP_ROLE_OWNER, &resp, &err) < 0
            && errno == ENOSYS,
        "unknown service: ENOSYS");
    ok (new_job (701, jobspec_make (NULL), 16) == 0, "another job");
    jobtap_host_job_finish (701, JOBTAP_RESULT_TIMEOUT, 0, "time limit");
    jobtap_host_job_inactive (701);
    ok (log_find ("job.inactive-add 701 result=timeout") != NULL,
        "timeout result");
    ok (new_job (702, jobspec_make (NULL), 16) == 0, "a pending job");
    jobtap_host_job_inactive (702);
    ok (log_find ("job.inactive-add 702 result=canceled") != NULL,
        "a pending job removed from the scheduler is canceled");
    ok (jobtap_host_job_purge (702) == 0, "purge an inactive job");
    ok (jobtap_host_job_info (702) == NULL, "... it is gone");
    stop ();
}

/* --- direct flux_jobtap_* calls through api.so ---------------------- */

static flux_plugin_t **api_pp;
static int (**api_hookp) (flux_plugin_t *, const char *, flux_plugin_arg_t *);

static void api_bind (void)
{
    void *dso = dlopen (plugin_path ("api.so"), RTLD_NOW | RTLD_NOLOAD);
    if (!dso)
        bail_out ("api.so not loaded: %s", dlerror ());
    api_pp = dlsym (dso, "api_plugin");
    api_hookp = dlsym (dso, "api_hook");
    dlclose (dso);
    if (!api_pp || !api_hookp)
        bail_out ("api.so symbols missing");
}

static int in_validate_checks;
static int in_depend_checks;

static int hook (flux_plugin_t *p, const char *topic, flux_plugin_arg_t *args)
{
    flux_jobid_t id = 0;
    flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s?I}", "id", &id);
    if (!strcmp (topic, "job.validate")) {
        in_validate_checks = 1;
        errno = 0;
        if (flux_jobtap_jobspec_update_pack (p, "{s:i}", "foo.bar", 1) == 0
            || errno != EINVAL)
            in_validate_checks = 0;
        if (flux_jobtap_jobspec_update_pack (p, "{s:i}",
                                             "attributes.system.x", 1) < 0)
            in_validate_checks = 0;
        errno = 0;
        if (flux_jobtap_jobspec_update_id_pack (p, id, "{s:i}",
                                                "attributes.system.y", 1) == 0
            || errno != EINVAL)
            in_validate_checks = 0;
        if (flux_jobtap_job_event_posted (p, FLUX_JOBTAP_CURRENT_JOB, "submit")
            != 1)
            in_validate_checks = 0;
        if (flux_jobtap_job_event_posted (p, FLUX_JOBTAP_CURRENT_JOB, "alloc")
            != 0)
            in_validate_checks = 0;
        flux_plugin_arg_t *a = flux_jobtap_job_lookup (p,
                                                      FLUX_JOBTAP_CURRENT_JOB);
        if (!a)
            in_validate_checks = 0;
        flux_plugin_arg_destroy (a);
        if (flux_jobtap_raise_exception (p, FLUX_JOBTAP_CURRENT_JOB, "x", 0,
                                         "fatal in NEW") == 0)
            in_validate_checks = 0;
        if (flux_jobtap_event_post_pack (p, FLUX_JOBTAP_CURRENT_JOB, "memo",
                                         "{s:s}", "k", "v") < 0)
            in_validate_checks = 0;
        errno = 0;
        if (flux_jobtap_event_post_pack (p, FLUX_JOBTAP_CURRENT_JOB, "alloc",
                                         NULL) == 0 || errno != EPERM)
            in_validate_checks = 0;
        if (flux_jobtap_job_set_flag (p, FLUX_JOBTAP_CURRENT_JOB, "debug") < 0)
            in_validate_checks = 0;
        errno = 0;
        if (flux_jobtap_job_set_flag (p, FLUX_JOBTAP_CURRENT_JOB, "waitable")
                == 0 || errno != EINVAL)
            in_validate_checks = 0;
    }
    if (!strcmp (topic, "job.dependency.api")) {
        /* add+remove in one callback, idempotent add, grudge set */
        in_depend_checks = flux_jobtap_dependency_add (p, id, "a") == 0
                           && flux_jobtap_dependency_add (p, id, "a") == 0
                           && flux_jobtap_dependency_remove (p, id, "a") == 0
                           && flux_jobtap_dependency_add (p, id, "a") == 0
                           && flux_jobtap_dependency_add (p, id, "b") == 0;
        errno = 0;
        if (flux_jobtap_dependency_remove (p, id, "zzz") == 0
            || errno != ENOENT)
            in_depend_checks = 0;
    }
    if (!strcmp (topic, "api.test"))
        return flux_plugin_arg_pack (args, FLUX_PLUGIN_ARG_OUT, "{s:i}",
                                     "test", 42);
    return 0;
}

static void test_api (void)
{
    flux_plugin_t *p;
    flux_plugin_arg_t *args;
    flux_job_result_t result;
    flux_plugin_t *plain = flux_plugin_create ();

    start (load_entry ("api.so", NULL));
    api_bind ();
    p = *api_pp;
    *api_hookp = hook;

    ok (flux_jobtap_get_flux (p) != NULL, "get_flux works for a jobtap plugin");
    errno = 0;
    ok (flux_jobtap_get_flux (plain) == NULL && errno == EINVAL,
        "get_flux of a non-jobtap plugin: EINVAL");
    ok (new_job (800, jobspec_make (NULL), 16) == 0, "job 800");
    ok (in_validate_checks, "checks inside job.validate passed");
    json_t *info = jobtap_host_job_info (800);
    ok (json_object_get (json_object_get (json_object_get (json_object_get (
                                              info, "jobspec"), "attributes"),
                                          "system"), "x") != NULL,
        "update_pack from validate was applied");
    is (json_string_value (json_array_get (json_object_get (info, "flags"),
                                           0)),
        "debug", "set_flag debug recorded");
    json_decref (info);

    ok (new_job (801, jobspec_make ("{s:[{s:s}]}", "dependencies", "scheme",
                                    "api"), 16) == 0,
        "job 801 with api dependency");
    ok (in_depend_checks, "dependency add/remove/grudge rules hold");
    info = jobtap_host_job_info (801);
    char *deps = json_dumps (json_object_get (info, "dependencies"),
                             JSON_COMPACT);
    is (deps, "[\"b\"]", "a removed description cannot be re-added");
    free (deps);
    json_decref (info);
    ok (flux_jobtap_dependency_remove (p, 801, "b") == 0
            && state (801) == JOBTAP_STATE_SCHED,
        "removing the last dependency from outside a callback moves on");
    errno = 0;
    ok (flux_jobtap_dependency_add (p, 801, "c") < 0 && errno == EINVAL,
        "dependency_add in SCHED: EINVAL");
    errno = 0;
    ok (flux_jobtap_dependency_add (p, FLUX_JOBTAP_CURRENT_JOB, "c") < 0
            && errno == ENOENT,
        "dependency_add with CURRENT_JOB outside a callback: ENOENT");

    /* outside any callback: no current job */
    errno = 0;
    ok (flux_jobtap_jobspec_update_pack (p, "{s:i}", "attributes.x", 1) < 0
            && errno == EINVAL,
        "jobspec_update_pack with no current job: EINVAL");
    ok (flux_jobtap_jobspec_update_id_pack (p, 800, "{s:i}",
                                            "attributes.system.z", 2) == 0,
        "jobspec_update_id_pack outside a callback works");
    errno = 0;
    ok (flux_jobtap_jobspec_update_id_pack (p, 800, "{s:i}", "bad.key", 2) < 0
            && errno == EINVAL,
        "update_id_pack with a bad key: EINVAL");
    errno = 0;
    ok (flux_jobtap_jobspec_update_id_pack (p, 12345, "{s:i}",
                                            "attributes.z", 2) < 0
            && errno == EINVAL,
        "update_id_pack of an unknown job: EINVAL");
    errno = 0;
    ok (flux_jobtap_event_post_pack (p, 0, "memo", NULL) < 0
            && errno == ENOENT,
        "event_post_pack to id 0: ENOENT");
    errno = 0;
    ok (flux_jobtap_event_post_pack (NULL, 800, "memo", NULL) < 0
            && errno == EINVAL,
        "event_post_pack with NULL p: EINVAL");
    errno = 0;
    ok (flux_jobtap_job_set_flag (p, 1234, "debug") < 0 && errno == ENOENT,
        "set_flag of an unknown job: ENOENT");
    errno = 0;
    ok (flux_jobtap_job_lookup (p, 1234) == NULL && errno == ENOENT,
        "job_lookup 1234: ENOENT");
    errno = 0;
    ok (flux_jobtap_job_lookup (NULL, 800) == NULL && errno == EINVAL,
        "job_lookup (NULL): EINVAL");
    args = flux_jobtap_job_lookup (p, 800);
    json_int_t id = 0;
    ok (args
            && flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:I}", "id",
                                       &id) == 0
            && id == 800,
        "job_lookup of another job returns its args");
    flux_plugin_arg_destroy (args);
    errno = 0;
    ok (flux_jobtap_get_job_result (p, 800, &result) < 0 && errno == EINVAL,
        "get_job_result of a pending job: EINVAL");
    errno = 0;
    ok (flux_jobtap_get_job_result (p, 1234, &result) < 0 && errno == ENOENT,
        "get_job_result of an unknown job: ENOENT");
    errno = 0;
    ok (flux_jobtap_get_job_result (p, 800, NULL) < 0 && errno == EINVAL,
        "get_job_result (NULL resultp): EINVAL");
    ok (flux_jobtap_job_event_posted (p, 1234, "submit") < 0,
        "job_event_posted of an unknown job: -1");
    errno = 0;
    ok (flux_jobtap_job_subscribe (NULL, 800) < 0 && errno == ENOENT,
        "subscribe (NULL p): ENOENT");
    errno = 0;
    ok (flux_jobtap_job_subscribe (p, 0) < 0 && errno == ENOENT,
        "subscribe to id 0: ENOENT");
    errno = 0;
    flux_jobtap_job_unsubscribe (NULL, 0);
    isint (errno, 0, "unsubscribe with bad args is a no-op");
    errno = 0;
    ok (flux_jobtap_raise_exception (p, 800, NULL, 0, "x") < 0
            && errno == EINVAL,
        "raise_exception (NULL type): EINVAL");
    errno = 0;
    ok (flux_jobtap_raise_exception (p, 1234, "t", 0, "x") < 0
            && errno == ENOENT,
        "raise_exception on an unknown job: ENOENT");
    ok (flux_jobtap_raise_exception (p, 800, "info", 4, "just saying") == 0
            && state (800) == JOBTAP_STATE_SCHED,
        "a non-fatal exception does not change the state");

    errno = 0;
    ok (flux_jobtap_job_aux_set (NULL, 800, "k", (void *)1, NULL) < 0
            && errno == EINVAL,
        "job_aux_set (NULL p): EINVAL");
    errno = 0;
    ok (flux_jobtap_job_aux_set (p, 1234, "k", (void *)1, NULL) < 0
            && errno == ENOENT,
        "job_aux_set on an unknown job: ENOENT");
    ok (flux_jobtap_job_aux_set (p, 800, "k", (void *)1, NULL) == 0
            && flux_jobtap_job_aux_get (p, 800, "k") == (void *)1,
        "job_aux_set/get by id");
    ok (flux_jobtap_job_aux_delete_value (p, 800, (void *)1) == 0
            && flux_jobtap_job_aux_get (p, 800, "k") == NULL,
        "job_aux_delete_value");
    ok (flux_jobtap_job_aux_delete_value (p, 800, (void *)2) == 0,
        "job_aux_delete_value of a missing value returns 0");
    errno = 0;
    ok (flux_jobtap_job_aux_delete_value (p, 1234, (void *)2) < 0
            && errno == ENOENT,
        "job_aux_delete_value on an unknown job: ENOENT");

    args = flux_plugin_arg_create ();
    errno = 0;
    ok (flux_jobtap_call (p, 800, "job.foo", args) < 0 && errno == EINVAL,
        "flux_jobtap_call with a job.* topic: EINVAL");
    errno = 0;
    ok (flux_jobtap_call (p, 0, "api.test", args) < 0 && errno == ENOENT,
        "flux_jobtap_call on id 0: ENOENT");
    errno = 0;
    ok (flux_jobtap_call (p, 800, "api.test", NULL) < 0 && errno == EINVAL,
        "flux_jobtap_call with NULL args: EINVAL");
    int v = 0;
    ok (flux_jobtap_call (p, 800, "api.test", args) == 1
            && flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_OUT, "{s:i}",
                                       "test", &v) == 0
            && v == 42,
        "flux_jobtap_call returns the handler count and OUT args");
    flux_plugin_arg_destroy (args);

    args = flux_plugin_arg_create ();
    ok (flux_jobtap_priority_unavail (p, args) == 0
            && flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_OUT, "{s:i}",
                                       "priority", &v) == 0
            && v == -2,
        "priority_unavail packs -2");
    errno = 0;
    ok (flux_jobtap_priority_unavail (plain, args) < 0 && errno == EINVAL,
        "priority_unavail of a non-jobtap plugin: EINVAL");
    ok (flux_jobtap_error (p, args, "err %d", 1) == -1, "error returns -1");
    const char *m = NULL;
    flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_OUT, "{s:s}", "errmsg", &m);
    is (m, "err 1", "... and sets errmsg");
    char big[300];
    memset (big, 'x', sizeof (big) - 1);
    big[sizeof (big) - 1] = '\0';
    flux_jobtap_reject_job (p, args, "%s", big);
    flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_OUT, "{s:s}", "errmsg", &m);
    ok (m && strlen (m) == 159 && m[158] == '+',
        "an overlong message is truncated with '+'");
    flux_jobtap_reject_job (NULL, args, NULL);
    flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_OUT, "{s:s}", "errmsg", &m);
    is (m, "rejected by job-manager plugin 'none'",
        "reject_job with NULL p names 'none'");
    flux_plugin_arg_destroy (args);

    errno = 0;
    ok (flux_jobtap_set_load_sort_order (p, "bogus") < 0 && errno == EINVAL,
        "set_load_sort_order bogus: EINVAL");
    ok (flux_jobtap_set_load_sort_order (p, "none") == 0,
        "set_load_sort_order none");
    errno = 0;
    ok (flux_jobtap_reprioritize_job (p, FLUX_JOBTAP_CURRENT_JOB, 1) < 0
            && errno == ENOENT,
        "reprioritize_job does not special-case CURRENT_JOB");
    ok (flux_jobtap_reprioritize_job (p, 800, 77) == 0 && prio (800) == 77,
        "reprioritize_job by id");
    errno = 0;
    ok (flux_jobtap_reprioritize_all (plain) < 0 && errno == EINVAL,
        "reprioritize_all of a non-jobtap plugin: EINVAL");
    errno = 0;
    ok (flux_jobtap_prolog_start (p, "x") < 0 && errno == EINVAL,
        "prolog_start with no current job: EINVAL");
    errno = 0;
    ok (flux_jobtap_prolog_finish (p, 1, "x", 0) < 0 && errno == ENOENT,
        "prolog_finish on id 1: ENOENT");
    errno = 0;
    ok (flux_jobtap_epilog_finish (p, 800, "x", 0) < 0 && errno == EINVAL,
        "epilog_finish outside CLEANUP: EINVAL");
    errno = 0;
    ok (flux_jobtap_service_register (plain, "x", NULL, NULL) < 0
            && errno == EINVAL,
        "service_register for a non-jobtap plugin: EINVAL");
    ok (flux_jobtap_job_subscribe (p, 800) == 0, "subscribe by id");
    test_reset ();
    ok (flux_jobtap_event_post_pack (p, 800, "memo", "{s:i}", "n", 1) == 0,
        "post a memo event");
    ok (flux_jobtap_job_event_posted (p, 800, "memo") == 1,
        "job_event_posted: a known name posted");
    ok (flux_jobtap_job_event_posted (p, 800, "my-custom") == 0
            && flux_jobtap_event_post_pack (p, 800, "my-custom", NULL) == 0
            && flux_jobtap_job_event_posted (p, 800, "my-custom") == 1
            && flux_jobtap_job_event_posted (p, 800, "my-other") == 0,
        "job_event_posted: a custom name, before and after it is posted");
    *api_hookp = NULL;
    flux_plugin_destroy (plain);
    stop ();
}

static void test_cxx_and_oot (void)
{
    uint64_t token;
    char entries[2048];
    snprintf (entries, sizeof (entries), "%s\n%s",
              load_entry ("cxx.so", NULL),
              load_entry ("oot.so", "conf = { greeting = \"hi\" }"));
    start (entries);
    ok (log_find ("^oot: init greeting=hi$") != NULL,
        "out-of-tree plugin sees its conf in flux_plugin_init");
    ok (new_job (900, jobspec_make (NULL), 3) == 0 && prio (900) == 3000,
        "C++ plugin sets priority 1000*urgency");
    ok (submit (jobspec_make ("{s:{s:s}}", "job", "name", "oot-reject"), 16,
                &token, NULL) < 0
            && !strcmp (err.text, "oot: job name not allowed"),
        "out-of-tree plugin rejects");
    json_t *list = jobtap_host_plugin_list (true);
    char *s = json_dumps (list, JSON_COMPACT);
    is (s, "[\".priority-default\",\".limit-job-size\",\".limit-duration\",\".dependency-slurm\",\".update-duration\",\"cxx.so\","
           "\"oot.so\"]",
        "plugin list in load order, builtins first");
    free (s);
    json_decref (list);
    list = jobtap_host_plugin_list (false);
    isint (json_array_size (list), 2, "list without -a hides builtins");
    json_decref (list);
    stop ();
}

static void test_provisional_expiry (void)
{
    char text[1024];
    uint64_t t1, t2, t3;
    test_reset ();
    snprintf (text, sizeof (text),
              "[slurm-jobtap]\nprovisional-max = 2\n"
              "[job-manager]\nplugins = [ %s ]\n",
              load_entry ("policy.so", NULL));
    jobtap_host_init (&test_ops, NULL);
    if (jobtap_host_load_config (write_config ("exp.toml", text), &err) < 0)
        bail_out ("%s", err.text);
    submit (jobspec_make ("{s:{s:s}}", "policy", "tag", "e1"), 16, &t1, NULL);
    submit (jobspec_make ("{s:{s:s}}", "policy", "tag", "e2"), 16, &t2, NULL);
    submit (jobspec_make ("{s:{s:s}}", "policy", "tag", "e3"), 16, &t3, NULL);
    submit (jobspec_make ("{s:{s:s}}", "policy", "tag", "e4"), 16, &t3, NULL);
    ok (log_count ("aux destroyed: e1") == 1
            && log_count ("aux destroyed: e2") == 1
            && log_count ("aux destroyed: e3") == 0,
        "provisional jobs beyond provisional-max are expired, oldest first");
    errno = 0;
    ok (jobtap_host_job_new (t1, 1, 0, 16, 1.0, NULL, &err) < 0
            && errno == ENOENT,
        "binding an expired token: ENOENT");
    ok (jobtap_host_job_new (t3, 2, 0, 16, 1.0, NULL, &err) == 0,
        "binding a live token works");
    errno = 0;
    ok (jobtap_host_job_new (0, 2, 0, 16, 1.0, NULL, &err) < 0
            && errno == EEXIST,
        "a known id: EEXIST");
    json_t *js = jobspec_make ("{s:{s:s}}", "policy", "tag", "r");
    ok (jobtap_host_job_new (0, 3, 0, 16, 1.0, js, &err) == 0,
        "token 0 (restart/discovery) creates the job");
    json_decref (js);
    stop ();
    ok (log_count ("aux destroyed: e3") == 1,
        "fini destroys remaining provisional jobs' aux");
}

/* Which plugins handle a topic is remembered between calls; a handler
 * added or removed later, or a plugin loaded later, counts at once. */
static void test_late_handlers (void)
{
    uint64_t token = 0;
    json_t *resp = NULL;
    start (load_entry ("late.so", NULL));

    ok (submit (jobspec_make (NULL), 16, &token, NULL) == 0,
        "no job.validate handler: accepted");
    jobtap_host_submit_abort (token);
    ok (svc_call ("job-manager.late.arm", json_object (), 0,
                  JOBTAP_ROLE_OWNER, &resp, &err) == 0,
        "late.so adds a job.validate handler");
    json_decref (resp);
    ok (submit (jobspec_make (NULL), 16, &token, NULL) < 0,
        "the new handler runs on the next submission");
    is (err.text, "late: armed", "... and rejects it");
    ok (svc_call ("job-manager.late.disarm", json_object (), 0,
                  JOBTAP_ROLE_OWNER, &resp, &err) == 0,
        "late.so removes it");
    json_decref (resp);
    ok (submit (jobspec_make (NULL), 16, &token, NULL) == 0,
        "accepted again");
    jobtap_host_submit_abort (token);
    ok (jobtap_host_plugin_load (plugin_path ("oot.so"), NULL, &err) == 0,
        "oot.so loaded after those calls");
    ok (submit (jobspec_make ("{s:{s:s}}", "job", "name", "oot-reject"), 16, &token, NULL) < 0
            && !strcmp (err.text, "oot: job name not allowed"),
        "... its job.validate runs at once");
    ok (jobtap_host_plugin_remove ("oot.so", &err) == 0, "oot.so removed");
    ok (submit (jobspec_make ("{s:{s:s}}", "job", "name", "oot-reject"), 16,
                &token, NULL) == 0,
        "... and no longer called");
    jobtap_host_submit_abort (token);
    stop ();
}

static char *text_of (json_t *spec)
{
    return json_dumps (spec, JSON_COMPACT);
}

static int submit_text (json_t *spec, uint64_t *token)
{
    char *t = text_of (spec);
    return jobtap_host_submit_from_source (t, strlen (t), 1000, 16, 1.0, 0,
                                           NULL, token, &err);
}

static json_t *info_jobspec (uint64_t id)
{
    json_t *o = jobtap_host_job_info (id);
    json_t *spec = json_incref (json_object_get (o, "jobspec"));
    json_decref (o);
    return spec;
}

static void start_sources (const char *plugins_toml)
{
    struct jobtap_host_ops ops = test_ops;
    char text[4096];

    ops.jobspec_rebuild = recipe_rebuild;
    ops.jobspec_find = recipe_find;
    test_reset ();
    snprintf (text, sizeof (text), "[job-manager]\nplugins = [\n%s\n]\n",
              plugins_toml);
    if (jobtap_host_init (&ops, NULL) < 0
        || jobtap_host_load_config (write_config ("host.toml", text), &err)
               < 0)
        bail_out ("start_sources: %s", err.text);
    recipe_rebuilds = recipe_finds = 0;
}

/* jobtap_host_submit_from_source and jobtap_host_job_source: the jobspec
 * is made from the host's recipe only when a reader needs the tree, and a
 * job at rest keeps the recipe. */
static void test_sources (void)
{
    json_t *spec = jobspec_make ("{s:f s:s}", "duration", 60.0, "queue", "q");
    json_t *got;
    uint64_t token = 0, other = 0;
    char *t;

    start_sources (load_entry ("readspec.so", NULL));
    ok (submit_text (spec, &token) == 0, "sources: a job submitted");
    ok (log_find ("readspec: job.validate duration=60 queue=q name=\\(none\\)")
            && recipe_rebuilds == 0 && recipe_finds > 0,
        "sources: job.validate read members of the jobspec, none made");
    ok (jobtap_host_job_new (token, 501, 1000, 16, 1.0, NULL, &err) == 0
            && log_count ("readspec: job.new duration=60 queue=q") == 1,
        "sources: bound; job.new read it too");
    isint (recipe_rebuilds, 0, "sources: nothing made while no reader needs a tree");
    got = info_jobspec (501);
    ok (got && json_equal (got, spec) && recipe_rebuilds == 1,
        "sources: job_info has the host make the jobspec");
    json_decref (got);
    got = info_jobspec (501);
    ok (got && recipe_rebuilds == 1, "sources: read again, the tree is kept");
    json_decref (got);

    ok (jobtap_host_job_new (0, 502, 1000, 16, 1.0, spec, &err) == 0,
        "sources: a job made from the scheduler's record");
    t = text_of (spec);
    jobtap_host_job_source (502, t, strlen (t));
    got = info_jobspec (502);
    ok (got && json_equal (got, spec) && recipe_rebuilds == 2,
        "sources: its recipe, given by id, makes its jobspec");
    json_decref (got);

    /* unknown ids: the source is freed (the valgrind run of this test
     * fails on a leak) */
    t = text_of (spec);
    jobtap_host_job_source (12345, t, strlen (t));
    ok (recipe_rebuilds == 2, "sources: unknown ids take no recipe");
    jobtap_host_fini ();

    /* an update is listed, not applied to a tree; a later reader sees it */
    start_sources (load_entry ("readspec.so", "conf = { set-queue = \"x\" }"));
    ok (submit_text (spec, &token) == 0 && recipe_rebuilds == 0,
        "sources: a job whose queue the policy updates, no tree made");
    ok (jobtap_host_job_new (token, 503, 1000, 16, 1.0, NULL, &err) == 0
            && log_count ("readspec: job.new duration=60 queue=x") == 1
            && recipe_rebuilds == 1,
        "sources: job.new reads the updated queue, from a tree made for it");
    got = info_jobspec (503);
    is (json_string_value (json_object_get (
            json_object_get (json_object_get (got, "attributes"), "system"),
            "queue")),
        "x", "sources: the jobspec has the update");
    json_decref (got);
    jobtap_host_fini ();

    /* a plugin that wants the whole jobspec ('o') gets the tree */
    start_sources (load_entry ("policy.so", NULL));
    ok (submit_text (spec, &other) == 0 && recipe_rebuilds == 1,
        "sources: a plugin reading the jobspec whole has it made");
    jobtap_host_submit_abort (other);
    jobtap_host_fini ();

    /* a reader's mistakes are worded as for the tree */
    json_t *bad = jobspec_make ("{s:s}", "duration", "long");
    start_sources (load_entry ("readspec.so", NULL));
    ok (submit_text (bad, &other) < 0
            && log_find ("^readspec: job.validate: Expected real or integer, "
                         "got string$")
            && recipe_rebuilds == 1,
        "sources: a member of the wrong type: the unpack's error, from the tree");
    jobtap_host_fini ();
    json_decref (bad);

    struct jobtap_host_ops ops = test_ops; /* no jobspec_rebuild */
    test_reset ();
    if (jobtap_host_init (&ops, NULL) < 0)
        bail_out ("test_sources: init");
    t = text_of (spec);
    errno = 0;
    ok (jobtap_host_submit_from_source (t, strlen (t), 1000, 16, 1.0, 0, NULL,
                                        &other, &err) < 0
            && errno == EINVAL,
        "sources: a host that cannot make the jobspec cannot submit a recipe");
    jobtap_host_fini ();
    json_decref (spec);
}

int main (void)
{
    test_sequence ();
    test_reject ();
    test_dependency ();
    test_priority ();
    test_default_priority ();
    test_aux_lifetime ();
    test_updates ();
    test_update_visibility ();
    test_exception ();
    test_api ();
    test_cxx_and_oot ();
    test_provisional_expiry ();
    test_late_handlers ();
    test_sources ();
    json_decref (test_log);
    json_decref (test_actions);
    done_testing ();
}
