/* The host API's job paths with plugins loaded from DSOs: jobs_restore
 * (replay after a scheduler restart, each plugin in its own load sort
 * order) and
 * job_update_ex (keys no plugin handles follow the scheduler's rules);
 * what holding many jobs needs: a growing table, expiry without scans,
 * jobspecs kept compact and read back intact. */
#include <errno.h>
#include <malloc.h>
#include <string.h>

#include "host.h"
#include "tap.h"
#include "util.h"

static jobtap_host_error_t err;

static void load_plugins (const char *sort)
{
    char text[2048];
    snprintf (text, sizeof (text),
              "[job-manager]\nplugins = [ { load = \"%s\" },"
              " { load = \"%s\", conf = { sort = \"%s\" } } ]\n",
              plugin_path ("policy.so"), plugin_path ("order.so"), sort);
    ok (jobtap_host_init (&test_ops, NULL) == 0
            && jobtap_host_load_config (write_config ("restore.conf", text),
                                        &err) == 0,
        "load policy.so and order.so (sort=%s)", sort);
}

static json_t *restored (int id, int state)
{
    return json_pack ("{s:i s:i s:i s:f s:o s:i}", "id", id, "userid", 1,
                      "urgency", 16, "t_submit", 1.0, "jobspec",
                      jobspec_make (NULL), "state", state);
}

/* The "order: <id>" lines order.so logged, joined with spaces. */
static void order_seen (char *buf, size_t len)
{
    size_t i;
    json_t *v;
    buf[0] = '\0';
    json_array_foreach (test_log, i, v) {
        const char *s = json_string_value (v);
        unsigned long id;
        if (sscanf (s, "order: %lu", &id) == 1)
            snprintf (buf + strlen (buf), len - strlen (buf), "%s%lu",
                      buf[0] ? " " : "", id);
    }
}

static void test_restore (void)
{
    const char *modes[] = { "state", "-state", "none" };
    const char *want[] = { "2 1 4 3", "3 1 4 2", "1 2 3 4" };
    char got[256];

    for (int m = 0; m < 3; m++) {
        load_plugins (modes[m]);
        test_reset ();
        json_t *jobs = json_pack ("[o o o o]",
                                  restored (1, JOBTAP_STATE_SCHED),
                                  restored (2, JOBTAP_STATE_DEPEND),
                                  restored (3, JOBTAP_STATE_RUN),
                                  restored (4, JOBTAP_STATE_SCHED));
        isint (jobtap_host_jobs_restore (jobs, &err), 4,
                "sort=%s: 4 jobs restored", modes[m]);
        order_seen (got, sizeof (got));
        is (got, want[m], "sort=%s: order.so got job.new in its order",
            modes[m]);
        int64_t prio = -5;
        ok (jobtap_host_job_priority (4, &prio) == 0 && prio == 16,
            "sort=%s: restored jobs reach SCHED with priority 16", modes[m]);
        json_t *info = jobtap_host_job_info (4);
        json_t *submit = json_array_get (json_object_get (info, "eventlog"), 0);
        json_int_t uid = -1, urg = -1;
        const char *name = NULL;
        ok (json_unpack (submit, "{s:s s:{s:I s:I !}}", "name", &name,
                         "context", "userid", &uid, "urgency", &urg) == 0
                && !strcmp (name, "submit") && uid == 1 && urg == 16,
            "sort=%s: a restored job's submit event: {userid: 1, urgency: 16}",
            modes[m]);
        json_decref (info);
        test_reset ();
        isint (jobtap_host_jobs_restore (jobs, &err), 0,
                "sort=%s: restoring known jobs restores nothing", modes[m]);
        ok (log_count ("restore: skipping invalid or known job entry") == 4,
            "sort=%s: ... and logs each skipped entry", modes[m]);
        json_decref (jobs);
        jobtap_host_fini ();
    }
    ok (jobtap_host_jobs_restore (NULL, &err) < 0 && errno == EINVAL,
        "restore of a non-array: EINVAL");
}

