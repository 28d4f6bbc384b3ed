/* event.c: posting events and their effects (subscribers, the queue of
 * events posted while a job is busy, stack calls, the host's actions), on
 * a runtime made here with in-process plugins and recording host ops. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <flux/core.h>
#include <flux/jobtap.h>

#include "core_util.h"
#include "dispatch.h"
#include "event.h"
#include "host.h"
#include "job.h"
#include "jtplugin.h"
#include "log.h"
#include "runtime.h"
#include "spec.h"
#include "state.h"
#include "tap.h"

static struct runtime rt;
static char actions[2048]; /* what the host was told, "; "-separated */

static void act (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));
static void act (const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (buf, sizeof (buf), fmt, ap);
    va_end (ap);
    if (actions[0])
        strncat (actions, "; ", sizeof (actions) - strlen (actions) - 1);
    strncat (actions, buf, sizeof (actions) - strlen (actions) - 1);
}

static void op_hold (uint64_t id, const char *reason, void *arg)
{
    act ("hold %ju %s%s", (uintmax_t)id, reason, arg == &rt ? "" : " (arg?)");
}

static void op_release (uint64_t id, void *arg)
{
    (void)arg;
    act ("release %ju", (uintmax_t)id);
}

static void op_set_priority (uint64_t id, int64_t priority, void *arg)
{
    (void)arg;
    act ("priority %ju %jd", (uintmax_t)id, (intmax_t)priority);
}

static void op_cancel (uint64_t id, const char *type, const char *note,
                       void *arg)
{
    (void)arg;
    act ("cancel %ju %s %s", (uintmax_t)id, type, note);
}

static void op_event (uint64_t id, json_t *entry, void *arg)
{
    (void)arg;
    act ("event %ju %s", (uintmax_t)id,
         json_string_value (json_object_get (entry, "name")));
}

static void op_jobspec_update (uint64_t id, json_t *updates,
                               const char *plugin, void *arg)
{
    char *s = json_dumps (updates, JSON_COMPACT | JSON_SORT_KEYS);
    (void)arg;
    (void)plugin;
    act ("update %ju %s", (uintmax_t)id, s);
    free (s);
}

static char last_log[512];
static void log_sink (int level, const char *msg, void *arg)
{
    (void)level;
    (void)arg;
    snprintf (last_log, sizeof (last_log), "%s", msg);
}

static void op_urgency_hold (uint64_t id, bool held, void *arg)
{
    (void)arg;
    act ("urgency-hold %ju %s", (uintmax_t)id, held ? "held" : "lifted");
}

static struct jobtap_host_ops ops = {
    .hold = op_hold,
    .release = op_release,
    .set_priority = op_set_priority,
    .cancel = op_cancel,
    .urgency_hold = op_urgency_hold,
    .jobspec_update = op_jobspec_update,
    .keep_eventlog = true,
};

static char *eventlog_names (struct job *job)
{
    static char buf[1024];
    size_t i;
    json_t *e;

    buf[0] = '\0';
    json_array_foreach (job->eventlog, i, e) {
        if (i)
            strncat (buf, " ", sizeof (buf) - strlen (buf) - 1);
        strncat (buf, json_string_value (json_object_get (e, "name")),
                 sizeof (buf) - strlen (buf) - 1);
    }
    return buf;
}

/* --- subscribers ------------------------------------------------------- */

static char heard_once[256], heard_all[256];

static void hear (char *buf, size_t len, flux_plugin_arg_t *args)
{
    const char *name = "?";
    flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:{s:s}}", "entry",
                            "name", &name);
    if (buf[0])
        strncat (buf, " ", len - strlen (buf) - 1);
    strncat (buf, name, len - strlen (buf) - 1);
}

static int cb_unsubscribe_first (flux_plugin_t *p,
                                 const char *topic,
                                 flux_plugin_arg_t *args,
                                 void *arg)
{
    json_int_t id = -1;
    (void)topic;
    (void)arg;
    hear (heard_once, sizeof (heard_once), args);
    flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:I}", "id", &id);
    flux_jobtap_job_unsubscribe (p, (flux_jobid_t)id);
    return 0;
}

