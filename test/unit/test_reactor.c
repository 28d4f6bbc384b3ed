/* reactor.c (and flux_future_then's timeout in rpc.c): timers on the
 * runtime's thread, one-shot and repeating, reset, stop from another
 * thread, destroy from their own callback, deadline order, callbacks with
 * the runtime lock held calling the jobtap API (a dependency released, a
 * prolog finished), a removed plugin's timers and continuations that never
 * run, the thread's start and end with the runtime, and what
 * flux_reactor_run does here.
 *
 * Bounds on timing are generous: a loaded 2-core machine, or valgrind,
 * may run a callback late, never early. */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <flux/core.h>
#include <flux/jobtap.h>

#include "core_util.h"
#include "host.h"
#include "job.h"
#include "jtplugin.h"
#include "log.h"
#include "runtime.h"
#include "tap.h"

/* How long a test waits for what should happen soon, at most. */
#define PATIENCE 5.0

static double mono (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void nap (double seconds)
{
    struct timespec ts = { (time_t)seconds,
                           (long)((seconds - (time_t)seconds) * 1e9) };
    nanosleep (&ts, NULL);
}

/* Read an int the reactor's callbacks write (under the runtime lock). */
static int locked_read (const int *p)
{
    int v;
    runtime_lock ();
    v = *p;
    runtime_unlock ();
    return v;
}

/* Wait until *counter reaches n; false after 'timeout' seconds. */
static bool wait_count (const int *counter, int n, double timeout)
{
    double end = mono () + timeout;
    while (locked_read (counter) < n) {
        if (mono () > end)
            return false;
        nap (0.001);
    }
    return true;
}

/* Threads of this process, for the reactor's start and end. */
static int thread_count (void)
{
    DIR *d = opendir ("/proc/self/task");
    struct dirent *e;
    int n = 0;

    if (!d)
        return -1;
    while ((e = readdir (d)))
        if (e->d_name[0] != '.')
            n++;
    closedir (d);
    return n;
}

static char last_log[512];
static void log_sink (int level, const char *msg, void *arg)
{
    (void)level;
    (void)arg;
    snprintf (last_log, sizeof (last_log), "%s", msg);
}

/* ops.perilog_done, recorded */
static int perilog_done_count, perilog_done_status;
static bool perilog_done_epilog;
static pthread_t perilog_done_thread;
static void perilog_done (uint64_t id, bool epilog, int status,
                          const char *note, void *arg)
{
    (void)id;
    (void)note;
    (void)arg;
    perilog_done_count++;
    perilog_done_epilog = epilog;
    perilog_done_status = status;
    perilog_done_thread = pthread_self ();
}

static const struct jobtap_host_ops ops = {
    .log = log_sink,
    .hold = core_trace_hold,
    .release = core_trace_release,
    .set_priority = core_trace_set_priority,
    .perilog_done = perilog_done,
};

/* Run fn as jt's code: from a callback of jt (topic "test.run"). */
static void (*run_fn) (flux_plugin_t *p, void *arg);
static void *run_arg;
static int run_cb (flux_plugin_t *p,
                   const char *topic,
                   flux_plugin_arg_t *args,
                   void *data)
{
    (void)topic;
    (void)args;
    (void)data;
    run_fn (p, run_arg);
    return 0;
}

static struct jt_plugin *plugin_make (const char *name)
{
    struct jt_plugin *jt;
    runtime_lock ();
    jt = core_plugin_make (host_runtime (), name);
    runtime_unlock ();
    if (flux_plugin_add_handler (jt->p, "test.run", run_cb, NULL) < 0)
        bail_out ("cannot add a handler to %s", name);
    return jt;
}

static void as_plugin (struct jt_plugin *jt,
                       void (*fn) (flux_plugin_t *p, void *arg),
                       void *arg)
{
    runtime_lock ();
    run_fn = fn;
    run_arg = arg;
    jt_call (jt, "test.run", NULL);
    runtime_unlock ();
}

/* --- a callback that records when it ran ----------------------------- */

struct record {
    int count;
    double first;          /* mono () of the first call */
    double reactor_now;    /* flux_reactor_now in it */
    bool other_thread;     /* not the thread that started it */
    bool job_current;      /* a current job was found */
    pthread_t starter;
};

static void record_cb (flux_reactor_t *r, flux_watcher_t *w, int revents,
                       void *arg)
{
    struct record *rec = arg;
    (void)w;
    (void)revents;
    if (rec->count++ == 0) {
        rec->first = mono ();
        rec->reactor_now = flux_reactor_now (r);
        rec->other_thread = !pthread_equal (pthread_self (), rec->starter);
    }
}

static void test_lazy (flux_reactor_t *r, int threads_before)
{
    flux_watcher_t *w;

    isint (thread_count (), threads_before,
           "flux_get_reactor starts no thread yet");
    w = flux_timer_watcher_create (r, 1., 0., record_cb, NULL);
    ok (w && !flux_watcher_is_active (w),
        "a timer is created stopped");
    isint (thread_count (), threads_before, "... and starts no thread");
    flux_watcher_destroy (w);
    errno = 0;
    ok (!flux_timer_watcher_create (r, -1., 0., record_cb, NULL)
            && errno == EINVAL,
        "a negative 'after' is EINVAL");
    errno = 0;
    ok (!flux_timer_watcher_create (r, 0., -1., record_cb, NULL)
            && errno == EINVAL,
        "a negative 'repeat' is EINVAL");
}

static void test_one_shot (flux_reactor_t *r, int threads_before)
{
    struct record rec = { .starter = pthread_self () };
    flux_watcher_t *w = flux_timer_watcher_create (r, 0.1, 0., record_cb,
                                                   &rec);
    double t0 = mono (), now = flux_reactor_time ();

    /* Under the runtime lock, as a plugin starts one: under load the
     * 0.1 s could pass before the check, and the timer fire first. */
    runtime_lock ();
    flux_watcher_start (w);
    bool active = flux_watcher_is_active (w);
    runtime_unlock ();
    ok (active, "a started timer is active");
    isint (thread_count (), threads_before + 1,
           "the first timer started starts the reactor's thread");
    double wake = flux_watcher_next_wakeup (w);
    ok (wake > now + 0.05 && wake < now + 1.0,
        "next_wakeup is wall-clock time, about 'after' from now");
    ok (wait_count (&rec.count, 1, PATIENCE), "a 0.1 s timer fires");
    double elapsed = rec.first - t0;
    ok (elapsed >= 0.09 && elapsed < 1.0,
        "... after about 0.1 s (%.3f s)", elapsed);
    ok (rec.other_thread, "... on the reactor's thread");
    ok (rec.reactor_now > now && rec.reactor_now < now + 2.0,
        "flux_reactor_now in the callback is wall-clock time");
    nap (0.15);
    isint (locked_read (&rec.count), 1, "a one-shot timer fires once");
    ok (!flux_watcher_is_active (w), "... and is no longer active");

    flux_watcher_start (w);
    ok (wait_count (&rec.count, 2, PATIENCE),
        "started again, it fires again");
    flux_watcher_destroy (w);
}

static void test_repeat (flux_reactor_t *r)
{
    struct record rec = { .starter = pthread_self () };
    flux_watcher_t *w = flux_timer_watcher_create (r, 0.01, 0.02,
                                                   record_cb, &rec);
    int n;

    flux_watcher_start (w);
    ok (wait_count (&rec.count, 4, PATIENCE),
        "a repeating timer fires again and again");
    ok (flux_watcher_is_active (w), "... and stays active");
    flux_watcher_stop (w);
    ok (!flux_watcher_is_active (w), "stopped, it is not active");
    n = locked_read (&rec.count);
    nap (0.1);
    isint (locked_read (&rec.count), n, "... and fires no more");
    flux_watcher_destroy (w);
}

static void test_reset (flux_reactor_t *r)
{
    struct record rec = { .starter = pthread_self () };
    flux_watcher_t *w = flux_timer_watcher_create (r, 30., 0., record_cb,
                                                   &rec);
    double t0;

    flux_watcher_start (w);
    t0 = mono ();
    flux_timer_watcher_reset (w, 0.05, 0.);
    ok (flux_watcher_is_active (w), "reset of an active timer keeps it active");
    ok (wait_count (&rec.count, 1, PATIENCE),
        "... and its new deadline holds: 30 s became 0.05 s");
    ok (rec.first - t0 >= 0.045 && rec.first - t0 < 1.5,
        "... it fired after %.3f s", rec.first - t0);

    flux_timer_watcher_reset (w, 0.02, 0.);
    ok (!flux_watcher_is_active (w), "reset of a stopped timer starts nothing");
    t0 = mono ();
    flux_watcher_start (w);
    ok (wait_count (&rec.count, 2, PATIENCE) && rec.first > 0.,
        "... the next start uses the new 'after'");

    /* again: restart with 'repeat' from now, or stop without one */
    flux_timer_watcher_reset (w, 30., 2.);
    flux_watcher_start (w);
    flux_timer_watcher_again (w);
    double wake = flux_watcher_next_wakeup (w) - flux_reactor_time ();
    ok (wake > 0. && wake < 5.,
        "again: due 'repeat' from now (%.3f s), not 'after'", wake);
    flux_timer_watcher_reset (w, 30., 0.);
    flux_timer_watcher_again (w);
    ok (!flux_watcher_is_active (w), "again without a repeat stops it");
    flux_watcher_destroy (w);
}

/* --- callbacks that stop, reset or destroy their own watcher ---------- */

static int self_count;
static void destroy_self_cb (flux_reactor_t *r, flux_watcher_t *w,
                             int revents, void *arg)
{
    (void)r;
    (void)revents;
    (void)arg;
    self_count++;
    flux_watcher_destroy (w);
}

static int again_count;
static void reset_self_cb (flux_reactor_t *r, flux_watcher_t *w, int revents,
                           void *arg)
{
    (void)r;
    (void)revents;
    if (++again_count < 3) {
        flux_timer_watcher_reset (w, 0.01, 0.);
        flux_watcher_start (w);
    }
    else {
        flux_watcher_stop (w);
        *(flux_watcher_t **)arg = w;
    }
}

static void test_self (flux_reactor_t *r)
{
    flux_watcher_t *w = flux_timer_watcher_create (r, 0.01, 0.01,
                                                   destroy_self_cb, NULL);
    flux_watcher_t *done = NULL;

    flux_watcher_start (w);
    ok (wait_count (&self_count, 1, PATIENCE),
        "a repeating timer destroys itself in its callback");
    nap (0.05);
    isint (locked_read (&self_count), 1, "... and never fires again");

    w = flux_timer_watcher_create (r, 0.01, 0., reset_self_cb, &done);
    flux_watcher_start (w);
    ok (wait_count (&again_count, 3, PATIENCE),
        "a one-shot timer restarted from its callback fires again");
    runtime_lock ();
    ok (done == w && !flux_watcher_is_active (w),
        "... and one stopped from its callback is stopped");
    runtime_unlock ();
    flux_watcher_destroy (w);
}

/* --- another thread -------------------------------------------------- */

static int count_at_stop;
static struct record *stopped_rec;
static void *stop_thread (void *arg)
{
    runtime_lock ();
    flux_watcher_stop (arg);
    count_at_stop = stopped_rec->count;
    runtime_unlock ();
    return NULL;
}

static void *start_thread (void *arg)
{
    flux_watcher_start (arg);
    return NULL;
}

static void test_threads (flux_reactor_t *r)
{
    struct record rec = { .starter = pthread_self () };
    struct record soon = { .starter = pthread_self () };
    flux_watcher_t *w = flux_timer_watcher_create (r, 0.2, 0., record_cb,
                                                   &rec);
    flux_watcher_t *later = flux_timer_watcher_create (r, 30., 0., record_cb,
                                                       NULL);
    pthread_t t;

    stopped_rec = &rec;
    flux_watcher_start (w);
    if (pthread_create (&t, NULL, stop_thread, w) != 0)
        bail_out ("pthread_create failed");
    pthread_join (t, NULL);
    ok (!flux_watcher_is_active (w), "a timer stopped from another thread");
    nap (0.25);
    isint (locked_read (&rec.count), count_at_stop,
           "... never fires once stopped");
    flux_watcher_destroy (w);

    /* the thread sleeps until a 30 s deadline: a nearer one must wake it */
    flux_watcher_start (later);
    nap (0.02);
    w = flux_timer_watcher_create (r, 0.02, 0., record_cb, &soon);
    double t0 = mono ();
    if (pthread_create (&t, NULL, start_thread, w) != 0)
        bail_out ("pthread_create failed");
    pthread_join (t, NULL);
    bool fired = wait_count (&soon.count, 1, PATIENCE);
    ok (fired && soon.first - t0 < 1.5,
        "a timer started from another thread wakes the sleeping reactor "
        "(%.3f s)", soon.first - t0);
    flux_watcher_destroy (w);
    flux_watcher_destroy (later);
}

/* --- the runtime lock and the jobtap API in a callback ----------------- */

struct dep_timer {
    flux_plugin_t *p;
    flux_jobid_t id;
    int count;
    int rc;
    bool job_current;
};

static volatile int in_callback;

static void release_cb (flux_reactor_t *r, flux_watcher_t *w, int revents,
                        void *arg)
{
    struct dep_timer *d = arg;
    flux_plugin_arg_t *cur;
    (void)r;
    (void)revents;
    cur = flux_jobtap_job_lookup (d->p, FLUX_JOBTAP_CURRENT_JOB);
    d->job_current = cur != NULL;
    flux_plugin_arg_destroy (cur);
    __atomic_store_n (&in_callback, 1, __ATOMIC_SEQ_CST);
    nap (0.05); /* long enough for the main thread to try the lock */
    d->rc = flux_jobtap_dependency_remove (d->p, d->id, "timer-wait");
    __atomic_store_n (&in_callback, 0, __ATOMIC_SEQ_CST);
    d->count++;
    flux_watcher_destroy (w);
}

static void arm_release (flux_plugin_t *p, void *arg)
{
    flux_t *h = flux_jobtap_get_flux (p);
    flux_watcher_t *w = flux_timer_watcher_create (flux_get_reactor (h),
                                                   0.02, 0., release_cb,
                                                   arg);
    flux_watcher_start (w);
}

static void test_jobtap_api (struct jt_plugin *jt)
{
    struct runtime *rt = host_runtime ();
    struct dep_timer d = { .p = jt->p, .id = 4242, .rc = -2 };
    struct job *job;

    runtime_lock ();
    job = core_job_in_table (rt, d.id, FLUX_JOB_STATE_DEPEND);
    core_trace_reset ();
    if (flux_jobtap_dependency_add (jt->p, d.id, "timer-wait") < 0)
        bail_out ("dependency_add failed");
    runtime_unlock ();
    is (core_trace_text (), "hold 4242 jobtap: timer-wait",
        "a job waits in DEPEND on a plugin's dependency");

    as_plugin (jt, arm_release, &d);
    double end = mono () + PATIENCE;
    while (!__atomic_load_n (&in_callback, __ATOMIC_SEQ_CST) && mono () < end)
        nap (0.0005);
    runtime_lock ();
    int seen = __atomic_load_n (&in_callback, __ATOMIC_SEQ_CST);
    runtime_unlock ();
    isint (seen, 0, "a timer's callback holds the runtime lock: another "
           "thread gets it only once the callback is done");
    ok (wait_count (&d.count, 1, PATIENCE), "the plugin's timer fired");
    ok (!d.job_current, "... with no current job");
    isint (d.rc, 0, "flux_jobtap_dependency_remove from the timer works");
    runtime_lock ();
    ok (job->state != FLUX_JOB_STATE_DEPEND,
        "... and the job moved on (%s)",
        flux_job_statetostr (job->state, "L"));
    runtime_unlock ();
    like (core_trace_text (), "release 4242", "the host was told to release it");
}

/* --- a prolog finished from a timer (flux-core's perilog-test.c) ------- */

struct prolog_timer {
    flux_plugin_t *p;
    flux_jobid_t id;
    int rc;
};

static void prolog_finish_cb (flux_reactor_t *r, flux_watcher_t *w,
                              int revents, void *arg)
{
    struct prolog_timer *d = arg;
    (void)r;
    (void)revents;
    d->rc = flux_jobtap_prolog_finish (d->p, d->id, "test", 0);
    flux_watcher_destroy (w);
}

static struct prolog_timer prolog;
static int state_run_cb (flux_plugin_t *p,
                         const char *topic,
                         flux_plugin_arg_t *args,
                         void *data)
{
    flux_t *h = flux_jobtap_get_flux (p);
    flux_watcher_t *w;
    (void)topic;
    (void)data;
    prolog.p = p;
    prolog.rc = -2;
    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:I}",
                                "id", &prolog.id) < 0
        || !(w = flux_timer_watcher_create (flux_get_reactor (h), 0.02, 0.,
                                            prolog_finish_cb, &prolog)))
        return -1;
    flux_watcher_start (w);
    return flux_jobtap_prolog_start (p, "test");
}

