/* api_job.c: the flux_jobtap_* calls about one job (aux, dependencies,
 * flags, events, jobspec updates, results, prolog and epilog), with
 * in-process plugins on a runtime made here. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flux/core.h>
#include <flux/jobtap.h>

#include "core_util.h"
#include "dispatch.h"
#include "event.h"
#include "host.h"
#include "job.h"
#include "jtplugin.h"
#include "log.h"
#include "loader.h"
#include "runtime.h"
#include "state.h"
#include "tap.h"

static struct runtime rt;
static struct jobtap_host_ops ops;
static char last_log[512];

static void log_sink (int level, const char *msg, void *arg)
{
    (void)level;
    (void)arg;
    snprintf (last_log, sizeof (last_log), "%s", msg);
}

/* How many events of this name the job's eventlog has. */
static int events_named (struct job *job, const char *name)
{
    size_t i;
    json_t *e;
    int n = 0;
    json_array_foreach (job->eventlog, i, e) {
        if (!strcmp (json_string_value (json_object_get (e, "name")), name))
            n++;
    }
    return n;
}

static int freed;
static void free_counted (void *arg)
{
    freed++;
    free (arg);
}

static void test_not_jobtap (void)
{
    flux_plugin_t *p = flux_plugin_create ();
    flux_job_result_t r;

    core_job_in_table (&rt, 1, FLUX_JOB_STATE_DEPEND);
    errno = 0;
    ok (flux_jobtap_job_aux_set (p, 1, "k", p, NULL) == -1 && errno == EINVAL,
        "job_aux_set with a non-jobtap plugin is EINVAL");
    errno = 0;
    ok (flux_jobtap_dependency_add (p, 1, "d") == -1 && errno == EINVAL,
        "dependency_add is EINVAL");
    errno = 0;
    ok (flux_jobtap_job_set_flag (p, 1, "debug") == -1 && errno == EINVAL,
        "job_set_flag is EINVAL");
    errno = 0;
    ok (flux_jobtap_event_post_pack (p, 1, "memo", NULL) == -1
            && errno == EINVAL,
        "event_post_pack is EINVAL");
    errno = 0;
    ok (flux_jobtap_get_job_result (p, 1, &r) == -1 && errno == EINVAL,
        "get_job_result is EINVAL");
    errno = 0;
    ok (flux_jobtap_job_event_posted (p, 1, "submit") == -1
            && errno == EINVAL,
        "job_event_posted is EINVAL");
    errno = 0;
    ok (flux_jobtap_prolog_start (p, "x") == -1 && errno == EINVAL,
        "prolog_start is EINVAL");
    errno = 0;
    ok (flux_jobtap_epilog_finish (p, 1, "x", 0) == -1 && errno == EINVAL,
        "epilog_finish is EINVAL");
    ok (flux_jobtap_job_lookup (p, 1) == NULL && errno == EINVAL,
        "job_lookup is EINVAL");
    flux_plugin_destroy (p);
}

static void test_aux (struct jt_plugin *jt, struct jt_plugin *other)
{
    char *v1 = strdup ("one"), *v2 = strdup ("two");

    freed = 0;
    ok (flux_jobtap_job_aux_set (jt->p, 1, "k", v1, free_counted) == 0,
        "job_aux_set works");
    ok (flux_jobtap_job_aux_get (jt->p, 1, "k") == v1,
        "job_aux_get gives the value back");
    ok (flux_jobtap_job_aux_get (other->p, 1, "k") == NULL,
        "another plugin does not see it");
    ok (flux_jobtap_job_aux_set (jt->p, 1, "k", v2, free_counted) == 0
            && freed == 1,
        "replacing a value runs the old destructor");
    errno = 0;
    ok (flux_jobtap_job_aux_set (other->p, 1, NULL, NULL, NULL) == -1
            && errno == EINVAL,
        "a NULL key and value is EINVAL");
    errno = 0;
    ok (flux_jobtap_job_aux_set (jt->p, 99, "k", v2, NULL) == -1
            && errno == ENOENT,
        "an unknown job is ENOENT");
    ok (flux_jobtap_job_aux_delete_value (jt->p, 1, v2) == 0 && freed == 2,
        "aux_delete_value runs the destructor");
    ok (flux_jobtap_job_aux_get (jt->p, 1, "k") == NULL,
        "the value is gone");
    ok (flux_jobtap_job_aux_delete_value (other->p, 1, v2) == 0,
        "deleting a value a plugin never set is no error");
}

