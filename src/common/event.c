/* Posting events and their effects (event.h). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include <flux/core.h>
#include <flux/jobtap.h>

#include "dispatch.h"
#include "event.h"
#include "host.h"
#include "job.h"
#include "jtplugin.h"
#include "log.h"
#include "perilog.h"
#include "priority_args.h"
#include "runtime.h"
#include "state.h"
#include "store.h"

static int flush_updates (struct job *job);

static void notify_event (struct job *job, struct event *ev)
{
    struct runtime *rt = job->rt;
    json_t *entry;
    if (job_is_bound (job) && rt->ops->event && (entry = event_entry_of (ev)))
        rt->ops->event (job->id, entry, rt->ops_arg);
}

/* A fatal exception a plugin raised: the scheduler is asked to end the
 * job (one it reported itself needs no asking). */
static void fatal_cancel (struct job *job, const struct event *ev)
{
    struct runtime *rt = job->rt;
    const char *type = json_string_value (json_object_get (ev->context, "type"));
    const char *note = json_string_value (json_object_get (ev->context, "note"));
    if (job_is_bound (job) && !ev->from_host && rt->ops->cancel)
        rt->ops->cancel (job->id,
                         type ? type : "exception",
                         note ? note : "",
                         rt->ops_arg);
}

static __attribute__ ((noinline)) void report_urgency_hold (struct job *job,
                                                             bool held)
{
    struct runtime *rt = job->rt;
    job->reported_urgency_hold = held;
    if (rt->ops->urgency_hold)
        rt->ops->urgency_hold (job->id, held, rt->ops_arg);
}

/* What perilog.c decides for a job whose events settled: a failed
 * prolog ends the job as Flux's perilog does, with a fatal "prolog"
 * exception (from the host, so the host's cancel is not asked: the host
 * fails the job itself when told), the wait off while its events settle
 * so that they do not come back here; then the host hears that what it
 * waited for is over. */
static void perilog_apply (struct job *job)
{
    struct runtime *rt = job->rt;
    struct perilog_done done;

    if (perilog_prolog_failed (job)) {
        job->perilog_wait = PERILOG_WAIT_NONE;
        job->host_event = true;
        (void)raise_exception_internal (job, "prolog", 0,
                                        job->prolog_note ? job->prolog_note
                                                         : "");
        job->host_event = false;
        job->perilog_wait = PERILOG_WAIT_PROLOG;
    }
    if (!perilog_settle (job, &done))
        return;
    if (done.start)
        (void)event_post_host (job, "start", NULL);
    if (rt->ops->perilog_done)
        rt->ops->perilog_done (job->id, done.epilog, done.status, done.note,
                               rt->ops_arg);
}

/* Tell the scheduler what it must do after a burst of events settles:
 * hold/release and priority changes.  Done at rest so a job that passes
 * DEPEND -> PRIORITY -> SCHED in one cascade is never held. */
void job_sync_host (struct job *job)
{
    struct runtime *rt = job->rt;
    char reason[1024];
    const char *want = NULL;

    if (!job_is_bound (job))
        return;
    /* an urgency hold under jobtap's own is named too, so the owner sees
     * that a release is theirs to give as well */
    const char *also_user = job->urgency == FLUX_JOB_URGENCY_HOLD
                                ? "; also held by its user"
                                : "";
    if (job->state == FLUX_JOB_STATE_DEPEND && json_object_size (job->deps)) {
        void *it = json_object_iter (job->deps);
        snprintf (reason, sizeof (reason), "jobtap: %s%s",
                  json_object_iter_key (it), also_user);
        want = reason;
    }
    else if (job->state == FLUX_JOB_STATE_PRIORITY) {
        snprintf (reason, sizeof (reason), "jobtap: priority unavailable%s",
                  also_user);
        want = reason;
    }

    if (want && (!job->hold_reason || strcmp (want, job->hold_reason))) {
        free (job->hold_reason);
        job->hold_reason = strdup (want);
        if (rt->ops->hold)
            rt->ops->hold (job->id, want, rt->ops_arg);
    }
    else if (!want && job->hold_reason) {
        free (job->hold_reason);
        job->hold_reason = NULL;
        if (rt->ops->release)
            rt->ops->release (job->id, rt->ops_arg);
    }
    if (job->perilog_wait)
        perilog_apply (job);
    /* before the priority: an urgency hold keeps priority 0 from being
     * taken as a priority to schedule by */
    bool urgency_hold = job->state == FLUX_JOB_STATE_SCHED
                        && job->urgency == FLUX_JOB_URGENCY_HOLD;
    /* Leaving SCHED (started, or ended) lifts nothing: only raising the
     * urgency of a job still in SCHED is a release. */
    if (urgency_hold != job->reported_urgency_hold) {
        if (urgency_hold || job->state == FLUX_JOB_STATE_SCHED)
            report_urgency_hold (job, urgency_hold);
        else
            job->reported_urgency_hold = false;
    }
    if (job->state == FLUX_JOB_STATE_SCHED
        && job->priority != job->reported_priority) {
        job->reported_priority = job->priority;
        if (rt->ops->set_priority)
            rt->ops->set_priority (job->id, job->priority, rt->ops_arg);
    }
}

