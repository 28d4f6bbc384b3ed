/* state.c: the RFC 21 state machine applied to a job made here, event by
 * event, with no callbacks and no host (those are event.c's). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <flux/jobtap.h>

#include "job.h"
#include "log.h"
#include "runtime.h"
#include "spec.h"
#include "state.h"
#include "core_util.h"
#include "tap.h"

static struct runtime rt;
static struct jobtap_host_ops ops;
static json_t *logged;

static void log_sink (int level, const char *msg, void *arg)
{
    (void)level;
    (void)arg;
    json_array_append_new (logged, json_string (msg));
}

/* Apply event 'name' (context stolen, may be NULL) as event_post would,
 * without its effects. */
static int apply (struct job *job, const char *name, json_t *context)
{
    struct event ev = {
        .kind = known_event (name),
        .name = name,
        .context = context,
        .timestamp = 100.5,
    };
    int rc = event_job_update (job, &ev);
    event_release (&ev);
    return rc;
}

static struct job *job_in (int state)
{
    struct job *job = job_create (&rt, NULL, 1000, 16, 1.0);
    if (!job)
        bail_out ("job_create failed");
    job->id = 77;
    job->state = state;
    return job;
}

static void test_names (void)
{
    int wrong = 0;

    for (int i = 0; i < EV_NKNOWN; i++) {
        if (!event_name (i) || known_event (event_name (i)) != i)
            wrong++;
    }
    isint (wrong, 0, "known_event (event_name (k)) == k for all %d kinds",
           EV_NKNOWN);
    is (event_name (EV_DEPENDENCY_ADD), "dependency-add",
        "EV_DEPENDENCY_ADD is dependency-add");
    is (event_name (EV_JOBSPEC_UPDATE), "jobspec-update",
        "EV_JOBSPEC_UPDATE is jobspec-update");
    isint (known_event ("exception"), EV_EXCEPTION,
           "known_event (exception)");
    isint (known_event ("no-such-event"), -1, "an unknown name is -1");
    isint (known_event (""), -1, "the empty name is -1");

    is (state_topic (FLUX_JOB_STATE_NEW), "job.state.new", "NEW topic");
    is (state_topic (FLUX_JOB_STATE_DEPEND), "job.state.depend",
        "DEPEND topic");
    is (state_topic (FLUX_JOB_STATE_PRIORITY), "job.state.priority",
        "PRIORITY topic");
    is (state_topic (FLUX_JOB_STATE_SCHED), "job.state.sched", "SCHED topic");
    is (state_topic (FLUX_JOB_STATE_RUN), "job.state.run", "RUN topic");
    is (state_topic (FLUX_JOB_STATE_CLEANUP), "job.state.cleanup",
        "CLEANUP topic");
    is (state_topic (FLUX_JOB_STATE_INACTIVE), "job.state.inactive",
        "INACTIVE topic");
    is (state_topic (3), "job.state.(unknown)", "a state that is no state");
}

static void test_entry (void)
{
    struct event ev = {
        .kind = EV_MEMO,
        .name = "memo",
        .context = json_pack ("{s:s}", "k", "v"),
        .timestamp = 12.25,
    };
    json_t *e = event_entry_of (&ev);

    ok (e && json_real_value (json_object_get (e, "timestamp")) == 12.25,
        "event_entry_of: the timestamp");
    is (json_string_value (json_object_get (e, "name")), "memo",
        "event_entry_of: the name");
    ok (json_object_get (e, "context") == ev.context,
        "event_entry_of: the context itself");
    ok (event_entry_of (&ev) == e, "built once, then the same entry");
    event_release (&ev);

    ev = (struct event){ .kind = EV_CLEAN, .name = "clean", .timestamp = 1. };
    e = event_entry_of (&ev);
    ok (e && json_object_size (e) == 2 && !json_object_get (e, "context"),
        "an event without context has no context key");
    event_release (&ev);
}