static void test_dependencies (struct jt_plugin *jt)
{
    struct job *job = core_job_in_table (&rt, 2, FLUX_JOB_STATE_DEPEND);

    core_trace_reset ();
    ok (flux_jobtap_dependency_add (jt->p, 2, "wait-a") == 0,
        "dependency_add by literal id works");
    ok (json_object_get (job->deps, "wait-a") != NULL,
        "the job has the dependency");
    ok (flux_jobtap_dependency_add (jt->p, 2, "wait-a") == 0,
        "adding it again succeeds");
    isint (events_named (job, "dependency-add"), 1,
           "but posts no second dependency-add (idempotent)");
    ok (flux_jobtap_dependency_add (jt->p, 2, "wait-b") == 0,
        "a second dependency is added");
    isint (json_object_size (job->deps), 2, "the job has both");
    ok (flux_jobtap_dependency_remove (jt->p, 2, "wait-a") == 0,
        "dependency_remove works");
    ok (json_object_get (job->deps, "wait-a") == NULL
            && json_object_size (job->deps) == 1,
        "the dependency is gone, the other stays");
    ok (flux_jobtap_dependency_add (jt->p, 2, "wait-a") == 0,
        "adding a removed dependency again returns 0");
    ok (json_object_get (job->deps, "wait-a") == NULL,
        "but it does not come back (grudge)");
    is (core_trace_text (), "hold 2 jobtap: wait-a; hold 2 jobtap: wait-b",
        "the host holds the job with the first outstanding dependency");
    errno = 0;
    ok (flux_jobtap_dependency_remove (jt->p, 2, "never") == -1
            && errno == ENOENT,
        "removing an unknown dependency is ENOENT");
    errno = 0;
    ok (flux_jobtap_dependency_add (jt->p, 2, NULL) == -1 && errno == EINVAL,
        "a NULL description is EINVAL");
    errno = 0;
    ok (flux_jobtap_dependency_add (jt->p, 98, "x") == -1 && errno == ENOENT,
        "an unknown job is ENOENT");
    core_job_in_table (&rt, 3, FLUX_JOB_STATE_SCHED);
    errno = 0;
    ok (flux_jobtap_dependency_add (jt->p, 3, "x") == -1 && errno == EINVAL,
        "a job past DEPEND is EINVAL");
    job->state = FLUX_JOB_STATE_NEW;
    stack_push (job);
    errno = 0;
    ok (flux_jobtap_dependency_add (jt->p, FLUX_JOBTAP_CURRENT_JOB, "c")
            == -1 && errno == ENOENT,
        "FLUX_JOBTAP_CURRENT_JOB is not supported (ENOENT, as in Flux)");
    ok (flux_jobtap_dependency_add (jt->p, 2, "new-dep") == 0,
        "the current job in NEW can get a dependency");
    stack_pop (&rt);
    ok (json_object_get (job->deps, "new-dep") != NULL, "it has it");
    job->state = FLUX_JOB_STATE_DEPEND;
}

static void test_flags_events (struct jt_plugin *jt)
{
    struct job *job = table_find (&rt, 3);
    char *s;

    ok (flux_jobtap_job_set_flag (jt->p, 3, "debug") == 0,
        "job_set_flag debug works");
    ok (flux_jobtap_job_set_flag (jt->p, 3, "alloc-bypass") == 0
            && flux_jobtap_job_set_flag (jt->p, 3, "immutable") == 0,
        "alloc-bypass and immutable too");
    s = json_dumps (job->flags, JSON_COMPACT);
    is (s, "[\"debug\",\"alloc-bypass\",\"immutable\"]",
        "the job has the flags in order");
    free (s);
    errno = 0;
    ok (flux_jobtap_job_set_flag (jt->p, 3, "waitable") == -1
            && errno == EINVAL,
        "an unknown flag is EINVAL");
    errno = 0;
    ok (flux_jobtap_job_set_flag (jt->p, 97, "debug") == -1
            && errno == ENOENT,
        "an unknown job is ENOENT");

    isint (flux_jobtap_job_event_posted (jt->p, 3, "memo"), 0,
           "job_event_posted is 0 before the event");
    ok (flux_jobtap_event_post_pack (jt->p, 3, "memo", "{s:s}", "k", "v")
            == 0,
        "event_post_pack of memo works");
    isint (flux_jobtap_job_event_posted (jt->p, 3, "memo"), 1,
           "job_event_posted is 1 after it");
    ok (flux_jobtap_event_post_pack (jt->p, 3, "my-event", NULL) == 0,
        "an event of a plugin's own name works");
    isint (flux_jobtap_job_event_posted (jt->p, 3, "my-event"), 1,
           "and is posted");
    isint (flux_jobtap_job_event_posted (jt->p, 3, "other-event"), 0,
           "an event never posted is 0");
    errno = 0;
    ok (flux_jobtap_job_event_posted (jt->p, 96, "memo") == -1
            && errno == ENOENT,
        "job_event_posted of an unknown job is ENOENT");
    const char *owned[] = { "start", "alloc", "priority", "dependency-add",
                            "jobspec-update", "finish", NULL };
    int eperm = 0;
    for (int i = 0; owned[i]; i++) {
        errno = 0;
        if (flux_jobtap_event_post_pack (jt->p, 3, owned[i], NULL) == -1
            && errno == EPERM)
            eperm++;
    }
    isint (eperm, 6, "scheduler-owned events are refused with EPERM");
    is (last_log,
        "jobtap: api.so: event 'finish' cannot be posted by a plugin under "
        "slurm-jobtap",
        "and the refusal is logged");
    isint (job->state, FLUX_JOB_STATE_SCHED, "the job's state is unchanged");
    errno = 0;
    ok (flux_jobtap_event_post_pack (jt->p, 3, "memo", "x") == -1
            && errno == EINVAL,
        "a bad pack format is EINVAL");
}

