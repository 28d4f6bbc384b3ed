/* store.c and the host's store entry points (restore.c): open on a
 * missing directory, what bound jobs' events write to the journal,
 * one line for a job's events in a row, restarts simulated by
 * jobtap_host_fini/init on the same directory (a
 * kept job comes back in its state with its dependencies, flags, urgency,
 * t_submit and eventlog, with no second job.state.depend, and SCHED goes
 * through PRIORITY again; a removed dependency stays removed; another
 * user's job of that id starts anew), drop_kept and its forget lines, a
 * torn journal line, snapshot.old, store_maintain's merge, and a flush
 * that fails part way and is written again. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <flux/core.h>
#include <flux/jobtap.h>

#include "host.h"
#include "jtplugin.h"
#include "runtime.h"
#include "store.h"
#include "core_util.h"
#include "find_json.h"
#include "tap.h"

#define UNUSED __attribute__ ((unused))

static char base[64];

/* --- files ---------------------------------------------------------------- */

/* base/sub[/name], in one of a few static buffers. */
static const char *path (const char *sub, const char *name)
{
    static char p[4][256];
    static int i;
    i = (i + 1) % 4;
    snprintf (p[i], sizeof (p[i]), "%s/%s%s%s", base, sub, name ? "/" : "",
              name ? name : "");
    return p[i];
}

static void put_file (const char *p, const char *text, const char *mode)
{
    FILE *f = fopen (p, mode);
    if (!f || fputs (text, f) < 0 || fclose (f) != 0)
        bail_out ("cannot write %s", p);
}

static bool exists (const char *p)
{
    return access (p, F_OK) == 0;
}

/* The line of 'text' that begins with 'prefix', as a new string. */
static char *line_of (const char *text, const char *prefix)
{
    for (const char *s = text; s && *s;) {
        const char *nl = strchr (s, '\n');
        if (!strncmp (s, prefix, strlen (prefix)))
            return strndup (s, nl ? (size_t)(nl - s) : strlen (s));
        s = nl ? nl + 1 : NULL;
    }
    return NULL;
}

/* Whether file p has a line beginning with prefix. */
static bool has_line (const char *p, const char *prefix)
{
    char *text = core_slurp (p);
    char *l = line_of (text, prefix);
    bool found = l != NULL;
    free (l);
    free (text);
    return found;
}

/* --- the plugin ----------------------------------------------------------- */

static json_int_t id_of (flux_plugin_arg_t *args)
{
    json_int_t id = -1;
    flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:I}", "id", &id);
    return id;
}

/* job.new, traced with the job's state: jobs 300 and 301 try to get back
 * the dependency removed from them before the restart. */
static int cb_new (flux_plugin_t *p, UNUSED const char *topic,
                   flux_plugin_arg_t *args, UNUSED void *arg)
{
    json_int_t id = -1;
    int state = 0;
    flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:I s:i}", "id", &id,
                            "state", &state);
    core_trace ("new %jd state=%d", (intmax_t)id, state);
    if (id == 300 || id == 301)
        (void)flux_jobtap_dependency_add (p, id, id == 300 ? "dep-x"
                                                           : "dep-z");
    return 0;
}

/* job.dependency.test: the dependency "dep-<value>". */
static int cb_dep_test (flux_plugin_t *p, UNUSED const char *topic,
                        flux_plugin_arg_t *args, UNUSED void *arg)
{
    const char *value = "?";
    char d[64];
    flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:{s:s}}",
                            "dependency", "value", &value);
    core_trace ("dependency %jd %s", (intmax_t)id_of (args), value);
    snprintf (d, sizeof (d), "dep-%s", value);
    return flux_jobtap_dependency_add (p, id_of (args), d);
}

/* job.state.depend: job 100 gets a dependency, a flag and an event. */
static int cb_depend (flux_plugin_t *p, UNUSED const char *topic,
                      flux_plugin_arg_t *args, UNUSED void *arg)
{
    json_int_t id = id_of (args);
    core_trace ("depend %jd", (intmax_t)id);
    if (id == 100
        && (flux_jobtap_dependency_add (p, id, "hold-100") < 0
            || flux_jobtap_job_set_flag (p, id, "debug") < 0
            || flux_jobtap_event_post_pack (p, id, "test-mark", "{s:i}", "n",
                                            1) < 0))
        return flux_jobtap_error (p, args, "job.state.depend failed");
    return 0;
}

static int setups; /* runtimes made: 1 before the first restart */

/* Traces "<arg> <id>".  Before the first restart job 101 is annotated in
 * two steps, {"note":{"x":1}} then {"note":{"y":2}}, which merge. */
static int cb_state (UNUSED flux_plugin_t *p, UNUSED const char *topic,
                     flux_plugin_arg_t *args, void *arg)
{
    const char *what = arg;
    core_trace ("%s %jd", what, (intmax_t)id_of (args));
    if (setups == 1 && id_of (args) == 101)
        return flux_plugin_arg_pack (args, FLUX_PLUGIN_ARG_OUT,
                                     "{s:{s:{s:i}}}", "annotations", "note",
                                     !strcmp (what, "prio") ? "x" : "y", 1);
    return 0;
}