static void test_lifecycle (void)
{
    struct job *job;
    json_t *u;

    ops.keep_eventlog = rt.keep_eventlog = true;
    job = job_in (FLUX_JOB_STATE_NEW);
    ok (apply (job, "submit", NULL) == 0
            && job->state == FLUX_JOB_STATE_NEW,
        "submit: stays NEW");
    ok (apply (job, "validate", NULL) == 0
            && job->state == FLUX_JOB_STATE_DEPEND,
        "validate: NEW -> DEPEND");
    ok (apply (job, "depend", NULL) == 0
            && job->state == FLUX_JOB_STATE_PRIORITY,
        "depend: DEPEND -> PRIORITY");
    ok (apply (job, "priority", json_pack ("{s:I}", "priority",
                                           (json_int_t)4000000000LL)) == 0
            && job->state == FLUX_JOB_STATE_SCHED,
        "priority: PRIORITY -> SCHED");
    isint (job->priority, 4000000000LL, "priority: the value is stored");
    ok (apply (job, "urgency", json_pack ("{s:i}", "urgency", 31)) == 0
            && job->state == FLUX_JOB_STATE_PRIORITY,
        "urgency: SCHED -> PRIORITY");
    isint (job->urgency, 31, "urgency: the value is stored");
    ok (apply (job, "priority", json_pack ("{s:i}", "priority", 9)) == 0
            && job->state == FLUX_JOB_STATE_SCHED && job->priority == 9,
        "priority again: PRIORITY -> SCHED, priority 9");
    ok (apply (job, "priority", json_pack ("{s:i}", "priority", 12)) == 0
            && job->state == FLUX_JOB_STATE_SCHED && job->priority == 12,
        "priority in SCHED: stays SCHED, priority 12");
    u = json_pack ("{s:f}", "attributes.system.duration", 30.0);
    ok (apply (job, "jobspec-update", json_incref (u)) == 0
            && job->state == FLUX_JOB_STATE_PRIORITY,
        "jobspec-update: SCHED -> PRIORITY");
    ok (json_real_value (json_object_get (json_object_get (
            json_object_get (job_jobspec (job), "attributes"), "system"),
                                          "duration")) == 30.0,
        "jobspec-update: the jobspec is updated");
    ok (json_equal (job->all_updates, u),
        "jobspec-update: recorded in all_updates");
    struct job *other = job_in (FLUX_JOB_STATE_SCHED);
    json_t *u2 = json_pack ("{s:s}", "attributes.system.queue", "q");
    ok (apply (other, "jobspec-update", json_incref (u)) == 0
            && apply (other, "jobspec-update", json_incref (u2)) == 0
            && json_object_size (other->all_updates) == 2
            && json_object_get (other->all_updates, "attributes.system.queue")
            && json_object_size (u) == 1,
        "two jobspec-updates: both in all_updates, the first's context as "
        "it was");
    job_decref (other);
    json_decref (u2);
    json_decref (u);
    ok (apply (job, "priority", json_pack ("{s:i}", "priority", 5)) == 0
            && job->state == FLUX_JOB_STATE_SCHED,
        "back to SCHED");
    ok (apply (job, "validate", NULL) == 0
            && job->state == FLUX_JOB_STATE_SCHED,
        "validate in SCHED: no transition");
    ok (apply (job, "alloc", NULL) == 0 && job->state == FLUX_JOB_STATE_RUN,
        "alloc: SCHED -> RUN");
    ok (apply (job, "start", NULL) == 0 && job->state == FLUX_JOB_STATE_RUN,
        "start: stays RUN");
    ok (job->end_event == NULL, "no end_event while running");
    ok (apply (job, "finish", json_pack ("{s:i}", "status", 256)) == 0
            && job->state == FLUX_JOB_STATE_CLEANUP,
        "finish: RUN -> CLEANUP");
    is (json_string_value (json_object_get (job->end_event, "name")),
        "finish", "finish: end_event is the finish entry");
    isint (json_integer_value (json_object_get (
               json_object_get (job->end_event, "context"), "status")),
           256, "end_event carries its context");
    ok (json_real_value (json_object_get (job->end_event, "timestamp"))
            == 100.5,
        "end_event carries its timestamp");
    ok (apply (job, "exception", json_pack ("{s:s s:i}", "type", "cancel",
                                            "severity", 0)) == 0
            && job->state == FLUX_JOB_STATE_CLEANUP,
        "a fatal exception in CLEANUP: stays CLEANUP");
    is (json_string_value (json_object_get (job->end_event, "name")),
        "finish", "...and end_event stays finish");
    ok (apply (job, "free", NULL) == 0
            && job->state == FLUX_JOB_STATE_CLEANUP,
        "free: stays CLEANUP");
    ok (apply (job, "clean", NULL) == 0
            && job->state == FLUX_JOB_STATE_INACTIVE,
        "clean: CLEANUP -> INACTIVE");

    isint (json_array_size (job->eventlog), 16,
           "every applied event is in the eventlog");
    is (json_string_value (json_object_get (json_array_get (job->eventlog, 0),
                                            "name")),
        "submit", "the eventlog starts with submit");
    is (json_string_value (json_object_get (json_array_get (job->eventlog, 15),
                                            "name")),
        "clean", "and ends with clean");
    ok (posted_test (job, "alloc") && posted_test (job, "clean")
            && posted_test (job, "exception"),
        "posted_test: applied events are posted");
    ok (!posted_test (job, "prolog-start") && !posted_test (job, "memo"),
        "posted_test: others are not");
    job_decref (job);
    ops.keep_eventlog = rt.keep_eventlog = false;
}