static void test_prolog (struct jt_plugin *jt)
{
    struct runtime *rt = host_runtime ();

    if (flux_plugin_add_handler (jt->p, "job.state.run", state_run_cb, NULL)
        < 0)
        bail_out ("cannot add job.state.run");
    runtime_lock (); /* the prolog cannot end before the host asks */
    core_job_in_table (rt, 4343, FLUX_JOB_STATE_SCHED);
    ok (jobtap_host_job_run (4343, NULL) == 0
            && jobtap_host_job_perilog_wait (4343) == 1,
        "a plugin starts a prolog in job.state.run and a timer to end it");
    ok (jobtap_host_job_event_posted (4343, "alloc") == 1
            && jobtap_host_job_event_posted (4343, "start") == 0,
        "alloc is posted, start waits for the prolog");
    runtime_unlock ();
    ok (wait_count (&perilog_done_count, 1, PATIENCE),
        "flux_jobtap_prolog_finish from the timer ends the host's wait");
    ok (jobtap_host_job_event_posted (4343, "start") == 1,
        "... and start is posted then, as Flux's follows prolog-finish");
    ok (prolog.rc == 0 && !perilog_done_epilog && perilog_done_status == 0,
        "... a prolog, status 0");
    ok (!pthread_equal (perilog_done_thread, pthread_self ()),
        "... told on the reactor's thread (the adapter queues it)");
    flux_plugin_remove_handler (jt->p, "job.state.run");
}

