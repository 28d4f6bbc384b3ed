/* The job state machine (state.h). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <flux/jobtap.h>

#include "host.h"
#include "job.h"
#include "log.h"
#include "spec.h"
#include "state.h"

/* Keep the first failing prolog's status and say what failed, for the
 * host (perilog.c). Rare: out of line, so the common events stay lean. */
static __attribute__ ((noinline)) void prolog_finished (struct job *job,
                                                         json_t *context)
{
    int status = 0;
    const char *d = NULL;
    char note[512];

    (void)json_unpack (context, "{s?i s?s}", "status", &status,
                       "description", &d);
    if (status == 0 || job->prolog_status != 0)
        return;
    job->prolog_status = status;
    snprintf (note, sizeof (note), "prolog %s failed: status %d",
              d ? d : "?", status);
    free (job->prolog_note);
    job->prolog_note = strdup (note);
}

static const char *const known_events[EV_NKNOWN] = {
    [EV_SUBMIT] = "submit",
    [EV_VALIDATE] = "validate",
    [EV_INVALIDATE] = "invalidate",
    [EV_DEPEND] = "depend",
    [EV_PRIORITY] = "priority",
    [EV_URGENCY] = "urgency",
    [EV_ALLOC] = "alloc",
    [EV_FREE] = "free",
    [EV_START] = "start",
    [EV_RELEASE] = "release",
    [EV_FINISH] = "finish",
    [EV_CLEAN] = "clean",
    [EV_EXCEPTION] = "exception",
    [EV_DEPENDENCY_ADD] = "dependency-add",
    [EV_DEPENDENCY_REMOVE] = "dependency-remove",
    [EV_JOBSPEC_UPDATE] = "jobspec-update",
    [EV_SET_FLAGS] = "set-flags",
    [EV_PROLOG_START] = "prolog-start",
    [EV_PROLOG_FINISH] = "prolog-finish",
    [EV_EPILOG_START] = "epilog-start",
    [EV_EPILOG_FINISH] = "epilog-finish",
    [EV_ANNOTATIONS] = "annotations",
    [EV_MEMO] = "memo",
    [EV_FLUX_RESTART] = "flux-restart",
    [EV_RESOURCE_UPDATE] = "resource-update",
    [EV_DEBUG] = "debug",
};

_Static_assert (EV_NKNOWN <= 32, "job->posted has a bit per known event");

const char *event_name (int kind)
{
    return known_events[kind];
}

/* "job.state.<state>" without formatting: it is looked up on every
 * state change of every job. */
const char *state_topic (int state)
{
    switch (state) {
    case FLUX_JOB_STATE_NEW:
        return "job.state.new";
    case FLUX_JOB_STATE_DEPEND:
        return "job.state.depend";
    case FLUX_JOB_STATE_PRIORITY:
        return "job.state.priority";
    case FLUX_JOB_STATE_SCHED:
        return "job.state.sched";
    case FLUX_JOB_STATE_RUN:
        return "job.state.run";
    case FLUX_JOB_STATE_CLEANUP:
        return "job.state.cleanup";
    case FLUX_JOB_STATE_INACTIVE:
        return "job.state.inactive";
    }
    return "job.state.(unknown)";
}

int known_event (const char *name)
{
    for (int i = 0; i < EV_NKNOWN; i++) {
        if (!strcmp (name, known_events[i]))
            return i;
    }
    return -1;
}

static void posted_set (struct job *job, const struct event *ev)
{
    if (ev->kind >= 0)
        job->posted |= 1u << ev->kind;
    else if (lazy_object (&job->posted_other))
        json_object_set_new (job->posted_other, ev->name, json_true ());
}

bool posted_test (struct job *job, const char *name)
{
    int i = known_event (name);
    if (i >= 0)
        return job->posted & (1u << i);
    return json_object_get (job->posted_other, name) != NULL;
}


/* Apply one event: update the job, then fire job.event.* to subscribers,
 * job.update for jobspec updates, and job.state.<s> on a state change. */

