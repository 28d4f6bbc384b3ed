/* priority.c: asking plugins for priorities (job.priority.get) for one
 * job and for all, on a runtime made here with in-process plugins; a
 * plugin failing for every job is skipped for the rest of a pass and
 * summed up in one line; only the yielding pass lets another thread take
 * the runtime lock in the middle. */
#include <pthread.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <flux/core.h>
#include <flux/jobtap.h>

#include "core_util.h"
#include "flux_handle.h"
#include "host.h"
#include "job.h"
#include "jtplugin.h"
#include "log.h"
#include "plugin_container.h"
#include "priority.h"
#include "runtime.h"
#include "tap.h"

static struct runtime rt;
static struct jobtap_host_ops ops;
static char last_log[512];
static char told[512];

static int loud_lines, quiet_lines; /* LOG_ERR and above, LOG_DEBUG */

static void log_sink (int level, const char *msg, void *arg)
{
    (void)arg;
    if (level <= LOG_ERR)
        loud_lines++;
    else if (level == LOG_DEBUG)
        quiet_lines++;
    snprintf (last_log, sizeof (last_log), "%s", msg);
}

static void op_set_priority (uint64_t id, int64_t priority, void *arg)
{
    char buf[64];
    (void)arg;
    snprintf (buf, sizeof (buf), "%s%ju=%jd", told[0] ? " " : "",
              (uintmax_t)id, (intmax_t)priority);
    strncat (told, buf, sizeof (told) - strlen (told) - 1);
}

static struct job *job_in_table (flux_jobid_t id, int state, int urgency)
{
    struct job *job = core_job_in_table (&rt, id, state);
    job->urgency = urgency;
    return job;
}

/* The plugin's answer, by mode (the handler's arg). */
static int calls;
static json_int_t out_seen;
static int cb_prio (flux_plugin_t *p,
                    const char *topic,
                    flux_plugin_arg_t *args,
                    void *arg)
{
    const char *mode = arg;
    json_int_t id = 0;
    (void)p;
    (void)topic;
    calls++;
    out_seen = -99;
    flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_OUT, "{s?I}", "priority",
                            &out_seen);
    flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:I}", "id", &id);
    if (!strcmp (mode, "id+100"))
        return flux_plugin_arg_pack (args, FLUX_PLUGIN_ARG_OUT, "{s:I}",
                                     "priority", id + 100);
    if (!strcmp (mode, "fail"))
        return -1;
    if (!strcmp (mode, "fail-log")) { /* as a Lua policy's error */
        flux_log (flux_jobtap_get_flux (p), LOG_ERR, "policy error for %jd",
                  (intmax_t)id);
        return -1;
    }
    if (!strcmp (mode, "negative"))
        return flux_plugin_arg_pack (args, FLUX_PLUGIN_ARG_OUT, "{s:I}",
                                     "priority", (json_int_t)-5);
    if (!strcmp (mode, "unavail"))
        return flux_jobtap_priority_unavail (p, args);
    if (!strcmp (mode, "string"))
        return flux_plugin_arg_pack (args, FLUX_PLUGIN_ARG_OUT, "{s:s}",
                                     "priority", "high");
    return 0; /* "none": no answer (unavailable) */
}

static int cb_builtin (flux_plugin_t *p,
                       const char *topic,
                       flux_plugin_arg_t *args,
                       void *arg)
{
    (void)p;
    (void)topic;
    (void)args;
    (void)arg;
    calls += 1000; /* the runtime answers for it: never called */
    return 0;
}

static void test_builtin (void)
{
    struct jt_plugin *builtin = core_plugin_make (&rt, ".priority-default");
    struct jt_plugin *other;
    struct job *job = job_in_table (1, FLUX_JOB_STATE_PRIORITY, 20);

    flux_plugin_add_handler (builtin->p, "job.priority.get", cb_builtin, NULL);
    calls = 0;
    get_priority (job);
    ok (job->state == FLUX_JOB_STATE_SCHED && job->priority == 20,
        "the builtin alone: priority = urgency (20), SCHED");
    isint (calls, 0, "...given by the runtime, no callback made");
    is (told, "1=20", "the host is told");

    other = core_plugin_make (&rt, "other.so");
    flux_plugin_add_handler (other->p, "job.priority.get", cb_prio, "none");
    job->urgency = 25;
    calls = 0;
    get_priority (job);
    isint (calls, 1, "with another plugin after it, that one is called");
    isint (out_seen, 25,
           "...and finds the builtin's answer (the urgency) in OUT");
    isint (job->priority, 25, "which is the job's priority");
    jt_retire (&rt, other);
    jt_retire (&rt, builtin);
    job_forget (job);
    told[0] = '\0';
}

