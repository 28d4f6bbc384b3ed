/* restore.c: jobtap_host_jobs_restore on the process's runtime with
 * in-process plugins: invalid entries skipped and counted, job.create and
 * job.new per plugin in its load sort order, dependency schemes checked,
 * then the jobs' states. */
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
#include "core_util.h"
#include "tap.h"

static int skipped_logged;

static void op_log (int level, const char *msg, void *arg)
{
    (void)level;
    (void)arg;
    if (!strncmp (msg, "restore: skipping invalid or known job entry ", 45))
        skipped_logged++;
}

static const struct jobtap_host_ops ops = {
    .log = op_log,
    .hold = core_trace_hold,
    .set_priority = core_trace_set_priority,
    .keep_eventlog = true,
};

static json_int_t id_of (flux_plugin_arg_t *args)
{
    json_int_t id = -1;
    flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:I}", "id", &id);
    return id;
}

/* Traces "<plugin> <topic-suffix> <id>" for job.create and job.new. */
static int cb_trace (flux_plugin_t *p, const char *topic,
                     flux_plugin_arg_t *args, void *arg)
{
    (void)p;
    core_trace ("%s %s %jd", (const char *)arg, topic + 4,
                (intmax_t)id_of (args));
    return 0;
}

/* Plugin a's job.new: job 11 gets a dependency. */
static int cb_a_new (flux_plugin_t *p, const char *topic,
                     flux_plugin_arg_t *args, void *arg)
{
    cb_trace (p, topic, args, arg);
    if (id_of (args) == 11
        && flux_jobtap_dependency_add (p, 11, "restored-dep") < 0)
        return flux_jobtap_error (p, args, "dependency_add failed");
    return 0;
}

/* Plugin c: job 12's priority is unavailable, others get 1000 + id. */
static int cb_c_priority (flux_plugin_t *p, const char *topic,
                          flux_plugin_arg_t *args, void *arg)
{
    json_int_t id = id_of (args);
    (void)topic;
    (void)arg;
    if (id == 12)
        return flux_jobtap_priority_unavail (p, args);
    return flux_plugin_arg_pack (args, FLUX_PLUGIN_ARG_OUT, "{s:I}",
                                 "priority", 1000 + id);
}

static void make_plugins (void)
{
    struct jt_plugin *a = core_plugin_make (host_runtime (), "a");
    struct jt_plugin *b = core_plugin_make (host_runtime (), "b");
    struct jt_plugin *c = core_plugin_make (host_runtime (), "c");

    if (flux_plugin_add_handler (a->p, "job.create", cb_trace, "a") < 0
        || flux_plugin_add_handler (a->p, "job.new", cb_a_new, "a") < 0
        || flux_plugin_add_handler (b->p, "job.create", cb_trace, "b") < 0
        || flux_plugin_add_handler (b->p, "job.new", cb_trace, "b") < 0
        || flux_plugin_add_handler (c->p, "job.create", cb_trace, "c") < 0
        || flux_plugin_add_handler (c->p, "job.new", cb_trace, "c") < 0
        || flux_plugin_add_handler (c->p, "job.state.priority", cb_c_priority,
                                    NULL) < 0
        || flux_plugin_add_handler (c->p, "job.priority.get", cb_c_priority,
                                    NULL) < 0)
        bail_out ("add_handler failed");
    ok (flux_jobtap_set_load_sort_order (a->p, "state") == 0,
        "plugin a sorts its load by state");
    ok (flux_jobtap_set_load_sort_order (b->p, "-state") == 0,
        "plugin b sorts its load by state, descending");
    ok (flux_jobtap_set_load_sort_order (c->p, "none") == 0,
        "plugin c keeps the given order");
    errno = 0;
    ok (flux_jobtap_set_load_sort_order (c->p, "sideways") == -1
            && errno == EINVAL,
        "an unknown sort order is EINVAL");
}

static json_t *entry (json_int_t id, int state)
{
    json_t *o = json_pack ("{s:I s:I s:i s:f s:{s:i}}", "id", id, "userid",
                           (json_int_t)1000, "urgency", 16, "t_submit", 2.0,
                           "jobspec", "version", 1);
    if (state)
        json_object_set_new (o, "state", json_integer (state));
    return o;
}

static void test_invalid (void)
{
    jobtap_host_error_t err;
    json_t *o = json_object ();
    json_t *a = json_array ();

    errno = 0;
    ok (jobtap_host_jobs_restore (o, &err) == -1 && errno == EINVAL,
        "restoring a non-array fails with EINVAL");
    is (err.text, "invalid argument", "with its reason");
    ok (jobtap_host_jobs_restore (a, &err) == 0,
        "restoring no jobs restores 0");
    json_decref (o);
    json_decref (a);
}