static struct jt_plugin *plugin;

/* A runtime (as after a slurmctld start) with plugin "t"; trace and log
 * emptied. */
static void setup (void)
{
    setups++;
    core_host_setup (&core_kept_ops, NULL, NULL);
    plugin = core_plugin_make (host_runtime (), "t");
    if (flux_plugin_add_handler (plugin->p, "job.new", cb_new, NULL) < 0
        || flux_plugin_add_handler (plugin->p, "job.dependency.test",
                                    cb_dep_test, NULL) < 0
        || flux_plugin_add_handler (plugin->p, "job.state.depend", cb_depend,
                                    NULL) < 0
        || flux_plugin_add_handler (plugin->p, "job.state.priority", cb_state,
                                    "prio") < 0
        || flux_plugin_add_handler (plugin->p, "job.state.sched", cb_state,
                                    "sched") < 0)
        bail_out ("add_handler failed");
    core_trace_reset ();
    core_log_reset ();
}

static void open_store (const char *sub)
{
    jobtap_host_error_t err;
    if (jobtap_host_store_open (path (sub, NULL), &err) < 0)
        bail_out ("store_open %s: %s", sub, err.text);
}

/* --- jobs ----------------------------------------------------------------- */

/* A jobspec with dependencies of scheme "test" of these values. */
static json_t *spec (const char *v1, const char *v2)
{
    json_t *sys = json_object (), *deps = json_array ();
    const char *v[] = {v1, v2};
    for (int i = 0; i < 2; i++)
        if (v[i])
            json_array_append_new (deps, json_pack ("{s:s s:s}", "scheme",
                                                    "test", "value", v[i]));
    if (json_array_size (deps))
        json_object_set (sys, "dependencies", deps);
    json_decref (deps);
    return json_pack ("{s:i s:{s:o}}", "version", 1, "attributes", "system",
                      sys);
}

/* Submitted and bound as a Slurm submit does it: user 1000, urgency 16,
 * t_submit = id. */
static void submit_bind (uint64_t id, json_t *jobspec)
{
    jobtap_host_error_t err;
    uint64_t token = 0;
    if (jobtap_host_submit (jobspec, 1000, 16, (double)id,
                            JOBTAP_SUBMIT_TAKE_JOBSPEC, NULL, &token, &err) < 0
        || jobtap_host_job_new (token, id, 1000, 16, (double)id, NULL, &err)
               < 0)
        bail_out ("submit/job_new %ju: %s", (uintmax_t)id, err.text);
}

/* A restore entry as the scheduler gives it (urgency 16, t_submit = id;
 * user 1000 and a jobspec without dependencies unless given). */
static json_t *entry (uint64_t id, int state, uint32_t userid, json_t *jobspec)
{
    return json_pack ("{s:I s:I s:i s:f s:o s:i}", "id", (json_int_t)id,
                      "userid", (json_int_t)(userid ? userid : 1000),
                      "urgency", 16, "t_submit", (double)id, "jobspec",
                      jobspec ? jobspec : spec (NULL, NULL), "state", state);
}

static int restore (json_t *jobs)
{
    jobtap_host_error_t err;
    int n = jobtap_host_jobs_restore (jobs, &err);
    json_decref (jobs);
    return n;
}

static json_t *info_get (uint64_t id, const char *key)
{
    json_t *info = jobtap_host_job_info (id);
    json_t *v = json_deep_copy (json_object_get (info, key));
    json_decref (info);
    return v;
}

/* A job's dependencies, flags or eventlog entry names from index 'from',
 * as "a,b". */
static const char *joined_from (uint64_t id, const char *key, size_t from)
{
    static char s[512];
    json_t *a = info_get (id, key);
    s[0] = '\0';
    for (size_t i = from; i < json_array_size (a); i++) {
        json_t *v = json_array_get (a, i);
        const char *str = json_is_string (v)
                              ? json_string_value (v)
                              : json_string_value (json_object_get (v, "name"));
        snprintf (s + strlen (s), sizeof (s) - strlen (s), "%s%s",
                  i > from ? "," : "", str ? str : "?");
    }
    json_decref (a);
    return s;
}
#define joined(id, key) joined_from ((id), (key), 0)

/* Whether 'log' begins with the entries of 'kept' (timestamps to the
 * microsecond, as the store writes them). */
static bool log_begins_with (json_t *log, json_t *kept)
{
    json_t *a, *b;
    size_t i;
    if (json_array_size (log) < json_array_size (kept))
        return false;
    json_array_foreach (kept, i, a) {
        b = json_array_get (log, i);
        double ta = json_real_value (json_object_get (a, "timestamp"));
        double tb = json_real_value (json_object_get (b, "timestamp"));
        if (!json_equal (json_object_get (a, "name"),
                         json_object_get (b, "name"))
            || !json_equal (json_object_get (a, "context") ?: json_null (),
                            json_object_get (b, "context") ?: json_null ())
            || fabs (ta - tb) > 1e-5)
            return false;
    }
    return true;
}