static int cb_hear_all (flux_plugin_t *p,
                        const char *topic,
                        flux_plugin_arg_t *args,
                        void *arg)
{
    (void)p;
    (void)topic;
    (void)arg;
    hear (heard_all, sizeof (heard_all), args);
    return 0;
}

static int sub_count (struct job *job)
{
    int n = 0;
    for (struct sub *s = job->subs; s; s = s->next)
        n++;
    return n;
}

static void test_subscribers (void)
{
    struct jt_plugin *u = core_plugin_make (&rt, "unsub"),
                     *s = core_plugin_make (&rt, "sub");
    struct job *job = core_job_in_table (&rt, 60, FLUX_JOB_STATE_NEW);

    flux_plugin_add_handler (u->p, "job.event.*", cb_unsubscribe_first, NULL);
    flux_plugin_add_handler (s->p, "job.event.*", cb_hear_all, NULL);
    ok (flux_jobtap_job_subscribe (u->p, 60) == 0
            && flux_jobtap_job_subscribe (s->p, 60) == 0,
        "two plugins subscribe to job 60");
    isint (sub_count (job), 2, "two subscriber entries");

    ok (event_post (job, "validate", NULL) == 0, "validate posted");
    isint (job->state, FLUX_JOB_STATE_PRIORITY,
           "validate with no dependencies went on to PRIORITY");
    is (heard_once, "validate",
        "the plugin that unsubscribes in its callback heard one event");
    is (heard_all, "validate depend",
        "the subscriber after it heard every event, in order");
    isint (sub_count (job), 1, "the unsubscribed entry was freed at rest");
    ok (job->subs && job->subs->plugin == s, "the other one stays");
    event_post (job, "memo", NULL);
    event_post (job, "my-event", NULL);
    is (heard_once, "validate", "it hears nothing more");
    is (heard_all, "validate depend memo my-event",
        "the other hears on, known and unknown names");

    job->state = FLUX_JOB_STATE_INACTIVE;
    errno = 0;
    ok (flux_jobtap_job_subscribe (u->p, 60) < 0 && errno == ENOENT,
        "subscribing to an inactive job: ENOENT");
    errno = 0;
    ok (flux_jobtap_job_subscribe (u->p, 61) < 0 && errno == ENOENT,
        "subscribing to an unknown job: ENOENT");
    job_forget (job);
    jt_retire (&rt, u);
    jt_retire (&rt, s);
}

/* A callback that subscribes another plugin, or unloads one, while the
 * subscribers are walked. */
static struct jt_plugin *other_plugin;
static char heard_a[256], heard_b[256];

static int cb_subscribe_other (flux_plugin_t *p,
                               const char *topic,
                               flux_plugin_arg_t *args,
                               void *arg)
{
    (void)p;
    (void)arg;
    hear (heard_a, sizeof (heard_a), args);
    if (!strcmp (topic, "job.event.validate"))
        flux_jobtap_job_subscribe (other_plugin->p, 62);
    return 0;
}

static int cb_unload_other (flux_plugin_t *p,
                            const char *topic,
                            flux_plugin_arg_t *args,
                            void *arg)
{
    (void)p;
    (void)arg;
    hear (heard_a, sizeof (heard_a), args);
    if (!strcmp (topic, "job.event.memo") && other_plugin) {
        job_aux_plugin_gone (&rt, other_plugin); /* as loader.c unloads */
        jt_retire (&rt, other_plugin);
        other_plugin = NULL;
    }
    return 0;
}

static int cb_hear_b (flux_plugin_t *p,
                      const char *topic,
                      flux_plugin_arg_t *args,
                      void *arg)
{
    (void)p;
    (void)topic;
    (void)arg;
    hear (heard_b, sizeof (heard_b), args);
    return 0;
}