/* --- deadline order -------------------------------------------------- */

#define MANY 1000

static struct {
    flux_watcher_t *w[MANY];
    int order[MANY];     /* indexes, in the order they fired */
    int fired;
} many;

static double after_of (int i)
{
    return (double)((i * 7919) % (MANY / 2)) * 0.0003; /* pairs, 0..0.15 s */
}

static void many_cb (flux_reactor_t *r, flux_watcher_t *w, int revents,
                     void *arg)
{
    (void)r;
    (void)w;
    (void)revents;
    many.order[many.fired++] = (int)(intptr_t)arg;
}

/* From a callback: every start shares its loop turn's time, so each
 * deadline is that time plus 'after', exactly. */
static void start_many_cb (flux_reactor_t *r, flux_watcher_t *w, int revents,
                           void *arg)
{
    (void)r;
    (void)revents;
    (void)arg;
    for (int i = 0; i < MANY; i++)
        flux_watcher_start (many.w[i]);
    flux_watcher_destroy (w);
}

static void test_order (flux_reactor_t *r)
{
    bool sorted = true;

    for (int i = 0; i < MANY; i++)
        if (!(many.w[i] = flux_timer_watcher_create (r, after_of (i), 0.,
                                                     many_cb,
                                                     (void *)(intptr_t)i)))
            bail_out ("timer_watcher_create failed");
    flux_watcher_start (flux_timer_watcher_create (r, 0., 0., start_many_cb,
                                                   NULL));
    ok (wait_count (&many.fired, MANY, PATIENCE), "%d timers all fire", MANY);
    runtime_lock ();
    for (int k = 1; k < many.fired; k++) {
        int a = many.order[k - 1], b = many.order[k];
        if (after_of (a) > after_of (b)
            || (after_of (a) == after_of (b) && a > b)) {
            diag ("timer %d (%.4f s) fired before %d (%.4f s)", a,
                  after_of (a), b, after_of (b));
            sorted = false;
            break;
        }
    }
    runtime_unlock ();
    ok (sorted, "... in deadline order, equal deadlines in start order");
    for (int i = 0; i < MANY; i++)
        flux_watcher_destroy (many.w[i]);
}