/* --- before the restart --------------------------------------------------- */

static json_t *kept_log_100, *kept_log_101;

static void test_first_run (void)
{
    jobtap_host_error_t err;
    struct stat st;
    char *text, *l;

    setup ();
    ok (jobtap_host_store_open (path ("state", NULL), &err) == 0,
        "store_open on a missing directory succeeds");
    ok (stat (path ("state", NULL), &st) == 0 && S_ISDIR (st.st_mode)
            && (st.st_mode & 0777) == 0700,
        "it creates the directory with mode 0700");
    text = core_slurp (path ("state", "snapshot"));
    is (text, "{\"jobtap-state\":1,\"gen\":1}\n",
        "it writes a snapshot that is just its header line");
    free (text);
    ok (exists (path ("state", "journal.1")), "and opens journal.1");
    isint (jobtap_host_store_flush (false), 0,
           "flush with nothing recorded returns 0");
    errno = 0;
    ok (jobtap_host_store_open (path ("state", NULL), &err) == -1
            && errno == EEXIST,
        "a second store_open fails with EEXIST");

    submit_bind (100, spec (NULL, NULL));
    ok (jobtap_host_job_urgency (100, 20) == 0, "job 100's urgency set to 20");
    submit_bind (101, spec (NULL, NULL));
    submit_bind (103, spec (NULL, NULL));
    submit_bind (104, spec (NULL, NULL));
    submit_bind (300, spec ("x", "y"));
    submit_bind (301, spec ("z", NULL));
    isint (jobtap_host_job_state (100), JOBTAP_STATE_DEPEND,
           "job 100 is in DEPEND");
    is (joined (100, "dependencies"), "hold-100",
        "with the dependency its job.state.depend added");
    is (joined (100, "eventlog"),
        "submit,validate,dependency-add,set-flags,test-mark,urgency",
        "job 100's eventlog before the restart");
    isint (jobtap_host_job_state (101), JOBTAP_STATE_SCHED,
           "job 101 is in SCHED");
    is (joined (300, "dependencies"), "dep-x,dep-y",
        "job 300 has dependencies dep-x and dep-y");
    ok (flux_jobtap_dependency_remove (plugin->p, 300, "dep-x") == 0
            && flux_jobtap_dependency_remove (plugin->p, 301, "dep-z") == 0,
        "dep-x is removed from job 300, dep-z from job 301");
    isint (jobtap_host_job_state (301), JOBTAP_STATE_SCHED,
           "job 301 goes on to SCHED");

    /* an event name JSON must escape, and a context longer than the
     * compact writer's first buffer */
    char big[3001];
    memset (big, 'x', sizeof (big) - 1);
    big[sizeof (big) - 1] = '\0';
    ok (flux_jobtap_event_post_pack (plugin->p, 104, "odd\"name\\\x01",
                                     "{s:s}", "big", big) == 0,
        "a plugin posts an oddly named event with a 3000-byte context");

    ssize_t n = jobtap_host_store_flush (false);
    ok (n > 0, "flush writes what the jobs recorded");
    ok (stat (path ("state", "journal.1"), &st) == 0 && st.st_size == n,
        "flush returns the bytes it appended to journal.1");
    isint (jobtap_host_store_flush (false), 0, "a second flush writes nothing");
    text = core_slurp (path ("state", "journal.1"));
    l = line_of (text, "{\"id\":100,\"reset\":true,\"e\":[");
    ok (l != NULL, "journal.1 has a reset line for job 100");
    json_t *o = l ? json_loads (l, 0, NULL) : NULL;
    json_t *first = json_array_get (json_object_get (o, "e"), 0);
    json_int_t uid = 0;
    json_unpack (first, "{s:{s:I}}", "context", "userid", &uid);
    is (json_string_value (json_object_get (first, "name")), "submit",
        "its first entry is submit");
    isint (uid, 1000, "with the job's userid");
    char *submit_ctx = json_dumps (json_object_get (first, "context"),
                                   JSON_COMPACT | JSON_SORT_KEYS);
    is (submit_ctx, "{\"flags\":0,\"urgency\":16,\"userid\":1000}",
        "its context is the submission's userid, urgency and flags");
    free (submit_ctx);
    json_decref (o);
    free (l);
    int lines = 0, bad = 0;
    for (char *s = text, *nl; s && *s; s = nl ? nl + 1 : NULL, lines++) {
        json_t *j = (nl = strchr (s, '\n'))
                        ? json_loadb (s, (size_t)(nl - s), 0, NULL) : NULL;
        bad += !json_is_integer (json_object_get (j, "id"));
        json_decref (j);
    }
    ok (lines > 6 && bad == 0,
        "every journal line is a whole JSON object with an id");
    /* one line for the events of a job that follow one another */
    int lines_101 = 0;
    size_t entries_101 = 0;
    for (char *s = text, *nl; s && *s; s = nl ? nl + 1 : NULL) {
        nl = strchr (s, '\n');
        if (strncmp (s, "{\"id\":101,", strlen ("{\"id\":101,")))
            continue;
        json_t *j = json_loadb (s, nl ? (size_t)(nl - s) : strlen (s), 0,
                                NULL);
        entries_101 += json_array_size (json_object_get (j, "e"));
        lines_101++;
        json_decref (j);
    }
    json_t *log_101 = info_get (101, "eventlog");
    ok (lines_101 == 1 && entries_101 == json_array_size (log_101)
            && entries_101 >= 5,
        "job 101's events, one after another, share one line (%d lines, "
        "%zu entries)", lines_101, entries_101);
    json_decref (log_101);
    /* the line of job 104 that has the odd event, as JSON escapes it */
    const char *odd_text = strstr (text, "\"name\":\"odd\\\"name\\\\\\u0001\"");
    const char *line = odd_text;
    while (line && line > text && line[-1] != '\n')
        line--;
    l = line ? strndup (line, strcspn (line, "\n")) : NULL;
    ok (l && !strncmp (l, "{\"id\":104,\"e\":[", 15),
        "the odd event is escaped in job 104's line");
    o = l ? json_loads (l, 0, NULL) : NULL;
    json_t *odd = json_array_get (json_object_get (o, "e"), 0);
    const char *big_back = NULL;
    json_unpack (odd, "{s:{s:s}}", "context", "big", &big_back);
    is (json_string_value (json_object_get (odd, "name")), "odd\"name\\\x01",
        "the odd event name reads back as it was posted");
    ok (big_back && !strcmp (big_back, big), "and its whole context");
    ok (json_is_real (json_object_get (odd, "timestamp"))
            && l && strstr (l, "\"timestamp\":")
            && strchr (strstr (l, "\"timestamp\":"), '.')
                   == strstr (l, ",\"name\"") - 7,
        "its timestamp has six decimals");
    json_decref (o);
    free (l);
    free (text);

    kept_log_100 = info_get (100, "eventlog");
    kept_log_101 = info_get (101, "eventlog");
    core_host_teardown ();
}