static void test_subscribers_change (void)
{
    struct jt_plugin *a = core_plugin_make (&rt, "a");
    struct job *job = core_job_in_table (&rt, 62, FLUX_JOB_STATE_NEW);

    other_plugin = core_plugin_make (&rt, "b");
    flux_plugin_add_handler (a->p, "job.event.*", cb_subscribe_other, NULL);
    flux_plugin_add_handler (other_plugin->p, "job.event.*", cb_hear_b, NULL);
    flux_jobtap_job_subscribe (a->p, 62);
    event_post (job, "validate", NULL);
    is (heard_a, "validate depend", "the first subscriber hears both");
    is (heard_b, "validate depend",
        "one it subscribes from its callback hears that event too");

    /* now a unloads b from its callback on memo: b's entry, after a's,
     * is skipped and nothing touches the freed plugin (valgrind) */
    heard_a[0] = heard_b[0] = '\0';
    flux_plugin_add_handler (a->p, "job.event.*", NULL, NULL);
    flux_plugin_add_handler (a->p, "job.event.*", cb_unload_other, NULL);
    event_post (job, "memo", NULL);
    is (heard_a, "memo", "the unloading subscriber heard memo");
    is (heard_b, "", "the plugin it unloaded did not");
    ok (sub_count (job) == 1 && job->subs->plugin == a,
        "the unloaded plugin's entry is gone at rest");
    ok (rt.plugins == a && !a->next && rt.retired == NULL,
        "and the plugin itself is destroyed");
    event_post (job, "memo", NULL);
    is (heard_a, "memo memo", "the remaining subscriber hears on");
    job_forget (job);
    jt_retire (&rt, a);
}

/* --- the queue of events posted while busy ---------------------------- */

static struct job *poster_job;
static int cb_post_memo (flux_plugin_t *p,
                         const char *topic,
                         flux_plugin_arg_t *args,
                         void *arg)
{
    (void)p;
    (void)args;
    (void)arg;
    if (!strcmp (topic, "job.event.validate")) {
        json_t *ctx = json_pack ("{s:s}", "from", "callback");
        isint (event_post (poster_job, "memo", ctx), 0,
               "an event posted from a callback: 0 (queued)");
        ok (poster_job->queue != NULL && poster_job->state
                                             == FLUX_JOB_STATE_DEPEND,
            "...it waits in the queue; the job is still in DEPEND");
        isint (event_post (poster_job, "note-from-plugin", NULL), 0,
               "an unknown name posted from a callback: queued too");
        json_decref (ctx);
    }
    return 0;
}

static void test_queue (void)
{
    struct jt_plugin *jt = core_plugin_make (&rt, "poster");
    struct job *job = core_job_in_table (&rt, 61, FLUX_JOB_STATE_NEW);
    json_t *memo;

    poster_job = job;
    flux_plugin_add_handler (jt->p, "job.event.*", cb_post_memo, NULL);
    flux_jobtap_job_subscribe (jt->p, 61);
    ok (event_post (job, "validate", NULL) == 0, "validate posted");
    is (eventlog_names (job), "validate memo note-from-plugin depend",
        "queued events apply after the current one, in posting order, "
        "before the depend that entering DEPEND posted");
    memo = json_array_get (job->eventlog, 1);
    is (json_string_value (json_object_get (json_object_get (memo, "context"),
                                            "from")),
        "callback", "the queued event kept its context");
    ok (job->queue == NULL && job->queue_tail == NULL && !job->busy,
        "the queue is empty and the job at rest");
    ok (posted_test (job, "note-from-plugin"),
        "the queued unknown name was posted");
    job_forget (job);
    jt_retire (&rt, jt);
}

/* --- the host's actions ------------------------------------------------ */