/* --- a removed plugin ------------------------------------------------ */

static int gone_count;
static void gone_cb (flux_reactor_t *r, flux_watcher_t *w, int revents,
                     void *arg)
{
    (void)r;
    (void)w;
    (void)revents;
    (void)arg;
    gone_count++;
}

static void arm_forgotten (flux_plugin_t *p, void *arg)
{
    flux_reactor_t *r = flux_get_reactor (flux_jobtap_get_flux (p));
    flux_watcher_t *once = flux_timer_watcher_create (r, 0.05, 0., gone_cb,
                                                      NULL);
    flux_watcher_t *often = flux_timer_watcher_create (r, 0., 0.01, gone_cb,
                                                       NULL);
    flux_watcher_t *idle = flux_timer_watcher_create (r, 0., 0., gone_cb,
                                                      NULL);
    flux_watcher_t *kept = flux_timer_watcher_create (r, 0.05, 0.05, gone_cb,
                                                      NULL);
    (void)arg;
    flux_watcher_start (once);
    flux_watcher_start (often);
    flux_watcher_start (kept);
    (void)idle; /* never started, never destroyed */
    /* as flux-core's random.c: destroyed by the plugin's aux destructor */
    flux_plugin_aux_set (p, NULL, kept, (flux_free_f)flux_watcher_destroy);
}