static void test_update_ex (void)
{
    uint64_t token;
    json_t *u, *final = NULL;

    load_plugins ("none");
    json_t *js = jobspec_make (NULL);
    jobtap_host_submit (js, 1, 16, 1.0, 0, NULL, &token, &err);
    jobtap_host_job_new (token, 7, 1, 16, 1.0, NULL, &err);
    json_decref (js);

    u = json_pack ("{s:s}", "attributes.system.comment", "hi");
    ok (jobtap_host_job_update (7, u, 1, JOBTAP_ROLE_USER, NULL, &err) < 0,
        "job_update: a key no plugin handles is refused (Flux)");
    is (err.text, "update of attributes.system.comment not supported",
        "... with Flux's message");
    ok (jobtap_host_job_update_ex (7, u, 1, JOBTAP_ROLE_USER,
                                   JOBTAP_UPDATE_UNHANDLED_OK, &final, &err)
            == 0,
        "job_update_ex UNHANDLED_OK: the same key is accepted");
    ok (final && json_equal (final, u), "... and returned as the update");
    json_decref (final);
    final = NULL;
    json_decref (u);

    u = json_pack ("{s:s s:s}", "attributes.system.policy-test", "fail",
                   "attributes.system.comment", "x");
    ok (jobtap_host_job_update_ex (7, u, 1, JOBTAP_ROLE_USER,
                                   JOBTAP_UPDATE_UNHANDLED_OK, &final, &err)
            < 0,
        "job_update_ex: a handler's refusal still refuses");
    is (err.text, "rejecting update: fail", "... with its message");
    json_decref (u);
    json_decref (final);
    jobtap_host_fini ();
}

/* Many jobs: the table grows and every job stays reachable; unbound
 * submissions expire oldest first without scanning the table. */
static void test_many_jobs (void)
{
    enum { N = 10000 }; /* > 2 x 4096: the table grows */
    char text[256];
    uint64_t token, first = 0, last = 0;
    int found = 0;

    snprintf (text, sizeof (text),
              "[slurm-jobtap]\nprovisional-max = 100\n");
    ok (jobtap_host_init (&test_ops, NULL) == 0
            && jobtap_host_load_config (write_config ("many.conf", text), &err)
                   == 0,
        "builtins only, provisional-max = 100");
    for (int id = 1; id <= N; id++) {
        json_t *js = jobspec_make (NULL);
        jobtap_host_submit (js, 1, 16, 1.0, 0, NULL, &token, &err);
        jobtap_host_job_new (token, id, 1, 16, 1.0, NULL, &err);
        json_decref (js);
    }
    for (int id = 1; id <= N; id++) {
        int64_t p;
        if (jobtap_host_job_priority (id, &p) == 0 && p == 16)
            found++;
    }
    isint (found, N, "all %d jobs are found with their priority", N);
    isint (jobtap_host_job_state (N), JOBTAP_STATE_SCHED, "job_state: SCHED");
    ok (jobtap_host_job_state (N + 100) < 0 && errno == ENOENT,
        "job_state of an unknown job: -1, ENOENT");
    for (int i = 0; i < 150; i++) {
        json_t *js = jobspec_make (NULL);
        jobtap_host_submit (js, 1, 16, 1.0, 0, NULL, &token, &err);
        json_decref (js);
        if (i == 0)
            first = token;
        last = token;
    }
    ok (jobtap_host_job_new (first, N + 1, 1, 16, 1.0, NULL, &err) < 0
            && errno == ENOENT,
        "the oldest of 150 unbound submissions expired (limit 100)");
    ok (jobtap_host_job_new (last, N + 2, 1, 16, 1.0, NULL, &err) == 0,
        "the newest is still there");
    jobtap_host_fini ();
}

/* Jobspecs at rest are kept as text (the most recent 256 as trees): an
 * old job's jobspec reads back whole for plugins, updates and job_info. */