/* --- after the restart ---------------------------------------------------- */

static void test_restart (void)
{
    const char *t;
    json_t *log;

    setup ();
    open_store ("state");
    ok (!exists (path ("state", "journal.1"))
            && exists (path ("state", "journal.2")),
        "reopened: journal.1 is merged away, journal.2 begun");
    ok (has_line (path ("state", "snapshot"), "{\"jobtap-state\":1,\"gen\":2}")
            && has_line (path ("state", "snapshot"), "{\"id\":100,\"e\":["),
        "the snapshot (gen 2) has job 100");
    isint (restore (json_pack ("[o o o o o]",
                               entry (100, JOBTAP_STATE_DEPEND, 0, NULL),
                               entry (101, JOBTAP_STATE_SCHED, 0, NULL),
                               entry (103, JOBTAP_STATE_SCHED, 2000, NULL),
                               entry (300, JOBTAP_STATE_DEPEND, 0,
                                      spec ("x", "y")),
                               entry (301, JOBTAP_STATE_SCHED, 0,
                                      spec ("z", NULL)))),
           5, "restore restores the 5 jobs");
    t = core_trace_text ();

    /* job 100: DEPEND, as it was */
    isint (jobtap_host_job_state (100), JOBTAP_STATE_DEPEND,
           "job 100 comes back in DEPEND");
    is (joined (100, "dependencies"), "hold-100", "with its dependency");
    is (joined (100, "flags"), "debug", "with its flag");
    isint (jobtap_host_job_urgency_get (100), 20,
           "with the kept urgency 20, not the entry's 16");
    json_t *ts = info_get (100, "t_submit");
    ok (json_real_value (ts) == 100.0,
        "with the scheduler's t_submit 100.0 (not the submit entry's time)");
    json_decref (ts);
    isint (core_trace_count ("depend 100"), 0,
           "job.state.depend is not called again for job 100");
    ok (strstr (t, "new 100 state=2") != NULL,
        "job.new sees job 100 in DEPEND");
    ok (strstr (t, "hold 100 jobtap: hold-100") != NULL,
        "the host holds job 100 by its dependency");
    log = info_get (100, "eventlog");
    ok (log_begins_with (log, kept_log_100),
        "job 100's eventlog begins with the kept entries");
    json_decref (log);

    /* job 101: SCHED, back through PRIORITY */
    isint (jobtap_host_job_state (101), JOBTAP_STATE_SCHED,
           "job 101 comes back in SCHED");
    isint (core_trace_count ("depend 101"), 0,
           "job.state.depend is not called for job 101");
    isint (core_trace_count ("prio 101"), 1,
           "job.state.priority is called once for job 101");
    ok (strstr (t, "new 101 state=8; ")
            && strstr (strstr (t, "new 101 state=8; "), "prio 101; sched 101"),
        "job.new sees SCHED, then job.state.priority, then sched");
    json_t *ann = info_get (101, "annotations");
    char *ann_text = json_dumps (ann, JSON_COMPACT | JSON_SORT_KEYS);
    is (ann_text, "{\"note\":{\"x\":1,\"y\":1}}",
        "its kept annotations events merge as they did (an object updates "
        "an object)");
    free (ann_text);
    json_decref (ann);
    log = info_get (101, "eventlog");
    ok (log_begins_with (log, kept_log_101),
        "job 101's eventlog begins with the kept entries");
    json_decref (log);
    is (joined_from (101, "eventlog", json_array_size (kept_log_101)),
        "flux-restart,priority", "then flux-restart and priority");

    /* job 103: another user's job of that id */
    ok (strstr (core_log_text (),
                "jobtap: job 103: the kept history is not this job's "
                "(user 1000, not 2000): it starts anew") != NULL,
        "job 103 of another user: a warning is logged");
    isint (core_trace_count ("depend 103"), 1,
           "it starts anew: job.state.depend is called");
    log = info_get (103, "eventlog");
    json_int_t uid = 0;
    json_unpack (json_array_get (log, 0), "{s:{s:I}}", "context", "userid",
                 &uid);
    isint (uid, 2000, "its eventlog starts with a submit of user 2000");
    json_decref (log);

    /* the grudge set */
    is (joined (300, "dependencies"), "dep-y",
        "job 300 has only dep-y: job.dependency.test and job.new cannot "
        "bring back dep-x");
    ok (strstr (t, "dependency 300 x") != NULL,
        "(job.dependency.test was called for x)");
    ok (strstr (t, "hold 300 jobtap: dep-y")
            && !strstr (t, "hold 300 jobtap: dep-x"),
        "the host holds job 300 by dep-y, never by dep-x");
    ok (flux_jobtap_dependency_remove (plugin->p, 300, "dep-y") == 0
            && jobtap_host_job_state (300) == JOBTAP_STATE_SCHED,
        "with dep-y removed job 300 goes on to SCHED");
    isint (jobtap_host_job_state (301), JOBTAP_STATE_SCHED,
           "job 301 comes back in SCHED");
    is (joined (301, "dependencies"), "", "without a dependency");
    ok (!strstr (core_trace_text (), "hold 301"), "job 301 is never held");

    /* the kept jobs nobody restored */
    isint (jobtap_host_store_drop_kept (), 1,
           "drop_kept drops the one kept job not restored (104)");
    isint (jobtap_host_store_drop_kept (), 0, "a second drop_kept drops none");
    ok (jobtap_host_store_flush (true) > 0, "flush (sync) writes");
    ok (has_line (path ("state", "journal.2"), "{\"id\":104,\"forget\":true}"),
        "journal.2 has a forget line for job 104");
    ok (has_line (path ("state", "journal.2"), "{\"id\":103,\"reset\":true,"),
        "and a reset line for job 103, begun anew");
    ok (!has_line (path ("state", "journal.2"), "{\"id\":101,\"reset\":true,")
            && has_line (path ("state", "journal.2"), "{\"id\":101,\"e\":["),
        "job 101's new entries extend its kept history (no reset)");
    core_host_teardown ();
}