/* A plugin that removes itself from its own timer, then goes on. */
static int suicide_count;
static bool suicide_name_ok;
static void suicide_cb (flux_reactor_t *r, flux_watcher_t *w, int revents,
                        void *arg)
{
    flux_plugin_t *p = arg;
    jobtap_host_error_t err;
    (void)revents;
    suicide_count++;
    if (jobtap_host_plugin_remove ("suicide.so", &err) < 0)
        diag ("remove: %s", err.text);
    /* still mapped until this returns */
    suicide_name_ok = flux_plugin_get_uuid (p) != NULL;
    flux_watcher_t *late = flux_timer_watcher_create (r, 0., 0., gone_cb,
                                                      NULL);
    flux_watcher_start (late); /* born orphaned: never fires */
    flux_timer_watcher_reset (w, 0., 0.);
    flux_watcher_start (w);    /* nor does its own timer again */
}

static void arm_suicide (flux_plugin_t *p, void *arg)
{
    flux_watcher_t *w;
    (void)arg;
    w = flux_timer_watcher_create (flux_get_reactor (flux_jobtap_get_flux (p)),
                                   0.01, 0., suicide_cb, p);
    flux_watcher_start (w);
}

static void test_removed_plugin (void)
{
    jobtap_host_error_t err;
    struct jt_plugin *jt = plugin_make ("gone.so");

    gone_count = 0;
    runtime_lock (); /* no timer may fire before the removal */
    as_plugin (jt, arm_forgotten, NULL);
    ok (jobtap_host_plugin_remove ("gone.so", &err) == 0,
        "a plugin with live timers is removed");
    runtime_unlock ();
    nap (0.2);
    isint (locked_read (&gone_count), 0,
           "... none of its timers ever fires (valgrind: none leaks either)");

    jt = plugin_make ("suicide.so");
    as_plugin (jt, arm_suicide, NULL);
    ok (wait_count (&suicide_count, 1, PATIENCE),
        "a plugin removes itself from its own timer");
    ok (suicide_name_ok, "... and runs on safely until the callback returns");
    nap (0.1);
    ok (locked_read (&suicide_count) == 1 && locked_read (&gone_count) == 0,
        "... after which nothing of it fires, even what it started then");
    json_t *query = jobtap_host_plugin_query ("suicide.so", &err);
    ok (query == NULL, "... and it is gone");
    json_decref (query);
}