static void test_sync_host (void)
{
    struct job *job = core_job_in_table (&rt, 70, FLUX_JOB_STATE_DEPEND);
    struct job *prov;

    actions[0] = '\0';
    job->deps = json_pack ("{s:b}", "after-x", 1);
    job_sync_host (job);
    is (actions, "hold 70 jobtap: after-x",
        "DEPEND with a dependency: hold, the dependency as reason");
    job_sync_host (job);
    is (actions, "hold 70 jobtap: after-x", "again: nothing new");
    json_object_del (job->deps, "after-x");
    json_object_set_new (job->deps, "after-y", json_true ());
    job_sync_host (job);
    is (actions, "hold 70 jobtap: after-x; hold 70 jobtap: after-y",
        "another reason: hold again with it");
    actions[0] = '\0';
    job->urgency = FLUX_JOB_URGENCY_HOLD;
    job_sync_host (job);
    is (actions, "hold 70 jobtap: after-y; also held by its user",
        "urgency 0 in DEPEND: held again, the user's hold named too");
    job->urgency = FLUX_JOB_URGENCY_DEFAULT;
    job_sync_host (job);
    is (actions,
        "hold 70 jobtap: after-y; also held by its user; "
        "hold 70 jobtap: after-y",
        "the urgency raised: held again with jobtap's reason alone");
    job->state = FLUX_JOB_STATE_PRIORITY;
    job->urgency = FLUX_JOB_URGENCY_HOLD;
    actions[0] = '\0';
    job_sync_host (job);
    is (actions, "hold 70 jobtap: priority unavailable; also held by its user",
        "PRIORITY at urgency 0: both holds named");
    job->urgency = FLUX_JOB_URGENCY_DEFAULT;
    actions[0] = '\0';
    job_sync_host (job);
    is (actions, "hold 70 jobtap: priority unavailable",
        "PRIORITY: hold, priority unavailable");
    job->state = FLUX_JOB_STATE_SCHED;
    job->priority = 55;
    actions[0] = '\0';
    job_sync_host (job);
    is (actions, "release 70; priority 70 55",
        "SCHED: release, then the priority");
    ok (job->hold_reason == NULL && job->reported_priority == 55,
        "the job remembers what the host was told");
    actions[0] = '\0';
    job_sync_host (job);
    is (actions, "", "nothing changed: nothing told");
    job->priority = 56;
    job_sync_host (job);
    is (actions, "priority 70 56", "a new priority is told");
    job->state = FLUX_JOB_STATE_RUN;
    job->priority = 57;
    actions[0] = '\0';
    job_sync_host (job);
    is (actions, "", "out of SCHED a priority change is not told");

    prov = job_create (&rt, NULL, 1000, 16, 1.0);
    prov->token = 1;
    prov->id = JOBTAP_PROVISIONAL_ID_BIT | 1;
    prov->state = FLUX_JOB_STATE_PRIORITY;
    job_sync_host (prov);
    ok (actions[0] == '\0' && prov->hold_reason == NULL,
        "a provisional job: the host is told nothing");
    job_decref (prov);

    ops.hold = NULL;
    job->state = FLUX_JOB_STATE_PRIORITY;
    job_sync_host (job);
    ok (actions[0] == '\0' && job->hold_reason
            && !strcmp (job->hold_reason, "jobtap: priority unavailable"),
        "no hold op: nothing told, the hold still remembered");
    ops.hold = op_hold;
    job_forget (job);
}