static void test_jobspec_update (struct jt_plugin *jt)
{
    struct job *job = table_find (&rt, 3);
    char *s;

    errno = 0;
    ok (flux_jobtap_jobspec_update_pack (jt->p, "{s:i}",
                                         "attributes.system.x", 1) == -1
            && errno == EINVAL,
        "jobspec_update_pack outside a callback is EINVAL");
    stack_push (job);
    ok (flux_jobtap_jobspec_update_pack (jt->p, "{s:i}",
                                         "attributes.system.x", 1) == 0,
        "jobspec_update_pack in a callback works");
    ok (flux_jobtap_jobspec_update_pack (jt->p, "{s:s}",
                                         "attributes.system.y", "z") == 0,
        "a second update is merged");
    s = json_dumps (job->pending_updates, JSON_COMPACT | JSON_SORT_KEYS);
    is (s, "{\"attributes.system.x\":1,\"attributes.system.y\":\"z\"}",
        "both wait as pending updates");
    free (s);
    /* the first was kept (update_memo.h), so the merge was made in a
     * copy: packed again, it is as it was packed */
    json_decref (job->pending_updates);
    job->pending_updates = NULL;
    ok (flux_jobtap_jobspec_update_pack (jt->p, "{s:i}",
                                         "attributes.system.x", 1) == 0,
        "the first update packed again");
    s = json_dumps (job->pending_updates, JSON_COMPACT | JSON_SORT_KEYS);
    is (s, "{\"attributes.system.x\":1}",
        "it is the kept object, unchanged by the merge");
    free (s);
    ok (job->pending_updates->refcount == 2,
        "held by the job and by the memo");
    errno = 0;
    ok (flux_jobtap_jobspec_update_pack (jt->p, "{s:i}", "foo.bar", 1) == -1
            && errno == EINVAL,
        "a key outside the jobspec is EINVAL");
    job->state = FLUX_JOB_STATE_RUN;
    errno = 0;
    ok (flux_jobtap_jobspec_update_pack (jt->p, "{s:i}",
                                         "attributes.system.x", 2) == -1
            && errno == EINVAL,
        "a running job's jobspec cannot be updated");
    job->state = FLUX_JOB_STATE_SCHED;
    stack_pop (&rt);
    json_decref (job->pending_updates);
    job->pending_updates = NULL;
}