/* --- store_maintain, and a second restart --------------------------------- */

static void test_maintain (void)
{
    char *snap0, *jour0, *text, *l;

    setup ();
    open_store ("state");
    text = core_slurp (path ("state", "snapshot"));
    ok (text && !strstr (text, "{\"id\":104,"),
        "after a reopen the snapshot no longer has job 104");
    free (text);
    isint (restore (json_pack ("[o o]",
                               entry (100, JOBTAP_STATE_DEPEND, 0, NULL),
                               entry (101, JOBTAP_STATE_SCHED, 0, NULL))),
           2, "jobs 100 and 101 restored a second time");
    ok (jobtap_host_store_flush (false) > 0, "flush writes job 101's events");

    snap0 = core_slurp (path ("state", "snapshot"));
    jour0 = core_slurp (path ("state", "journal.3"));
    isint (jobtap_host_store_maintain (), 0,
           "store_maintain with little data returns 0");
    char *snap1 = core_slurp (path ("state", "snapshot"));
    char *jour1 = core_slurp (path ("state", "journal.3"));
    is (snap1, snap0, "and leaves the snapshot as it was");
    is (jour1, jour0, "and journal.3 as it was");
    ok (!exists (path ("state", "journal.4")), "and begins no journal");

    isint (store_maintain (host_runtime (), true), 0,
           "store_maintain (force) merges");
    ok (!exists (path ("state", "journal.3")), "journal.3 is gone");
    ok (exists (path ("state", "journal.4")), "journal.4 is begun");
    ok (!exists (path ("state", "snapshot.new"))
            && !exists (path ("state", "snapshot.old")),
        "no snapshot.new or snapshot.old is left");
    text = core_slurp (path ("state", "snapshot"));
    ok (has_line (path ("state", "snapshot"), "{\"jobtap-state\":1,\"gen\":4}"),
        "the snapshot is of gen 4");
    ok (text && strstr (text, "{\"id\":100,") && strstr (text, "{\"id\":101,")
            && strstr (text, "{\"id\":103,") && strstr (text, "{\"id\":300,")
            && strstr (text, "{\"id\":301,") && !strstr (text, "{\"id\":104,"),
        "it has jobs 100, 101, 103, 300 and 301, not 104");
    l = line_of (text, "{\"id\":101,");
    char *r1 = l ? strstr (l, "\"flux-restart\"") : NULL;
    ok (r1 && strstr (r1 + 1, "\"flux-restart\""),
        "job 101's line has both flux-restart entries");
    free (l);
    free (text);
    free (snap0);
    free (jour0);
    free (snap1);
    free (jour1);
    ok (jobtap_host_store_flush (false) == 0
            && jobtap_host_job_urgency (101, 7) == 0
            && jobtap_host_store_flush (false) > 0
            && has_line (path ("state", "journal.4"), "{\"id\":101,\"e\":["),
        "later events go to journal.4");
    core_host_teardown ();

    setup ();
    open_store ("state");
    isint (restore (json_pack ("[o o]",
                               entry (100, JOBTAP_STATE_DEPEND, 0, NULL),
                               entry (101, JOBTAP_STATE_SCHED, 0, NULL))),
           2, "after the merge and a reopen jobs 100 and 101 are restored");
    isint (jobtap_host_job_state (100), JOBTAP_STATE_DEPEND,
           "job 100 is in DEPEND again");
    is (joined (100, "dependencies"), "hold-100", "with its dependency");
    isint (jobtap_host_job_urgency_get (100), 20, "with urgency 20");
    isint (jobtap_host_job_state (101), JOBTAP_STATE_SCHED,
           "job 101 is in SCHED again");
    isint (jobtap_host_job_urgency_get (101), 7,
           "with the urgency set after the merge");
    ok (core_trace_count ("depend 100") == 0
            && core_trace_count ("depend 101") == 0
            && core_trace_count ("prio 101") == 1,
        "no job.state.depend again; job.state.priority once for job 101");
    isint (jobtap_host_store_drop_kept (), 3,
           "drop_kept drops jobs 103, 300 and 301");
    core_host_teardown ();
}