static void test_restore (void)
{
    jobtap_host_error_t err;
    json_t *jobs = json_array ();
    json_t *bad;
    json_t *spec = json_pack ("{s:i}", "version", 1);

    /* job 5 is known already */
    if (jobtap_host_job_new (0, 5, 1, 16, 1.0, spec, &err) < 0)
        bail_out ("job_new: %s", err.text);
    json_decref (spec);
    json_array_append_new (jobs, entry (10, JOBTAP_STATE_SCHED));
    json_array_append_new (jobs, entry (11, JOBTAP_STATE_DEPEND));
    bad = entry (20, 0);
    json_object_del (bad, "userid");
    json_array_append_new (jobs, bad);                     /* no userid */
    json_array_append_new (jobs, entry (12, JOBTAP_STATE_PRIORITY));
    json_array_append_new (jobs, entry (5, 0));            /* known */
    json_array_append_new (jobs, entry (0, 0));            /* id 0 */
    json_array_append_new (jobs,
                           entry (JOBTAP_PROVISIONAL_ID_BIT | 21, 0));
    bad = entry (22, 0);
    json_object_set_new (bad, "urgency", json_integer (32));
    json_array_append_new (jobs, bad);                     /* urgency */
    json_array_append_new (jobs, entry (13, 0));           /* SCHED */
    /* job 13 has a dependency scheme nobody handles */
    json_object_set_new (json_object_get (json_array_get (jobs, 8),
                                          "jobspec"),
                         "attributes",
                         json_pack ("{s:{s:[{s:s s:s}]}}", "system",
                                    "dependencies", "scheme", "zz", "value",
                                    "1"));

    core_trace_reset ();
    skipped_logged = 0;
    isint (jobtap_host_jobs_restore (jobs, &err), 4,
           "restore returns how many jobs it restored");
    isint (skipped_logged, 5, "each invalid or known entry is logged");
    json_decref (jobs);

    const char *t = core_trace_text ();
    const char *b = strstr (t, "b create");
    const char *c = strstr (t, "c create");
    char *want_a = "a create 11; a new 11; a create 12; a new 12; "
                   "a create 10; a new 10; a create 13; a new 13; ";
    ok (!strncmp (t, want_a, strlen (want_a)),
        "plugin a gets job.create, job.new per job by state, then id");
    ok (b && !strncmp (b,
                       "b create 10; b new 10; b create 13; b new 13; "
                       "b create 12; b new 12; b create 11; b new 11; ",
                       strlen ("b create 10; b new 10; b create 13; "
                               "b new 13; b create 12; b new 12; "
                               "b create 11; b new 11; ")),
        "then plugin b, by state descending, then id");
    ok (c && !strncmp (c,
                       "c create 10; c new 10; c create 11; c new 11; "
                       "c create 12; c new 12; c create 13; c new 13",
                       strlen ("c create 10; c new 10; c create 11; "
                               "c new 11; c create 12; c new 12; "
                               "c create 13; c new 13")),
        "then plugin c, in the given order");
    ok (b && c && (size_t)(b - t) == strlen (want_a) && b < c,
        "each plugin has all jobs before the next plugin starts");
    isint (core_trace_count ("create"), 12, "job.create 12 times in all");
    isint (core_trace_count (" new "), 12, "job.new 12 times in all");

    isint (jobtap_host_job_state (10), JOBTAP_STATE_SCHED, "job 10 in SCHED");
    isint (jobtap_host_job_state (11), JOBTAP_STATE_DEPEND,
           "job 11 in DEPEND (its dependency)");
    isint (jobtap_host_job_state (12), JOBTAP_STATE_PRIORITY,
           "job 12 in PRIORITY (priority unavailable)");
    isint (jobtap_host_job_state (13), JOBTAP_STATE_SCHED, "job 13 in SCHED");
    ok (strstr (t, "hold 11 jobtap: restored-dep") != NULL,
        "the host holds job 11 with its dependency");
    ok (strstr (t, "priority 10 1010") && strstr (t, "priority 13 1013"),
        "the host gets the priorities of jobs 10 and 13");
    int64_t prio = 0;
    ok (jobtap_host_job_priority (12, &prio) == 0
            && prio == JOBTAP_PRIORITY_UNAVAIL,
        "job 12's priority is unavailable");
    isint (jobtap_host_job_state (20), -1, "skipped entries are not jobs");
    isint (jobtap_host_job_state (22), -1, "(nor is the one of urgency 32)");

    json_t *info = jobtap_host_job_info (13);
    json_t *ev = json_array_get (json_object_get (info, "eventlog"), 1);
    const char *type = "", *note = "";
    json_unpack (ev, "{s:{s:s s:s}}", "context", "type", &type, "note",
                 &note);
    is (type, "dependency",
        "job 13's unsupported scheme is a dependency exception");
    is (note,
        "dependency scheme \"zz\" not supported (job may be stuck in "
        "DEPEND state)",
        "its note says why");
    json_decref (info);

    jobs = json_pack ("[o]", entry (10, 0));
    core_trace_reset ();
    isint (jobtap_host_jobs_restore (jobs, &err), 0,
           "restoring a known job again restores none");
    isint (strlen (core_trace_text ()), 0, "and calls no plugin");
    json_decref (jobs);
}

int main (void)
{
    core_host_setup (&ops, NULL, NULL);
    make_plugins ();

    test_invalid ();
    test_restore ();

    core_host_teardown ();
    done_testing ();
}