static void test_compact_jobspecs (void)
{
    enum { N = 600 };
    uint64_t token;
    int64_t prio = -1;
    json_t *u, *info, *final = NULL;
    const char *comment = NULL;
    json_int_t policy_prio = 0;

    load_plugins ("none");
    for (int id = 1; id <= N; id++) {
        json_t *js = jobspec_make ("{s:{s:i}}", "policy", "priority", id);
        jobtap_host_submit (js, 1, 16, 1.0, 0, NULL, &token, &err);
        jobtap_host_job_new (token, id, 1, 16, 1.0, NULL, &err);
        json_decref (js);
    }
    ok (jobtap_host_job_priority (1, &prio) == 0 && prio == 1,
        "job 1 got its priority from its jobspec at job.new");
    ok (jobtap_host_job_urgency (1, 10) == 0
            && jobtap_host_job_priority (1, &prio) == 0 && prio == 1,
        "after %d more jobs, job.state.priority still reads job 1's jobspec",
        N - 1);
    u = json_pack ("{s:s}", "attributes.system.comment", "late");
    ok (jobtap_host_job_update_ex (1, u, 1, JOBTAP_ROLE_USER,
                                   JOBTAP_UPDATE_UNHANDLED_OK, &final, &err)
            == 0,
        "an update of old job 1 is accepted");
    json_decref (u);
    json_decref (final);
    for (int id = N + 1; id <= N + 300; id++) { /* push job 1 out again */
        json_t *js = jobspec_make (NULL);
        jobtap_host_submit (js, 1, 16, 1.0, 0, NULL, &token, &err);
        jobtap_host_job_new (token, id, 1, 16, 1.0, NULL, &err);
        json_decref (js);
    }
    info = jobtap_host_job_info (1);
    ok (info
            && json_unpack (info, "{s:{s:{s:{s:s s:{s:I}}}}}", "jobspec",
                            "attributes", "system", "comment", &comment,
                            "policy", "priority", &policy_prio) == 0
            && !strcmp (comment, "late") && policy_prio == 1,
        "job_info: job 1's jobspec has the update and its original keys");
    json_decref (info);
    jobtap_host_fini ();
}

/* With ops.compact_later, job.new leaves the tree for the host's
 * jobtap_host_compact(), which frees it and keeps the text. */
static void test_compact_later (void)
{
    enum { N = 200 };
    struct jobtap_host_ops o = test_ops;
    uint64_t token;
    size_t before, after;
    json_t *info;
    const char *comment = NULL;

    o.compact_later = true;
    o.keep_eventlog = false;
    ok (jobtap_host_init (&o, NULL) == 0
            && jobtap_host_load_config (write_config ("later.conf",
                                                      "[job-manager]\n"),
                                        &err) == 0,
        "compact_later: runtime up");
    for (int id = 1; id <= N; id++) {
        json_t *js = jobspec_make ("{s:s}", "comment", "kept");
        jobtap_host_submit (js, 1, 16, 1.0, 0, NULL, &token, &err);
        jobtap_host_job_new (token, id, 1, 16, 1.0, NULL, &err);
        json_decref (js);
    }
    /* the runtime's own trees, with its jansson pool on, are out of
     * mallinfo's view */
    before = mallinfo2 ().uordblks + jobtap_host_json_pool_bytes ();
    jobtap_host_compact ();
    after = mallinfo2 ().uordblks + jobtap_host_json_pool_bytes ();
    if (before == 0) /* valgrind and ASan keep their own heap */
        diag ("no heap statistics here: compaction not measured");
    ok (before == 0 || (before > after && before - after > (size_t)N * 500),
        "jobtap_host_compact frees the trees of %d jobs (%zu bytes)", N,
        before > after ? before - after : 0);
    info = jobtap_host_job_info (7);
    ok (info
            && json_unpack (info, "{s:{s:{s:{s:s}}}}", "jobspec", "attributes",
                            "system", "comment", &comment) == 0
            && !strcmp (comment, "kept"),
        "... and a compacted jobspec reads back");
    ok (info && json_array_size (json_object_get (info, "eventlog")) == 0
            && json_is_array (json_object_get (info, "eventlog")),
        "without keep_eventlog, job_info's eventlog is an empty array");
    json_decref (info);
    jobtap_host_fini ();
}

int main (void)
{
    test_restore ();
    test_update_ex ();
    test_many_jobs ();
    test_compact_jobspecs ();
    test_compact_later ();
    json_decref (test_log);
    json_decref (test_actions);
    done_testing ();
}