/* --- futures --------------------------------------------------------- */

static const flux_msg_t *kept_request;
static void later_cb (flux_t *h, flux_msg_handler_t *mh,
                      const flux_msg_t *msg, void *arg)
{
    (void)h;
    (void)mh;
    (void)arg;
    kept_request = flux_msg_incref (msg);
}

static void echo_cb (flux_t *h, flux_msg_handler_t *mh,
                     const flux_msg_t *msg, void *arg)
{
    (void)mh;
    (void)arg;
    flux_respond (h, msg, "{}");
}

struct then_record {
    flux_future_t *f;      /* set by the plugin that asked */
    int count;
    int rc, errnum;
    bool other_thread;
    pthread_t starter;
};

static void then_cb (flux_future_t *f, void *arg)
{
    struct then_record *t = arg;
    t->count++;
    errno = 0;
    t->rc = flux_future_get (f, NULL);
    t->errnum = errno;
    t->other_thread = !pthread_equal (pthread_self (), t->starter);
    flux_future_destroy (f);
}

static void rpc_later (flux_plugin_t *p, void *arg)
{
    flux_future_t *f = flux_rpc (flux_jobtap_get_flux (p), "svc.later", NULL,
                                 0, 0);
    if (!f || flux_future_then (f, 0.05, then_cb, arg) < 0)
        bail_out ("flux_rpc/flux_future_then failed");
    ((struct then_record *)arg)->f = f;
}