static void test_post_effects (void)
{
    struct job *job = core_job_in_table (&rt, 71, FLUX_JOB_STATE_NEW);
    json_t *ctx;

    actions[0] = '\0';
    event_post (job, "validate", NULL);
    is (actions, "hold 71 jobtap: priority unavailable",
        "validate cascades to PRIORITY: one hold, told at rest");
    actions[0] = '\0';
    reprioritize_one (job, 10);
    isint (job->state, FLUX_JOB_STATE_SCHED, "reprioritize_one: SCHED");
    is (actions, "release 71; priority 71 10", "released, priority 10");
    actions[0] = '\0';
    reprioritize_one (job, 10);
    is (eventlog_names (job), "validate depend priority",
        "the same priority in SCHED posts no event");
    job->urgency = FLUX_JOB_URGENCY_HOLD;
    reprioritize_one (job, 10);
    isint (job->priority, FLUX_JOB_PRIORITY_MIN, "urgency 0: priority 0");
    job->urgency = FLUX_JOB_URGENCY_EXPEDITE;
    reprioritize_one (job, 10);
    isint (job->priority, FLUX_JOB_PRIORITY_MAX,
           "urgency 31: the highest priority");
    is (actions,
        "urgency-hold 71 held; priority 71 0; urgency-hold 71 lifted; "
        "priority 71 4294967295",
        "each change told to the host");

    ops.event = op_event;
    actions[0] = '\0';
    ctx = json_pack ("{s:s s:i s:s}", "type", "test", "severity", 0, "note",
                     "bad job");
    ok (event_post (job, "exception", ctx) == 0
            && job->state == FLUX_JOB_STATE_CLEANUP,
        "a fatal exception: CLEANUP");
    is (actions, "cancel 71 test bad job; event 71 exception",
        "the host cancels the job, and hears the event");
    json_decref (ctx);
    ops.event = NULL;
    job_forget (job);

    /* an exception the scheduler reported: it is not asked back */
    job = core_job_in_table (&rt, 72, FLUX_JOB_STATE_SCHED);
    actions[0] = '\0';
    ctx = json_pack ("{s:s s:i}", "type", "cancel", "severity", 0);
    ok (event_post_host (job, "exception", ctx) == 0
            && job->state == FLUX_JOB_STATE_CLEANUP && !job->host_event,
        "event_post_host: a fatal exception applies");
    is (actions, "", "...and no cancel is asked back");
    json_decref (ctx);
    job_forget (job);

    /* dependencies hold with their description, then priority */
    job = core_job_in_table (&rt, 73, FLUX_JOB_STATE_NEW);
    actions[0] = '\0';
    ctx = json_pack ("{s:s}", "description", "wait-for-it");
    event_post (job, "dependency-add", ctx);
    event_post (job, "validate", NULL);
    isint (job->state, FLUX_JOB_STATE_DEPEND, "a dependency keeps DEPEND");
    is (actions, "hold 73 jobtap: wait-for-it", "held with its description");
    event_post (job, "dependency-remove", ctx);
    isint (job->state, FLUX_JOB_STATE_PRIORITY,
           "the last dependency removed: on to PRIORITY");
    is (actions,
        "hold 73 jobtap: wait-for-it; hold 73 jobtap: priority unavailable",
        "the hold's reason changes");
    json_decref (ctx);
    job_forget (job);

    /* urgency 0 in SCHED is the user's hold; raising the urgency lifts
     * it, but a held job that leaves SCHED (the scheduler started it, or
     * it was cancelled) lifts nothing */
    job = core_job_in_table (&rt, 75, FLUX_JOB_STATE_SCHED);
    job->urgency = FLUX_JOB_URGENCY_HOLD;
    actions[0] = '\0';
    reprioritize_one (job, 0);
    is (actions, "urgency-hold 75 held; priority 75 0",
        "urgency 0 in SCHED: held, then priority 0");
    actions[0] = '\0';
    job->urgency = FLUX_JOB_URGENCY_DEFAULT;
    reprioritize_one (job, 16);
    is (actions, "urgency-hold 75 lifted; priority 75 16",
        "urgency raised in SCHED: the hold is lifted");
    job->urgency = FLUX_JOB_URGENCY_HOLD;
    reprioritize_one (job, 0);
    actions[0] = '\0';
    event_post (job, "alloc", NULL);
    isint (job->state, FLUX_JOB_STATE_RUN, "alloc: RUN");
    is (actions, "", "a held job that starts lifts no hold");
    job_forget (job);

    /* a jobspec update on a known job is told to the host */
    job = core_job_in_table (&rt, 74, FLUX_JOB_STATE_SCHED);
    actions[0] = '\0';
    ctx = json_pack ("{s:i}", "attributes.system.duration", 3);
    event_post_known (job, EV_JOBSPEC_UPDATE, ctx);
    is (actions, "update 74 {\"attributes.system.duration\":3}; "
        "hold 74 jobtap: priority unavailable",
        "jobspec-update: the host gets the update, and SCHED -> PRIORITY");
    json_decref (ctx);
    job_forget (job);
}

/* --- stack calls ------------------------------------------------------- */

static char called[256];
static struct jt_plugin *to_retire;

static int cb_stack (flux_plugin_t *p,
                     const char *topic,
                     flux_plugin_arg_t *args,
                     void *arg)
{
    const char *what = arg;
    (void)topic;
    if (called[0])
        strncat (called, " ", sizeof (called) - strlen (called) - 1);
    strncat (called, jt_name (p), sizeof (called) - strlen (called) - 1);
    if (!strcmp (what, "fail"))
        return -1;
    if (!strcmp (what, "retire"))
        jt_retire (&rt, to_retire);
    if (!strcmp (what, "answer"))
        flux_plugin_arg_pack (args, FLUX_PLUGIN_ARG_OUT,
                              "{s:I s:{s:{s:s}}}",
                              "priority", (json_int_t)1234,
                              "annotations", "sched", "reason", "x");
    if (!strcmp (what, "update"))
        flux_jobtap_jobspec_update_pack (p, "{s:s}", "attributes.user.k",
                                         "v");
    return 0;
}