static void test_exception (void)
{
    struct job *job = job_in (FLUX_JOB_STATE_NEW);

    json_array_clear (logged);
    errno = 0;
    ok (apply (job, "exception", json_pack ("{s:s s:i s:s}", "type", "x",
                                            "severity", 0, "note", "n"))
                == -1
            && errno == EINVAL,
        "a fatal exception in NEW: -1, EINVAL");
    isint (job->state, FLUX_JOB_STATE_NEW, "...and the job stays NEW");
    ok (!posted_test (job, "exception"), "...and it is not posted");
    ok (json_array_size (logged) == 1
            && !strcmp (json_string_value (json_array_get (logged, 0)),
                        "job 77: fatal job exception was posted in NEW "
                        "state"),
        "...and the error is logged with the job id");

    job->state = FLUX_JOB_STATE_SCHED;
    ok (apply (job, "exception", json_pack ("{s:s s:i}", "type", "x",
                                            "severity", 1)) == 0
            && job->state == FLUX_JOB_STATE_SCHED && !job->end_event,
        "a non-fatal exception changes no state");
    ok (posted_test (job, "exception"), "...and is posted");
    ok (apply (job, "exception", json_pack ("{s:s}", "type", "cancel")) == 0
            && job->state == FLUX_JOB_STATE_CLEANUP,
        "an exception without severity is fatal: SCHED -> CLEANUP");
    ok (json_object_get (job->end_event, "name")
            && !strcmp (json_string_value (json_object_get (job->end_event,
                                                            "name")),
                        "exception"),
        "...with the exception as end_event");
    job_decref (job);

    job = job_in (FLUX_JOB_STATE_DEPEND);
    ok (apply (job, "exception", json_pack ("{s:i}", "severity", 0)) == 0
            && job->state == FLUX_JOB_STATE_CLEANUP,
        "a fatal exception in DEPEND: CLEANUP");
    job_decref (job);
}