static void rpc_forever (flux_plugin_t *p, void *arg)
{
    flux_future_t *f = flux_rpc (flux_jobtap_get_flux (p), "svc.later", NULL,
                                 0, 0);
    if (!f || flux_future_then (f, -1., then_cb, arg) < 0)
        bail_out ("flux_rpc/flux_future_then failed");
    ((struct then_record *)arg)->f = f;
}

static void test_futures (struct jt_plugin *caller)
{
    struct then_record t = { .starter = pthread_self () };
    flux_t *h = host_runtime ()->h;
    flux_future_t *f;

    kept_request = NULL;
    runtime_lock ();
    as_plugin (caller, rpc_later, &t);
    ok (kept_request && t.count == 0,
        "an rpc whose handler answers later is pending");
    runtime_unlock ();
    ok (wait_count (&t.count, 1, PATIENCE),
        "flux_future_then with a 0.05 s timeout: the continuation runs");
    ok (t.rc < 0 && t.errnum == ETIMEDOUT,
        "... and the future failed with ETIMEDOUT");
    ok (t.other_thread, "... on the reactor's thread");
    ok (flux_respond (h, kept_request, "{}") == 0 && locked_read (&t.count) == 1,
        "a response after the timeout goes nowhere");
    flux_msg_decref (kept_request);

    struct then_record in_time = { .starter = pthread_self () };
    runtime_lock (); /* the response comes first, however slow we are */
    f = flux_rpc (h, "svc.later", NULL, 0, 0);
    flux_future_then (f, 0.05, then_cb, &in_time);
    flux_respond (h, kept_request, "{}");
    runtime_unlock ();
    flux_msg_decref (kept_request);
    ok (in_time.count == 1 && in_time.rc == 0,
        "a response in time runs the continuation once, with it");
    nap (0.1);
    isint (locked_read (&in_time.count), 1, "... and the timeout never fires");

    struct then_record now = { .starter = pthread_self () };
    f = flux_rpc (h, "svc.echo", NULL, 0, 0);
    ok (flux_future_then (f, 0.05, then_cb, &now) == 0 && now.count == 1
            && now.rc == 0,
        "a future already answered runs its continuation at once");

    /* a removed plugin's continuations never run */
    struct jt_plugin *jt = plugin_make ("forgetful.so");
    struct then_record lost = { .starter = pthread_self () };
    struct then_record lost2 = { .starter = pthread_self () };
    jobtap_host_error_t err;
    runtime_lock (); /* removed before its timeout */
    as_plugin (jt, rpc_later, &lost);
    const flux_msg_t *first = kept_request;
    as_plugin (jt, rpc_forever, &lost2);
    jobtap_host_plugin_remove ("forgetful.so", &err);
    runtime_unlock ();
    nap (0.1);
    isint (locked_read (&lost.count), 0,
           "a removed plugin's future never times out into its code");
    flux_respond (h, kept_request, "{}");
    flux_respond (h, first, "{}");
    isint (locked_read (&lost2.count), 0,
           "... nor does a response run its continuation");
    flux_msg_decref (first);
    flux_msg_decref (kept_request);
    kept_request = NULL;
    /* the plugin would have leaked them; the test frees them for valgrind */
    flux_future_destroy (lost.f);
    flux_future_destroy (lost2.f);
}