/* Handlers are appended and the first match answers: replace it. */
static void set_mode (struct jt_plugin *jt, const char *mode)
{
    flux_plugin_remove_handler (jt->p, "job.priority.get");
    flux_plugin_add_handler (jt->p, "job.priority.get", cb_prio,
                             (void *)mode);
}

static void test_plugin_answers (void)
{
    struct jt_plugin *jt = core_plugin_make (&rt, "prio.so");
    struct job *job = job_in_table (7, FLUX_JOB_STATE_PRIORITY, 16);

    get_priority (job);
    ok (job->state == FLUX_JOB_STATE_PRIORITY && job->priority == -1,
        "no plugin handles job.priority.get: nothing changes");

    set_mode (jt, "none");
    get_priority (job);
    ok (job->state == FLUX_JOB_STATE_PRIORITY && job->priority == -1,
        "no answer in PRIORITY: the job waits there (unavailable)");

    set_mode (jt, "id+100");
    get_priority (job);
    ok (job->state == FLUX_JOB_STATE_SCHED && job->priority == 107,
        "the plugin's answer: priority 107, SCHED");
    is (told, "7=107", "the host is told 107");

    set_mode (jt, "none");
    last_log[0] = '\0';
    get_priority (job);
    is (last_log, "jobtap: job 7: BUG: plugin didn't return priority",
        "no answer in SCHED: logged as a plugin bug");
    isint (job->priority, 107, "...and the priority stays");

    set_mode (jt, "fail");
    get_priority (job);
    is (last_log, "jobtap: job 7: job.priority.get: callback failed",
        "a failing callback is logged");
    isint (job->priority, 107, "...and the priority stays");

    set_mode (jt, "string");
    last_log[0] = '\0';
    get_priority (job);
    like (last_log, "^jobtap: job 7: job\\.priority\\.get: .+",
          "a priority of the wrong type is logged with the unpack error");
    isint (job->priority, 107, "...and the priority stays");

    set_mode (jt, "negative");
    last_log[0] = '\0';
    get_priority (job);
    is (last_log, "jobtap: job 7: job.priority.get: priority -5 is out of "
                  "range (0..4294967295); ignored",
        "a negative priority is logged, not dropped silently");
    isint (job->priority, 107, "...and the priority stays");

    set_mode (jt, "unavail");
    job->state = FLUX_JOB_STATE_PRIORITY;
    last_log[0] = '\0';
    get_priority (job);
    is (last_log, "", "flux_jobtap_priority_unavail in PRIORITY: no log line");

    job_forget (job);
    jt_retire (&rt, jt);
    told[0] = '\0';
}

static void test_all (void)
{
    struct jt_plugin *jt = core_plugin_make (&rt, "prio.so");
    struct job *p = job_in_table (11, FLUX_JOB_STATE_PRIORITY, 16);
    struct job *s = job_in_table (12, FLUX_JOB_STATE_SCHED, 16);
    struct job *r = job_in_table (13, FLUX_JOB_STATE_RUN, 16);
    struct job *d = job_in_table (14, FLUX_JOB_STATE_DEPEND, 16);
    struct job *prov = job_in_table (JOBTAP_PROVISIONAL_ID_BIT | 1,
                                     FLUX_JOB_STATE_PRIORITY, 16);

    prov->token = 1;
    s->priority = 5;
    set_mode (jt, "id+100");
    calls = 0;
    isint (reprioritize_all (&rt), 0, "reprioritize_all works");
    isint (calls, 2, "the plugin is asked for the PRIORITY and SCHED jobs");
    ok (p->priority == 111 && p->state == FLUX_JOB_STATE_SCHED,
        "the PRIORITY job: 111, SCHED");
    isint (s->priority, 112, "the SCHED job: 112");
    ok (r->priority == -1 && d->priority == -1 && prov->priority == -1,
        "RUN, DEPEND and provisional jobs are not asked");
    ok (!strcmp (told, "11=111 12=112") || !strcmp (told, "12=112 11=111"),
        "the host is told both (%s)", told);
    jobs_free_all (&rt);

    /* The host's pass asks for SCHED jobs only: one waiting in PRIORITY
     * stays there until a plugin gives it a priority, as in Flux. */
    p = job_in_table (21, FLUX_JOB_STATE_PRIORITY, 16);
    s = job_in_table (22, FLUX_JOB_STATE_SCHED, 16);
    s->priority = 5;
    calls = 0;
    isint (reprioritize_scheduled (&rt, false), 1,
           "reprioritize_scheduled asks one job, and says so");
    isint (calls, 1, "the plugin is asked for the SCHED job only");
    ok (p->priority == -1 && p->state == FLUX_JOB_STATE_PRIORITY,
        "the PRIORITY job stays in PRIORITY, without a priority");
    isint (s->priority, 122, "the SCHED job: 122");
    jobs_free_all (&rt);
    jt_retire (&rt, jt);
}