static void test_dependencies (void)
{
    struct job *job = job_in (FLUX_JOB_STATE_DEPEND);
    const char *k;
    json_t *v;
    char order[64] = "";

    ok (apply (job, "dependency-add", json_pack ("{s:s}", "description",
                                                 "b")) == 0
            && apply (job, "dependency-add",
                      json_pack ("{s:s}", "description", "a")) == 0,
        "dependency-add twice");
    isint (json_object_size (job->deps), 2, "two dependencies outstanding");
    json_object_foreach (job->deps, k, v)
        strcat (order, k);
    is (order, "ba", "deps keep insertion order");
    isint (job->state, FLUX_JOB_STATE_DEPEND, "still DEPEND");
    ok (apply (job, "dependency-remove", json_pack ("{s:s}", "description",
                                                    "b")) == 0
            && json_object_size (job->deps) == 1
            && json_object_get (job->deps, "a"),
        "dependency-remove b: a is left");
    ok (json_object_get (job->grudge, "b") && json_object_get (job->grudge,
                                                               "a"),
        "the grudge set has both");
    ok (apply (job, "dependency-add", json_pack ("{s:s}", "description",
                                                 "b")) == 0
            && !json_object_get (job->deps, "b"),
        "adding a removed description again: not outstanding (grudge)");
    errno = 0;
    ok (apply (job, "dependency-remove", json_pack ("{s:s}", "description",
                                                    "b")) == -1
            && errno == ENOENT,
        "removing one not outstanding: -1, ENOENT");
    errno = 0;
    ok (apply (job, "dependency-remove", NULL) == -1 && errno == ENOENT,
        "dependency-remove without description: -1, ENOENT");
    ok (apply (job, "dependency-remove", json_pack ("{s:s}", "description",
                                                    "a")) == 0
            && json_object_size (job->deps) == 0,
        "the last one removed");
    isint (job->state, FLUX_JOB_STATE_DEPEND,
           "the state machine leaves DEPEND only by depend");
    job_decref (job);
}

static void test_flags_perilog_posted (void)
{
    struct job *job = job_in (FLUX_JOB_STATE_SCHED);
    char *s;

    ok (apply (job, "set-flags", json_pack ("{s:[s]}", "flags", "debug"))
                == 0
            && apply (job, "set-flags",
                      json_pack ("{s:[s,s]}", "flags", "waitable", "x"))
                   == 0,
        "set-flags twice");
    s = json_dumps (job->flags, JSON_COMPACT);
    is (s, "[\"debug\",\"waitable\",\"x\"]", "flags are appended in order");
    free (s);

    apply (job, "prolog-start", json_pack ("{s:s}", "description", "p"));
    isint (job->perilog_active, 1, "prolog-start: 1 active");
    apply (job, "epilog-start", json_pack ("{s:s}", "description", "e"));
    isint (job->perilog_active, 2, "epilog-start: 2 active");
    apply (job, "prolog-finish", json_pack ("{s:s}", "description", "p"));
    isint (job->perilog_active, 1, "prolog-finish: 1 active");
    apply (job, "epilog-finish", json_pack ("{s:s}", "description", "e"));
    isint (job->perilog_active, 0, "epilog-finish: none");
    apply (job, "epilog-finish", NULL);
    isint (job->perilog_active, 0, "a finish too many stays at 0");
    isint (job->state, FLUX_JOB_STATE_SCHED, "perilog events change no state");

    ok (!posted_test (job, "my-event"), "a name never posted: false");
    ok (apply (job, "my-event", json_pack ("{s:i}", "n", 1)) == 0,
        "an unknown event applies");
    isint (job->state, FLUX_JOB_STATE_SCHED, "...changing no state");
    ok (posted_test (job, "my-event"), "posted_test finds the unknown name");
    ok (json_object_get (job->posted_other, "my-event") != NULL,
        "...recorded in posted_other");
    ok (!posted_test (job, "my-other-event"),
        "another unknown name: false");
    ok (posted_test (job, "set-flags") && posted_test (job, "epilog-finish")
            && !posted_test (job, "alloc"),
        "known names: by their bit");
    isint (job->posted, (1u << EV_SET_FLAGS) | (1u << EV_PROLOG_START)
                            | (1u << EV_PROLOG_FINISH)
                            | (1u << EV_EPILOG_START)
                            | (1u << EV_EPILOG_FINISH),
           "exactly those bits are set");
    ok (job->eventlog == NULL, "no eventlog unless the host keeps them");
    job_decref (job);
}

int main (void)
{
    core_runtime_init (&rt, &ops);
    logged = json_array ();
    runtime_log_sink (log_sink, NULL);

    test_names ();
    test_entry ();
    test_lifecycle ();
    test_exception ();
    test_dependencies ();
    test_flags_perilog_posted ();

    runtime_log_sink (NULL, NULL);
    json_decref (logged);
    done_testing ();
}