static void test_results (struct jt_plugin *jt)
{
    flux_job_result_t r = 0;
    struct {
        const char *event, *type;
        int status;
        flux_job_result_t want;
        const char *what;
    } cases[] = {
        { "finish", NULL, 0, FLUX_JOB_RESULT_COMPLETED, "finish status 0" },
        { "finish", NULL, 256, FLUX_JOB_RESULT_FAILED, "finish status 256" },
        { "exception", "cancel", 0, FLUX_JOB_RESULT_CANCELED, "cancel" },
        { "exception", "timeout", 0, FLUX_JOB_RESULT_TIMEOUT, "timeout" },
        { "exception", "other", 0, FLUX_JOB_RESULT_FAILED, "other exception" },
    };

    for (int i = 0; i < 5; i++) {
        flux_jobid_t id = 10 + i;
        struct job *job = core_job_in_table (&rt, id, FLUX_JOB_STATE_RUN);
        json_t *ctx;
        if (i == 0) {
            errno = 0;
            ok (flux_jobtap_get_job_result (jt->p, id, &r) == -1
                    && errno == EINVAL,
                "get_job_result of a running job is EINVAL");
        }
        ctx = cases[i].type ? json_pack ("{s:s s:i s:s}", "type",
                                         cases[i].type, "severity", 0,
                                         "note", "")
                            : json_pack ("{s:i}", "status", cases[i].status);
        event_post (job, cases[i].event, ctx);
        json_decref (ctx);
        r = 0;
        ok (job->state == FLUX_JOB_STATE_CLEANUP
                && flux_jobtap_get_job_result (jt->p, id, &r) == 0
                && r == cases[i].want,
            "get_job_result after %s is %s", cases[i].what,
            flux_job_resulttostr (cases[i].want, "L"));
    }
    errno = 0;
    ok (flux_jobtap_get_job_result (jt->p, 95, &r) == -1 && errno == ENOENT,
        "get_job_result of an unknown job is ENOENT");
}

static void test_perilog (struct jt_plugin *jt)
{
    struct job *run = core_job_in_table (&rt, 20, FLUX_JOB_STATE_RUN);
    struct job *cleanup = table_find (&rt, 10);

    errno = 0;
    ok (flux_jobtap_prolog_start (jt->p, "p") == -1 && errno == EINVAL,
        "prolog_start outside a callback is EINVAL");
    stack_push (run);
    ok (flux_jobtap_prolog_start (jt->p, "p") == 0,
        "prolog_start on the current running job works");
    isint (run->perilog_active, 1, "one prolog/epilog is active");
    errno = 0;
    ok (flux_jobtap_epilog_start (jt->p, "e") == -1 && errno == EINVAL,
        "epilog_start on a job not in CLEANUP is EINVAL");
    errno = 0;
    ok (flux_jobtap_prolog_start (jt->p, NULL) == -1 && errno == EINVAL,
        "prolog_start without a description is EINVAL");
    stack_pop (&rt);
    ok (flux_jobtap_prolog_finish (jt->p, 20, "p", 0) == 0,
        "prolog_finish by id works");
    isint (run->perilog_active, 0, "none is active then");
    isint (events_named (run, "prolog-start") + events_named (run,
                                                             "prolog-finish"),
           2, "both events are in the eventlog");
    errno = 0;
    ok (flux_jobtap_prolog_finish (jt->p, 20, NULL, 0) == -1
            && errno == EINVAL,
        "prolog_finish without a description is EINVAL");
    errno = 0;
    ok (flux_jobtap_epilog_finish (jt->p, 20, "e", 0) == -1
            && errno == EINVAL,
        "epilog_finish on a job not in CLEANUP is EINVAL");

    stack_push (cleanup);
    errno = 0;
    ok (flux_jobtap_prolog_start (jt->p, "p") == -1 && errno == EINVAL,
        "prolog_start in CLEANUP is EINVAL");
    ok (flux_jobtap_epilog_start (jt->p, "e") == 0,
        "epilog_start on the current job in CLEANUP works");
    stack_pop (&rt);
    isint (cleanup->perilog_active, 1, "the epilog is active");
    ok (flux_jobtap_epilog_finish (jt->p, 10, "e", 0) == 0,
        "epilog_finish in CLEANUP works");
    isint (cleanup->perilog_active, 0, "none is active then");
    errno = 0;
    ok (flux_jobtap_epilog_finish (jt->p, 94, "e", 0) == -1
            && errno == ENOENT,
        "epilog_finish of an unknown job is ENOENT");
}

int main (void)
{
    core_runtime_init (&rt, &ops);
    struct jt_plugin *jt, *other;

    ops.hold = core_trace_hold;
    ops.release = core_trace_release;
    ops.cancel = core_trace_cancel;
    ops.keep_eventlog = rt.keep_eventlog = true;
    runtime_log_sink (log_sink, NULL);
    jt = core_plugin_make (&rt, "api.so");
    other = core_plugin_make (&rt, "other.so");

    test_not_jobtap ();
    test_aux (jt, other);
    test_dependencies (jt);
    test_flags_events (jt);
    test_jobspec_update (jt);
    test_results (jt);
    test_perilog (jt);

    loader_unload_all (&rt);
    core_runtime_fini (&rt);
    runtime_log_sink (NULL, NULL);
    done_testing ();
}