/* --- the reactor's loop is not the plugin's to run -------------------- */

static void test_run_refused (flux_reactor_t *r)
{
    last_log[0] = '\0';
    errno = 0;
    ok (flux_reactor_run (r, 0) < 0 && errno == EINVAL,
        "flux_reactor_run is refused: EINVAL");
    like (last_log, "flux_reactor_run: refused", "... with a log line");
    ok (flux_reactor_run (r, FLUX_REACTOR_NOWAIT) < 0,
        "... with FLUX_REACTOR_NOWAIT too");
    last_log[0] = '\0';
    flux_reactor_stop (r);
    flux_reactor_stop_error (r);
    like (last_log, "flux_reactor_stop: ignored", "flux_reactor_stop is "
          "ignored, with a log line");
    struct record rec = { .starter = pthread_self () };
    flux_watcher_t *w = flux_timer_watcher_create (r, 0., 0., record_cb, &rec);
    flux_watcher_start (w);
    ok (wait_count (&rec.count, 1, PATIENCE), "... and timers still run");
    flux_watcher_destroy (w);
    double t = flux_reactor_now (r);
    flux_reactor_now_update (r);
    ok (t > 1e9 && flux_reactor_now (r) >= t,
        "flux_reactor_now elsewhere than its thread is the time now");
}

/* --- the runtime's end, and a second life ----------------------------- */

static void setup (void)
{
    core_host_setup (&ops, NULL, NULL);
}

static void test_restart (int threads_before)
{
    struct record rec = { .starter = pthread_self () };
    flux_watcher_t *w;
    flux_reactor_t *r;

    core_host_teardown ();
    isint (thread_count (), threads_before,
           "jobtap_host_fini stops the reactor's thread");

    setup ();
    r = flux_get_reactor (host_runtime ()->h);
    w = flux_timer_watcher_create (r, 0.01, 0., record_cb, &rec);
    flux_watcher_start (w);
    ok (wait_count (&rec.count, 1, PATIENCE),
        "after a second init, a timer fires again");
    isint (thread_count (), threads_before + 1, "... on one new thread");
    /* left behind by the host: inert after fini, still the host's to free */
    flux_watcher_t *left = flux_timer_watcher_create (r, 30., 0., record_cb,
                                                      NULL);
    flux_watcher_start (left);
    core_host_teardown ();
    isint (thread_count (), threads_before, "... and the second fini stops it");
    flux_watcher_start (left);
    ok (!flux_watcher_is_active (left),
        "a watcher that outlived its reactor does nothing");
    flux_watcher_destroy (left);
    flux_watcher_destroy (w);
}

int main (void)
{
    int threads_before = thread_count ();
    double t0 = mono ();
    struct jt_plugin *jt;
    flux_reactor_t *r;

    setup ();
    jt = plugin_make ("timers.so");
    if (flux_plugin_set_name (jt->p, "svc") < 0
        || flux_jobtap_service_register (jt->p, "later", later_cb, NULL) < 0
        || flux_jobtap_service_register (jt->p, "echo", echo_cb, NULL) < 0)
        bail_out ("cannot register the test services");
    r = flux_get_reactor (host_runtime ()->h);
    ok (r != NULL && r == flux_get_reactor (host_runtime ()->h),
        "flux_get_reactor gives the runtime's one reactor");

    test_lazy (r, threads_before);
    test_one_shot (r, threads_before);
    test_repeat (r);
    test_reset (r);
    test_self (r);
    test_threads (r);
    test_jobtap_api (jt);
    test_prolog (jt);
    test_order (r);
    test_removed_plugin ();
    test_futures (jt);
    test_run_refused (r);
    test_restart (threads_before);

    diag ("%.2f s", mono () - t0);
    done_testing ();
}