/* --- a torn journal line; snapshot.old ------------------------------------ */

/* (t_submit is the job id in these restores: the submit entry matches) */
#define SUBMIT(t) \
    "{\"timestamp\":" t ",\"name\":\"submit\",\"context\":{\"userid\":1000," \
    "\"urgency\":16,\"flags\":0}}"

static void test_torn (void)
{
    if (mkdir (path ("torn", NULL), 0700) < 0
        || mkdir (path ("old", NULL), 0700) < 0)
        bail_out ("mkdir failed");
    put_file (path ("torn", "snapshot"),
              "{\"jobtap-state\":1,\"gen\":1}\n{\"id\":500,\"e\":["
              SUBMIT ("500.0") ",{\"timestamp\":1.1,\"name\":\"validate\"}]}\n",
              "w");
    put_file (path ("torn", "journal.1"),
              "{\"id\":500,\"e\":[{\"timestamp\":1.2,\"name\":"
              "\"dependency-add\",\"context\":{\"description\":\"j-a\"}}]}\n",
              "w");
    put_file (path ("torn", "journal.1"),
              "{\"id\":500,\"e\":[{\"timestamp\":1.3,\"name\":"
              "\"dependency-remove\",\"con", "a");
    setup ();
    open_store ("torn");
    ok (strstr (core_log_text (), "journal.1:2: an incomplete line") != NULL,
        "a torn last line is logged");
    isint (restore (json_pack ("[o]",
                               entry (500, JOBTAP_STATE_DEPEND, 0, NULL))),
           1, "job 500 restored");
    isint (jobtap_host_job_state (500), JOBTAP_STATE_DEPEND,
           "job 500 is in DEPEND");
    is (joined (500, "dependencies"), "j-a",
        "with the dependency of the line before the torn one");
    ok (!exists (path ("torn", "journal.1")),
        "journal.1 is merged into the new snapshot");
    core_host_teardown ();

    put_file (path ("old", "snapshot.old"),
              "{\"jobtap-state\":1,\"gen\":1}\n{\"id\":501,\"e\":["
              SUBMIT ("501.0") ",{\"timestamp\":2.1,\"name\":\"validate\"}"
              ",{\"timestamp\":2.2,\"name\":\"depend\"}"
              ",{\"timestamp\":2.3,\"name\":\"priority\","
              "\"context\":{\"priority\":16}}]}\n", "w");
    put_file (path ("old", "journal.1"),
              "{\"id\":501,\"e\":[{\"timestamp\":2.4,\"name\":\"set-flags\","
              "\"context\":{\"flags\":[\"debug\"]}}]}\n", "w");
    setup ();
    open_store ("old");
    ok (strstr (core_log_text (), "read the previous snapshot") != NULL,
        "a missing snapshot: snapshot.old is read (logged)");
    isint (restore (json_pack ("[o]",
                               entry (501, JOBTAP_STATE_SCHED, 0, NULL))),
           1, "job 501 restored");
    isint (jobtap_host_job_state (501), JOBTAP_STATE_SCHED,
           "job 501 is in SCHED");
    ok (core_trace_count ("depend 501") == 0
            && core_trace_count ("prio 501") == 1,
        "it was kept: no job.state.depend, job.state.priority once");
    is (joined (501, "flags"), "debug",
        "journal.1 was applied on top of snapshot.old");
    ok (exists (path ("old", "snapshot"))
            && !exists (path ("old", "snapshot.old")),
        "a new snapshot replaces snapshot.old");
    core_host_teardown ();

    /* Cut between an urgency event and the priority that followed it in
     * the same cascade (a SIGKILL part way through a write): the history
     * leaves the job in PRIORITY, where nothing would ask for it again. */
    if (mkdir (path ("cut", NULL), 0700) < 0)
        bail_out ("mkdir failed");
    put_file (path ("cut", "snapshot"),
              "{\"jobtap-state\":1,\"gen\":1}\n{\"id\":502,\"e\":["
              SUBMIT ("502.0") ",{\"timestamp\":3.1,\"name\":\"validate\"}"
              ",{\"timestamp\":3.2,\"name\":\"depend\"}"
              ",{\"timestamp\":3.3,\"name\":\"priority\","
              "\"context\":{\"priority\":16}}]}\n", "w");
    put_file (path ("cut", "journal.1"),
              "{\"id\":502,\"e\":[{\"timestamp\":3.4,\"name\":\"urgency\","
              "\"context\":{\"userid\":1000,\"urgency\":5}}]}\n"
              "{\"id\":502,\"e\":[{\"timestamp\":3.4,\"name\":\"prio", "w");
    setup ();
    open_store ("cut");
    isint (restore (json_pack ("[o]",
                               entry (502, JOBTAP_STATE_SCHED, 0, NULL))),
           1, "job 502 restored");
    isint (jobtap_host_job_urgency_get (502), 5,
           "with the urgency of its last whole line");
    isint (jobtap_host_job_state (502), JOBTAP_STATE_SCHED,
           "kept in PRIORITY, it is asked for its priority and is in SCHED");
    ok (core_trace_count ("priority 502 5") == 1,
        "the host is told its priority: 5, its urgency's");
    ok (core_trace_count ("prio 502") == 0,
        "no second job.state.priority: it was asked, not moved");
    core_host_teardown ();
}