static void test_stack_calls (void)
{
    struct jt_plugin *a = core_plugin_make (&rt, "a"),
                     *b = core_plugin_make (&rt, "b"),
                     *c = core_plugin_make (&rt, "c");
    struct job *job = core_job_in_table (&rt, 80, FLUX_JOB_STATE_PRIORITY);
    flux_plugin_arg_t *args;

    flux_plugin_add_handler (a->p, "job.t.ok", cb_stack, "ok");
    flux_plugin_add_handler (b->p, "job.t.ok", cb_stack, "ok");
    flux_plugin_add_handler (a->p, "job.t.fail", cb_stack, "fail");
    flux_plugin_add_handler (b->p, "job.t.fail", cb_stack, "ok");
    flux_plugin_add_handler (a->p, "job.t.retire", cb_stack, "retire");
    flux_plugin_add_handler (b->p, "job.t.retire", cb_stack, "ok");
    flux_plugin_add_handler (c->p, "job.t.retire", cb_stack, "ok");
    flux_plugin_add_handler (c->p, "job.t.answer", cb_stack, "answer");
    flux_plugin_add_handler (a->p, "job.t.update", cb_stack, "update");
    flux_plugin_add_handler (c->p, "job.t.update", cb_stack, "ok");

    args = job_args_create (job);
    called[0] = '\0';
    isint (stack_call (job, "job.t.ok", args), 2,
           "stack_call: 2 plugins handled it");
    is (called, "a b", "...in load order");
    called[0] = '\0';
    isint (stack_call_skip (job, "job.t.ok", args, a), 2,
           "stack_call_skip counts the skipped plugin as handled");
    is (called, "b", "...without calling it");
    /* more plugins than a stack call's snapshot holds on the stack */
    struct jt_plugin *many[20];
    for (int i = 0; i < 20; i++) {
        char name[8];
        snprintf (name, sizeof (name), "m%d", i);
        many[i] = core_plugin_make (&rt, name);
        flux_plugin_add_handler (many[i]->p, "job.t.many", cb_stack, "ok");
    }
    called[0] = '\0';
    isint (stack_call (job, "job.t.many", args), 20,
           "stack_call over 20 plugins: all 20 handled it");
    ok (strstr (called, "m0 m1 ") == called && strstr (called, " m19"),
        "...in load order");
    for (int i = 0; i < 20; i++)
        jt_retire (&rt, many[i]);
    called[0] = '\0';
    isint (stack_call (job, "job.t.fail", args), -1,
           "a failing callback: -1");
    is (called, "a", "...and the plugins after it are not called");
    is (last_log, "jobtap: a: job.t.fail: rc=-1",
        "the failure is logged with the plugin and topic");

    to_retire = b;
    called[0] = '\0';
    isint (stack_call (job, "job.t.retire", args), 2,
           "a callback retires the next plugin: 2 handled");
    is (called, "a c", "the retired plugin is skipped, the next called");
    ok (!is_loaded (&rt, b) && rt.retired == NULL && rt.calls_active == 0,
        "it is destroyed once the stack call is over");
    ok (rt.dispatch->stack_len == 0, "the current-job stack is back to empty");
    flux_plugin_arg_destroy (args);

    /* OUT priority and annotations applied to the job */
    actions[0] = '\0';
    ok (jobtap_call (job, "job.t.answer", NULL) == 1,
        "jobtap_call: one plugin handled it");
    ok (job->state == FLUX_JOB_STATE_SCHED && job->priority == 1234,
        "OUT priority applied: SCHED, priority 1234");
    is (json_string_value (json_object_get (json_object_get (job->annotations,
                                                             "sched"),
                                            "reason")),
        "x", "OUT annotations merged into the job's");
    is (eventlog_names (job), "priority annotations",
        "a priority event, then an annotations event");
    is (actions, "priority 80 1234", "the host is told the priority at rest");
    ok (jobtap_call (job, "job.nobody", NULL) == 0,
        "jobtap_call of a topic nobody handles: 0");

    /* a jobspec update asked for in a callback is applied before the
     * next plugin is called */
    job->state = FLUX_JOB_STATE_SCHED;
    actions[0] = '\0';
    called[0] = '\0';
    ok (jobtap_call (job, "job.t.update", NULL) == 2,
        "jobtap_call with an update in the first callback");
    is (called, "a c", "both plugins called");
    is (json_string_value (json_object_get (json_object_get (
            json_object_get (job_jobspec (job), "attributes"), "user"), "k")),
        "v", "the update is applied to the jobspec");
    ok (job->pending_updates == NULL, "nothing pending");
    is (actions, "update 80 {\"attributes.user.k\":\"v\"}; "
        "hold 80 jobtap: priority unavailable",
        "the host hears the update; the job goes back to PRIORITY");

    job_forget (job);
    jt_retire (&rt, a);
    jt_retire (&rt, c);
}