/* The effects of an event just applied to the job (event_job_update):
 * the host told, then subscribers, job.update and job.state.<s>
 * callbacks, and the event that follows from entering DEPEND with no
 * dependencies.  Events posted meanwhile wait in the job's queue. */
static void event_job_action (struct job *job, struct event *ev, int prev_state)
{
    struct runtime *rt = job->rt;
    json_t *context = ev->context;
    int new_state = job->state;
    json_t *entry;

    if (ev->kind == EV_EXCEPTION && new_state != prev_state)
        fatal_cancel (job, ev);
    if (ev->kind == EV_JOBSPEC_UPDATE && job_is_bound (job)
        && !job->quiet_update && rt->ops->jobspec_update) {
        /* flushed after a stack call, or posted by the plugin running */
        struct jt_plugin *origin = job->update_origin ? job->update_origin
                                                      : rt->calling;
        rt->ops->jobspec_update (job->id, context,
                                 origin ? origin->list_name : NULL,
                                 rt->ops_arg);
    }
    notify_event (job, ev);

    /* subscribers first, then job.update, then job.state.* */
    if (job->subs && (entry = event_entry_of (ev))) {
        char topic[256];
        struct sub *s;
        snprintf (topic, sizeof (topic), "job.event.%s", ev->name);
        /* A callback may unsubscribe (the entry is only marked then, see
         * subs_remove), subscribe (appended, so it hears this event) or
         * unload a plugin (kept until the walk ends). */
        jt_hold_all (rt);
        for (s = job->subs; s; s = s->next) {
            struct jt_plugin *jt = s->plugin;
            flux_plugin_arg_t *args;
            if (!jt || !(args = job_args_create (job)))
                continue;
            flux_plugin_arg_pack (args,
                                  FLUX_PLUGIN_ARG_IN,
                                  "{s:O}",
                                  "entry", entry);
            stack_push (job);
            if (jt_call (jt, topic, args) < 0)
                runtime_log (LOG_DEBUG,
                             "jobtap: %s: %s: rc=-1",
                             jt->list_name,
                             topic);
            stack_pop (rt);
            job_args_done (job->rt, args);
        }
        jt_release_all (rt);
    }
    if (ev->kind == EV_JOBSPEC_UPDATE && stack_handles (rt, "job.update")) {
        json_t *in = call_fields ("updates", context, NULL, 0);
        jobtap_call_handled (job, "job.update", in, NULL);
        json_decref (in);
    }
    if (new_state != prev_state) {
        const char *topic = state_topic (new_state);
        int handlers;
        struct jt_plugin *builtin =
            state_default_priority (rt, new_state, topic, &handlers);
        if (builtin && handlers == 1)
            reprioritize_one (job, job->urgency);
        else if (handlers > 0) {
            json_t *in = call_fields ("entry", event_entry_of (ev),
                                      "prev_state", prev_state);
            jobtap_call_handled (job, topic, in, builtin);
            json_decref (in);
        }

        /* actions on entering a state */
        if (new_state == FLUX_JOB_STATE_DEPEND) {
            if (json_object_size (job->deps) == 0
                && !queue_has (job, EV_DEPENDENCY_ADD))
                event_post_known (job, EV_DEPEND, NULL);
        }
    }
    else if (ev->kind == EV_DEPENDENCY_REMOVE
             && job->state == FLUX_JOB_STATE_DEPEND
             && json_object_size (job->deps) == 0
             && !queue_has (job, EV_DEPENDENCY_ADD))
        event_post_known (job, EV_DEPEND, NULL);
}

/* Post ev (its references taken): apply it now, or after the event
 * being applied, whose callbacks posted it. */
static int event_post_event (struct job *job, struct event ev)
{
    struct qentry *q;
    int rc = 0;

    ev.from_host = job->host_event;
    /* (what the callbacks of this event post is the plugins') */
    job->host_event = false;

    if (job->busy) {
        /* deferred until the current event's callbacks return */
        if (!(q = qentry_new (job->rt))
            || (ev.kind < 0
                && !(ev.name = ev.name_copy = strdup (ev.name)))) {
            qentry_free (job->rt, q);
            event_release (&ev);
            errno = ENOMEM;
            return -1;
        }
        q->ev = ev;
        q->next = NULL;
        if (job->queue_tail)
            job->queue_tail->next = q;
        else
            job->queue = q;
        job->queue_tail = q;
        return 0;
    }
    job->busy = true;
    job_incref (job);
    for (;;) {
        int prev_state = job->state;
        if (event_job_update (job, &ev) < 0)
            rc = -1;
        else {
            store_record (job, &ev);
            event_job_action (job, &ev, prev_state);
        }
        event_release (&ev);
        if (!(q = job->queue))
            break;
        if (!(job->queue = q->next))
            job->queue_tail = NULL;
        ev = q->ev;
        qentry_free (job->rt, q);
    }
    job->busy = false;
    subs_reap (job);
    job_sync_host (job);
    job_decref (job);
    return rc;
}