/* A pass reuses its args from job to job: every job sees its own fields,
 * nothing a plugin added for the job before, and a value a plugin kept
 * from an earlier job keeps its value. */
static int mismatches, leftovers;
static json_t *kept;
static json_int_t kept_urgency;
static int cb_check (flux_plugin_t *p,
                     const char *topic,
                     flux_plugin_arg_t *args,
                     void *arg)
{
    json_int_t id, urgency, userid, state;
    double t_submit;
    json_t *extra = NULL, *u;
    (void)p;
    (void)topic;
    (void)arg;
    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN,
                                "{s:I s:I s:I s:I s:f s?o}", "id", &id,
                                "urgency", &urgency, "userid", &userid,
                                "state", &state, "t_submit", &t_submit,
                                "extra", &extra)
        < 0)
        return -1;
    struct job *job = table_find (&rt, id);
    if (extra)
        leftovers++;
    if (!job || job->urgency != urgency || (json_int_t)job->userid != userid
        || job->state != state || job->t_submit != t_submit)
        mismatches++;
    if (!kept
        && flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:o}",
                                   "urgency", &u)
               == 0) {
        kept = json_incref (u);
        kept_urgency = urgency;
    }
    if (flux_plugin_arg_pack (args, FLUX_PLUGIN_ARG_IN, "{s:I}", "extra", id)
        < 0)
        return -1;
    return flux_plugin_arg_pack (args, FLUX_PLUGIN_ARG_OUT, "{s:I}",
                                 "priority", urgency * 10);
}

static void test_pass_args_reused (void)
{
    struct jt_plugin *jt = core_plugin_make (&rt, "check.so");
    int wrong = 0;

    if (flux_plugin_add_handler (jt->p, "job.priority.get", cb_check, NULL)
        < 0)
        bail_out ("add_handler");
    plugin_handlers_changed ();
    for (int i = 1; i <= 40; i++) {
        struct job *job = job_in_table (100 + i, FLUX_JOB_STATE_SCHED, i % 31);
        job->userid = 1000 + i;
        job->t_submit = i + 0.5;
    }
    isint (reprioritize_all (&rt), 0, "a pass over 40 jobs");
    isint (mismatches, 0, "each job's callback saw that job's fields");
    isint (leftovers, 0, "and nothing a plugin added for the job before");
    ok (kept && json_integer_value (kept) == kept_urgency,
        "a value a plugin kept holds the urgency of its job (%jd)",
        (intmax_t)kept_urgency);
    for (int i = 1; i <= 40; i++)
        if (table_find (&rt, 100 + i)->priority != (i % 31) * 10)
            wrong++;
    isint (wrong, 0, "every job has its own priority");
    json_decref (kept);
    jobs_free_all (&rt);
    jt_retire (&rt, jt);
    told[0] = '\0';
}

/* A plugin failing for every job: its first failures are logged, then it
 * is skipped for the rest of the pass (the jobs keep their priority), and
 * one line sums it up; the next pass starts afresh. */