/* A subscriber whose job.event.* callback unsubscribes and then fails:
 * unsubscribing while the job is busy only marks its entry, and the
 * failure is logged with the plugin the entry had (a NULL dereference
 * once, found by this test). */
static int heard_fail;
static int cb_unsubscribe_fail (flux_plugin_t *p,
                                const char *topic,
                                flux_plugin_arg_t *args,
                                void *arg)
{
    (void)topic;
    (void)args;
    (void)arg;
    heard_fail++;
    flux_jobtap_job_unsubscribe (p, 90);
    return -1;
}

static void test_unsubscribe_then_fail (void)
{
    struct jt_plugin *jt = core_plugin_make (&rt, "unsub-fail");
    struct job *job = core_job_in_table (&rt, 90, FLUX_JOB_STATE_SCHED);

    flux_plugin_add_handler (jt->p, "job.event.*", cb_unsubscribe_fail, NULL);
    ok (flux_jobtap_job_subscribe (jt->p, 90) == 0, "subscribed to job 90");
    event_post (job, "memo", NULL);
    event_post (job, "memo", NULL);
    ok (heard_fail == 1,
        "a callback that unsubscribes, then fails, heard one event");
    ok (job->subs == NULL, "and its entry is freed once the event is done");
    job_forget (job);
    jt_retire (&rt, jt);
}

/* A fatal exception a plugin raises in the callbacks of an event the
 * scheduler posted (job.state.run, after the host's alloc) is the
 * plugin's: the host is asked to end the job, as for any other. */
static int cb_raise_at_run (flux_plugin_t *p,
                            const char *topic,
                            flux_plugin_arg_t *args,
                            void *arg)
{
    (void)topic;
    (void)args;
    (void)arg;
    return flux_jobtap_raise_exception (p, FLUX_JOBTAP_CURRENT_JOB, "probe",
                                        0, "raised at run");
}

static void test_exception_in_host_event (void)
{
    struct jt_plugin *jt = core_plugin_make (&rt, "raiser");
    struct job *job = core_job_in_table (&rt, 95, FLUX_JOB_STATE_SCHED);

    flux_plugin_add_handler (jt->p, "job.state.run", cb_raise_at_run, NULL);
    actions[0] = '\0';
    ok (event_post_host (job, "alloc", NULL) == 0, "the host posts alloc");
    isint (job->state, FLUX_JOB_STATE_CLEANUP,
           "the exception raised in job.state.run: CLEANUP");
    is (actions, "cancel 95 probe raised at run",
        "the host is asked to cancel the job");
    ok (!job->host_event, "the host's mark is gone with its event");
    job_forget (job);
    jt_retire (&rt, jt);
}

int main (void)
{
    core_runtime_init (&rt, &ops);
    rt.keep_eventlog = ops.keep_eventlog;
    rt.ops_arg = &rt;
    runtime_log_sink (log_sink, NULL);

    test_subscribers ();
    test_subscribers_change ();
    test_queue ();
    test_sync_host ();
    test_post_effects ();
    test_stack_calls ();
    test_unsubscribe_then_fail ();
    test_exception_in_host_event ();

    core_runtime_fini (&rt);
    runtime_log_sink (NULL, NULL);
    done_testing ();
}