/* Post event 'kind' (EV_*, or -1: 'name' is not a known event) with
 * 'context' (borrowed, may be NULL). */
static int event_post_kind (struct job *job,
                            int kind,
                            const char *name,
                            json_t *context)
{
    return event_post_event (job,
                             (struct event){
                                 .kind = kind,
                                 .name = kind >= 0 ? event_name (kind) : name,
                                 .context = json_incref (context),
                                 .timestamp = now (),
                             });
}

int event_post_known (struct job *job, int kind, json_t *context)
{
    return event_post_kind (job, kind, NULL, context);
}

/* Post event 'kind' whose context is numbers of a shape (job.h), made
 * JSON only if read. */
static int event_post_numbers (struct job *job,
                               int kind,
                               enum event_numbers shape,
                               int64_t n0,
                               int64_t n1,
                               int64_t n2)
{
    return event_post_event (job,
                             (struct event){
                                 .kind = kind,
                                 .name = event_name (kind),
                                 .timestamp = now (),
                                 .numbers_of = shape,
                                 .numbers = {n0, n1, n2},
                             });
}

int event_post_submit (struct job *job,
                       uint32_t userid,
                       int urgency,
                       int flags)
{
    return event_post_numbers (job, EV_SUBMIT, NUMBERS_SUBMIT, userid,
                               urgency, flags);
}

int event_post_host (struct job *job, const char *name, json_t *context)
{
    int rc;
    job->host_event = true;
    rc = event_post (job, name, context);
    job->host_event = false;
    return rc;
}

int event_post (struct job *job, const char *name, json_t *context)
{
    return event_post_kind (job, known_event (name), name, context);
}

static int flush_updates (struct job *job)
{
    json_t *u = job->pending_updates;
    int rc = 0;
    if (u) {
        job->pending_updates = NULL;
        rc = event_post_known (job, EV_JOBSPEC_UPDATE, u);
        json_decref (u);
    }
    return rc;
}

/* A stack call whose result nobody reads. */
void stack_notify (struct job *job, const char *topic)
{
    struct runtime *rt = job->rt;
    flux_plugin_arg_t *args;
    if (stack_handles (rt, topic) && (args = job_args_create (job))) {
        stack_call (job, topic, args);
        job_args_done (job->rt, args);
    }
}

/* Call 'topic' on every plugin in load order with one shared args
 * object, counting 'skip' (may be NULL) as handled without calling it:
 * the caller has put its answer in the args.  Returns the number of
 * plugins that handled it, or -1 at the first failure (OUT args already
 * set stay). */
int stack_call_skip (struct job *job,
                            const char *topic,
                            flux_plugin_arg_t *args,
                            struct jt_plugin *skip)
{
    struct runtime *rt = job->rt;
    struct jt_plugin *few[16], **v;
    int n, total = 0;

    if (!(v = jt_snapshot_in (rt, few, 16, &n)))
        return -1;
    /* The plugins before the first one with a handler (the builtins
     * that do not take this topic) would each answer 0: start there. */
    struct jt_plugin *first = first_handler (rt, topic, NULL);
    int start = 0;
    while (start < n && v[start] != first)
        start++;
    stack_push (job);
    jt_hold_all (rt);
    for (int i = start; i < n; i++) {
        int rc;
        if (!is_loaded (rt, v[i])) /* removed by an earlier callback */
            continue;
        if (v[i] == skip) {
            total++;
            continue;
        }
        bool counted = rt->in_pass && !strcmp (topic, PASS_TOPIC);
        if (counted && pass_skips (v[i])) {
            /* failed too often in this pass: as if it failed again, so
             * the job keeps the priority it has */
            total = -1;
            break;
        }
        rc = jt_call (v[i], topic, args);
        if (job->pending_updates) {
            args_jobspec_drop (args, job);
            job->update_origin = v[i];
            flush_updates (job);
            job->update_origin = NULL;
        }
        if (rc < 0) {
            runtime_log (LOG_DEBUG,
                         "jobtap: %s: %s: rc=-1",
                         v[i]->list_name,
                         topic);
            if (counted)
                pass_failed (v[i], job->id);
            total = -1;
            break;
        }
        total += rc;
    }
    jt_release_all (rt);
    stack_pop (rt);
    if (v != few)
        free (v);
    return total;
}