int event_job_update (struct job *job, struct event *ev)
{
    json_t *context = ev->context;
    int prev_state = job->state;
    int new_state = prev_state;
    json_t *entry;

    switch (ev->kind) {
    case EV_EXCEPTION: {
        int severity = 0;
        json_unpack (context, "{s?i}", "severity", &severity);
        if (severity == 0) {
            if (prev_state == FLUX_JOB_STATE_NEW) {
                runtime_log (LOG_ERR,
                             "job %ju: fatal job exception was posted in "
                             "NEW state",
                             (uintmax_t)job->id);
                errno = EINVAL;
                return -1;
            }
            if (prev_state != FLUX_JOB_STATE_CLEANUP
                && prev_state != FLUX_JOB_STATE_INACTIVE) {
                new_state = FLUX_JOB_STATE_CLEANUP;
                json_decref (job->end_event);
                job->end_event = json_incref (event_entry_of (ev));
            }
        }
        break;
    }
    case EV_DEPENDENCY_REMOVE: {
        const char *d = json_string_value (json_object_get (context,
                                                            "description"));
        if (!d || !json_object_get (job->deps, d)) {
            errno = ENOENT;
            return -1;
        }
        json_object_del (job->deps, d);
        break;
    }
    case EV_DEPENDENCY_ADD: {
        const char *d = json_string_value (json_object_get (context,
                                                            "description"));
        /* grudge set: a removed description cannot come back */
        if (d && !json_object_get (job->grudge, d)
            && lazy_object (&job->deps) && lazy_object (&job->grudge)) {
            json_object_set_new (job->deps, d, json_true ());
            json_object_set_new (job->grudge, d, json_true ());
        }
        break;
    }
    case EV_VALIDATE:
        if (prev_state == FLUX_JOB_STATE_NEW)
            new_state = FLUX_JOB_STATE_DEPEND;
        break;
    case EV_DEPEND:
        if (prev_state == FLUX_JOB_STATE_DEPEND)
            new_state = FLUX_JOB_STATE_PRIORITY;
        break;
    case EV_PRIORITY: {
        json_t *p = json_object_get (context, "priority");
        job->priority = ev->numbers_of == NUMBERS_PRIORITY ? ev->numbers[0]
                        : json_is_integer (p)        ? json_integer_value (p)
                                                     : 0;
        if (prev_state == FLUX_JOB_STATE_PRIORITY)
            new_state = FLUX_JOB_STATE_SCHED;
        break;
    }
    case EV_URGENCY: {
        int urgency = job->urgency;
        json_unpack (context, "{s:i}", "urgency", &urgency);
        job->urgency = urgency;
        if (prev_state == FLUX_JOB_STATE_SCHED)
            new_state = FLUX_JOB_STATE_PRIORITY;
        break;
    }
    case EV_JOBSPEC_UPDATE:
        if (spec_apply_updates (job, context) < 0)
            return -1;
        if (!job->all_updates && json_is_object (context))
            /* the first: shared, and copied when a next one is added */
            job->all_updates = json_incref (context);
        else {
            jobtap_host_json_pool_begin ();
            if (updates_own (job))
                json_object_update (job->all_updates, context);
            jobtap_host_json_pool_end ();
        }
        if (prev_state == FLUX_JOB_STATE_SCHED)
            new_state = FLUX_JOB_STATE_PRIORITY;
        break;
    case EV_FLUX_RESTART:
        if (prev_state == FLUX_JOB_STATE_SCHED)
            new_state = FLUX_JOB_STATE_PRIORITY;
        break;
    case EV_ALLOC:
        if (prev_state == FLUX_JOB_STATE_SCHED)
            new_state = FLUX_JOB_STATE_RUN;
        break;
    case EV_FINISH:
        if (prev_state == FLUX_JOB_STATE_RUN) {
            new_state = FLUX_JOB_STATE_CLEANUP;
            json_decref (job->end_event);
            job->end_event = json_incref (event_entry_of (ev));
        }
        break;
    case EV_CLEAN:
        if (prev_state == FLUX_JOB_STATE_CLEANUP)
            new_state = FLUX_JOB_STATE_INACTIVE;
        break;
    case EV_SET_FLAGS: {
        size_t i;
        json_t *f;
        json_array_foreach (json_object_get (context, "flags"), i, f) {
            if (lazy_array (&job->flags))
                json_array_append (job->flags, f);
        }
        break;
    }
    case EV_PROLOG_START:
    case EV_EPILOG_START:
        job->perilog_active++;
        break;
    case EV_PROLOG_FINISH:
        prolog_finished (job, context);
        /* fall through */
    case EV_EPILOG_FINISH:
        if (job->perilog_active > 0)
            job->perilog_active--;
        break;
    }

    /* state first: job.event.* callbacks see the new state, as in Flux */
    job->state = new_state;
    if (job->eventlog && (entry = event_entry_of (ev)))
        json_array_append (job->eventlog, entry);
    posted_set (job, ev);
    return 0;
}