static void test_pass_budget (void)
{
    struct jt_plugin *jt = core_plugin_make (&rt, "prio.so");
    struct job *jobs[100];

    for (int i = 0; i < 100; i++) {
        jobs[i] = job_in_table (1000 + i, FLUX_JOB_STATE_SCHED, 16);
        jobs[i]->priority = 5;
    }
    set_mode (jt, "fail-log");
    for (int pass = 1; pass <= 2; pass++) {
        calls = loud_lines = quiet_lines = 0;
        isint (reprioritize_all (&rt), 0, "pass %d over 100 failing jobs", pass);
        isint (calls, PASS_SKIP_FAILURES,
               "pass %d: the plugin is called %d times, then skipped", pass,
               PASS_SKIP_FAILURES);
        isint (loud_lines, PASS_LOUD_FAILURES + 1,
               "pass %d: its first %d errors and one summary are logged", pass,
               PASS_LOUD_FAILURES);
        like (last_log,
              "^jobtap: prio\\.so: job\\.priority\\.get failed for 10 of 100 "
              "jobs in this pass \\(the first: job 1[0-9]{3}\\); not asked for "
              "the other 90 after 10 failures \\(they keep their priority, or "
              "wait in PRIORITY\\); 7 more log lines at debug level "
              "\\(SlurmctldDebug=debug shows them\\)$",
              "pass %d: the summary", pass);
        int kept = 0;
        for (int i = 0; i < 100; i++)
            kept += jobs[i]->priority == 5;
        isint (kept, 100, "pass %d: every job keeps its priority", pass);
    }
    ok (!rt.in_pass, "no pass runs afterwards");
    set_mode (jt, "fail-log");
    calls = loud_lines = 0;
    get_priority (jobs[0]);
    ok (calls == 1 && loud_lines == 2,
        "outside a pass a failure is logged in full (the plugin's line and "
        "the runtime's)");
    jobs_free_all (&rt);
    jt_retire (&rt, jt);
}

/* A thread waiting for the runtime lock, as a submission does. */
static volatile int waiter_in;
static void *waiter (void *arg)
{
    (void)arg;
    runtime_lock ();
    waiter_in = 1;
    runtime_unlock ();
    return NULL;
}

/* A pass from a load or reconfigure (reprioritize_all) holds the lock
 * throughout: a submission let in mid-pass would meet a half-built
 * plugin stack. The periodic pass (reprioritize_scheduled, yielding)
 * lets it in. */
static void test_yield (void)
{
    struct jt_plugin *jt = core_plugin_make (&rt, "prio.so");
    pthread_t t;

    for (int i = 0; i < 300; i++)
        job_in_table (2000 + i, FLUX_JOB_STATE_SCHED, 16);
    set_mode (jt, "id+100");
    runtime_lock ();
    waiter_in = 0;
    pthread_create (&t, NULL, waiter, NULL);
    usleep (50000); /* it blocks in runtime_lock */
    for (int pass = 0; pass < 20; pass++)
        reprioritize_all (&rt);
    isint (waiter_in, 0,
           "20 passes of reprioritize_all over 300 jobs: no other thread "
           "took the lock meanwhile");
    /* Each yield lets the waiter in only if the scheduler runs it before
     * this thread locks again: passes until it does, for up to 10 s (a
     * few on an idle machine; more under valgrind or a loaded CI). */
    int passes = 0;
    struct timespec t0, t1;
    clock_gettime (CLOCK_MONOTONIC, &t0);
    t1 = t0;
    while (!waiter_in && t1.tv_sec - t0.tv_sec < 10) {
        reprioritize_scheduled (&rt, true);
        passes++;
        clock_gettime (CLOCK_MONOTONIC, &t1);
    }
    isint (waiter_in, 1, "reprioritize_scheduled yielding let it in (pass %d)",
           passes);
    runtime_unlock ();
    pthread_join (t, NULL);
    jobs_free_all (&rt);
    jt_retire (&rt, jt);
}

int main (void)
{
    core_runtime_init (&rt, &ops);
    ops.set_priority = op_set_priority;
    rt.h = flux_handle_create (&rt); /* plugins log through it */
    runtime_log_sink (log_sink, NULL);

    test_builtin ();
    test_plugin_answers ();
    test_all ();
    test_pass_args_reused ();
    test_pass_budget ();
    test_yield ();

    core_runtime_fini (&rt);
    flux_handle_destroy (rt.h);
    runtime_log_sink (NULL, NULL);
    done_testing ();
}