/* --- a flush that fails part way ------------------------------------------ */

/* Cut short by the file size limit (as by a full disk), then written by
 * the next flush: the journal must read back whole, each entry once. */
static void test_short_write (void)
{
    struct rlimit rl, low;
    ssize_t n;

    setup ();
    open_store ("short");
    submit_bind (600, spec (NULL, NULL));
    n = jobtap_host_store_flush (false);
    ok (n > 0, "job 600's history is written");
    ok (jobtap_host_job_urgency (600, 5) == 0, "job 600's urgency set to 5");
    submit_bind (601, spec (NULL, NULL));
    if (getrlimit (RLIMIT_FSIZE, &rl) < 0)
        bail_out ("getrlimit failed");
    low = rl;
    low.rlim_cur = (rlim_t)n + 10;
    signal (SIGXFSZ, SIG_IGN);
    if (setrlimit (RLIMIT_FSIZE, &low) < 0)
        bail_out ("setrlimit failed");
    isint (jobtap_host_store_flush (false), -1,
           "a flush past the file size limit fails (10 bytes written)");
    setrlimit (RLIMIT_FSIZE, &rl);
    ok (strstr (core_log_text (), "cannot write the job state") != NULL,
        "the failure is logged");
    ok (jobtap_host_store_flush (false) > 0, "the next flush writes");
    ok (strstr (core_log_text (), "is written again") != NULL,
        "which is logged too");
    core_host_teardown ();

    setup ();
    open_store ("short");
    ok (!strstr (core_log_text (), "incomplete line"),
        "reopened: the journal reads back whole");
    isint (restore (json_pack ("[o o]",
                               entry (600, JOBTAP_STATE_SCHED, 0, NULL),
                               entry (601, JOBTAP_STATE_SCHED, 0, NULL))),
           2, "jobs 600 and 601 restored");
    isint (jobtap_host_job_urgency_get (600), 5,
           "job 600 has the urgency of the line cut short");
    is (joined (600, "eventlog"),
        "submit,validate,depend,priority,urgency,priority,flux-restart,"
        "priority", "job 600's eventlog has its urgency event once");
    isint (core_trace_count ("depend 601"), 0,
           "job 601's history was kept (no job.state.depend again)");
    core_host_teardown ();
}

/* Without eventlogs kept (Slurm's host), nothing reads the submit
 * event's context at submit: the store writes it from the numbers. */