int stack_call (struct job *job,
                       const char *topic,
                       flux_plugin_arg_t *args)
{
    return stack_call_skip (job, topic, args, NULL);
}

int raise_exception_internal (struct job *job,
                                     const char *type,
                                     int severity,
                                     const char *note)
{
    json_t *ctx = json_pack ("{s:s s:i s:s s:I}",
                             "type", type,
                             "severity", severity,
                             "note", note,
                             "userid", (json_int_t)getuid ());
    int rc;
    if (!ctx) {
        errno = ENOMEM;
        return -1;
    }
    /* Without Flux's eventlog tools the log is where admins see them. */
    runtime_log (severity == 0 ? LOG_ERR : LOG_WARNING,
                 "jobtap: job %ju: exception type=%s severity=%d: %s",
                 (uintmax_t)job->id, type, severity, note);
    rc = event_post_known (job, EV_EXCEPTION, ctx);
    json_decref (ctx);
    return rc;
}

int jobtap_call (struct job *job, const char *topic, json_t *in)
{
    struct runtime *rt = job->rt;

    if (!stack_handles (rt, topic))
        return 0;
    return jobtap_call_handled (job, topic, in, NULL);
}

/* Stack call plus reading OUT priority, annotations and R, for a topic
 * some plugin handles; 'builtin' from default_priority, or NULL. */
int jobtap_call_handled (struct job *job, const char *topic,
                                json_t *in, struct jt_plugin *builtin)
{
    flux_plugin_arg_t *args;
    json_int_t priority = -1;
    json_t *annotations = NULL;
    json_t *R = NULL;
    int rc;

    if (!(args = priority_args (job, in, builtin)))
        return -1;
    rc = stack_call_skip (job, topic, args, builtin);
    if (rc == 0) {
        job_args_done (job->rt, args);
        return 0;
    }
    if (rc < 0)
        runtime_log (LOG_DEBUG,
                     "jobtap: job %ju: %s: callback failed",
                     (uintmax_t)job->id,
                     topic);
    if (flux_plugin_arg_unpack (args,
                                FLUX_PLUGIN_ARG_OUT,
                                "{s?I s?o s?o}",
                                "priority", &priority,
                                "annotations", &annotations,
                                "R", &R) < 0) {
        char note[512];
        snprintf (note,
                  sizeof (note),
                  "arg_unpack: %s%s",
                  flux_plugin_arg_strerror (args),
                  job->state == FLUX_JOB_STATE_PRIORITY
                      ? " (job may be stuck in PRIORITY state)"
                      : "");
        raise_exception_internal (job, topic, 4, note);
        job_args_done (job->rt, args);
        return -1;
    }
    if (priority_applies (job, topic, priority))
        reprioritize_one (job, priority);
    if (annotations) {
        if (!json_is_object (annotations))
            runtime_log (LOG_ERR,
                         "jobtap: job %ju: %s: annotations must be an object",
                         (uintmax_t)job->id,
                         topic);
        else if (strcmp (topic, "job.new") != 0)
            annotations_post (job, annotations);
        else
            job_annotations_merge (job, annotations);
    }
    if (R) {
        if (strcmp (topic, "job.state.sched") != 0) {
            runtime_log (LOG_ERR,
                         "jobtap: job %ju: %s: R may only be set in SCHED "
                         "state",
                         (uintmax_t)job->id,
                         topic);
            rc = -1;
        }
        else if (job->R) {
            runtime_log (LOG_ERR,
                         "jobtap: job %ju: R already set",
                         (uintmax_t)job->id);
            rc = -1;
        }
        else
            job->R = json_incref (R);
    }
    job_args_done (job->rt, args);
    return rc;
}

void annotations_post (struct job *job, json_t *annotations)
{
    json_t *ctx = json_pack ("{s:O}", "annotations", annotations);

    job_annotations_merge (job, annotations);
    event_post_known (job, EV_ANNOTATIONS, ctx);
    json_decref (ctx);
}

void reprioritize_one (struct job *job, int64_t priority)
{
    if (job->state != FLUX_JOB_STATE_PRIORITY
        && job->state != FLUX_JOB_STATE_SCHED)
        return;
    if (job->urgency == FLUX_JOB_URGENCY_HOLD)
        priority = FLUX_JOB_PRIORITY_MIN;
    else if (job->urgency == FLUX_JOB_URGENCY_EXPEDITE)
        priority = FLUX_JOB_PRIORITY_MAX;
    if (job->state == FLUX_JOB_STATE_SCHED && priority == job->priority)
        return;
    event_post_numbers (job, EV_PRIORITY, NUMBERS_PRIORITY, priority, 0, 0);
}
