/* The job state machine (RFC 21): which events a job knows, and what
 * applying one does to the job's own data and state.  No effects beyond
 * the job: callbacks and the host's actions on a change are event.c's.
 * Called by event.c (and api/host modules for names and posted events);
 * calls job.c, spec.c and log.c. */
#ifndef JOBTAP_STATE_H
#define JOBTAP_STATE_H

#include <stdbool.h>

struct job;
struct event;

/* Event names whose posting a job records in a bit (posted_other holds
 * the rest), and whose effects the state machine switches on. */
enum {
    EV_SUBMIT, EV_VALIDATE, EV_INVALIDATE, EV_DEPEND, EV_PRIORITY,
    EV_URGENCY, EV_ALLOC, EV_FREE, EV_START, EV_RELEASE, EV_FINISH,
    EV_CLEAN, EV_EXCEPTION, EV_DEPENDENCY_ADD, EV_DEPENDENCY_REMOVE,
    EV_JOBSPEC_UPDATE, EV_SET_FLAGS, EV_PROLOG_START, EV_PROLOG_FINISH,
    EV_EPILOG_START, EV_EPILOG_FINISH, EV_ANNOTATIONS, EV_MEMO,
    EV_FLUX_RESTART, EV_RESOURCE_UPDATE, EV_DEBUG,
    EV_NKNOWN
};

/* The name of a known event kind. */
const char *event_name (int kind);
/* The EV_* of a name, or -1. */
int known_event (const char *name);
/* "job.state.<state>" without formatting. */
const char *state_topic (int state);
/* Whether an event of this name was ever posted to the job. */
bool posted_test (struct job *job, const char *name);

/* Apply ev to the job's data and state (state first: later callbacks see
 * the new state, as in Flux), record it as posted and in the job's
 * eventlog.  -1 with errno if the job cannot take it (nothing changed). */
int event_job_update (struct job *job, struct event *ev);

#endif