static int cb_set_queue (flux_plugin_t *p,
                         UNUSED const char *topic,
                         UNUSED flux_plugin_arg_t *args,
                         UNUSED void *arg)
{
    return flux_jobtap_jobspec_update_pack (p, "{s:s}",
                                            "attributes.system.queue",
                                            "batch");
}

static void test_submit_context_unread (void)
{
    struct jobtap_host_ops lean = core_kept_ops;
    lean.keep_eventlog = false;
    lean.jobspec_rebuild = recipe_rebuild;
    lean.jobspec_find = recipe_find;

    core_host_setup (&lean, NULL, NULL);
    open_store ("lean");
    submit_bind (700, spec (NULL, NULL));
    ok (jobtap_host_store_flush (false) > 0, "job 700's history is written");
    char *text = core_slurp (path ("lean", "journal.1"));
    char *l = text ? line_of (text, "{\"id\":700,\"reset\":true,\"e\":[")
                   : NULL;
    json_t *o = l ? json_loads (l, 0, NULL) : NULL;
    json_t *first = json_array_get (json_object_get (o, "e"), 0);
    char *ctx = json_dumps (json_object_get (first, "context"),
                            JSON_COMPACT | JSON_SORT_KEYS);
    is (json_string_value (json_object_get (first, "name")), "submit",
        "no eventlog kept: the first entry is submit");
    is (ctx, "{\"flags\":0,\"urgency\":16,\"userid\":1000}",
        "...with the submission's userid, urgency and flags");
    free (ctx);
    ok (text && strstr (text, "\"name\":\"priority\",\"context\":"
                              "{\"priority\":16}}"),
        "...and its priority entry the priority");
    /* each timestamp as Flux writes them: seconds, a point, six digits */
    int stamps = 0, unlike = 0;
    for (const char *t = text; t && (t = strstr (t, "\"timestamp\":"));
         stamps++) {
        t += strlen ("\"timestamp\":");
        size_t n = strcspn (t, ",}");
        char want[40];
        snprintf (want, sizeof (want), "%.6f", strtod (t, NULL));
        unlike += strlen (want) != n || strncmp (want, t, n) != 0;
    }
    ok (stamps >= 4 && unlike == 0,
        "its %d timestamps have their seconds and six decimals", stamps);
    json_decref (o);
    free (l);
    free (text);

    /* the written buffers serve the next records: nothing twice */
    submit_bind (701, spec (NULL, NULL));
    ok (jobtap_host_store_flush (false) > 0, "job 701's history is written");
    isint (jobtap_host_store_flush (false), 0, "...and a flush after writes nothing");
    text = core_slurp (path ("lean", "journal.1"));
    const char *l700 = text ? strstr (text, "{\"id\":700,\"reset\"") : NULL;
    const char *l701 = text ? strstr (text, "{\"id\":701,\"reset\"") : NULL;
    ok (l700 && l701 && !strstr (l700 + 1, "{\"id\":700,\"reset\"")
            && !strstr (l701 + 1, "{\"id\":701,\"reset\"")
            && !strstr (l701, "\"id\":700"),
        "the journal has each job's history once, in order");
    free (text);

    /* a policy's update, listed as text for the job's jobspec, is written
     * as that text */
    struct jt_plugin *u = core_plugin_make (host_runtime (), "u");
    if (flux_plugin_add_handler (u->p, "job.validate", cb_set_queue, NULL) < 0)
        bail_out ("add_handler failed");
    jobtap_host_error_t err;
    uint64_t token = 0;
    json_t *spec702 = spec (NULL, NULL);
    char *source = json_dumps (spec702, JSON_COMPACT);
    json_decref (spec702);
    ok (jobtap_host_submit_from_source (source, strlen (source), 1000, 16,
                                        1.0, 0, NULL, &token, &err) == 0
            && jobtap_host_job_new (token, 702, 1000, 16, 1.0, NULL, &err)
                   == 0,
        "job 702, whose queue the policy sets, submitted from its source");
    ok (jobtap_host_store_flush (false) > 0, "job 702's history is written");
    text = core_slurp (path ("lean", "journal.1"));
    const char *l702 = text ? strstr (text, "{\"id\":702,") : NULL;
    ok (l702 && strstr (l702, "\"name\":\"jobspec-update\",\"context\":"
                              "{\"attributes.system.queue\":\"batch\"}}"),
        "its jobspec-update entry has the update");
    free (text);
    core_host_teardown ();
}

int main (void)
{
    const char *tmp = getenv ("TMPDIR");
    snprintf (base, sizeof (base), "%s/test_store.XXXXXX",
              tmp && *tmp && strlen (tmp) < 32 ? tmp : "/tmp");
    if (!mkdtemp (base))
        bail_out ("mkdtemp failed");

    test_first_run ();
    test_restart ();
    test_maintain ();
    test_torn ();
    test_short_write ();
    test_submit_context_unread ();

    json_decref (kept_log_100);
    json_decref (kept_log_101);
    core_rm_tree (base);
    done_testing ();
}
