/* Posting events to jobs, and everything an applied event sets off: the
 * host told (hold, release, priority, cancel, event and jobspec hooks),
 * callbacks to subscribers and to the stack, and the events that follow.
 * Also the stack calls themselves, since a plugin's jobspec updates are
 * posted between one plugin and the next.  An event posted while the
 * job's events are being applied waits in its queue, so callbacks never
 * re-enter the state machine for the same job.
 * Called by priority.c and the modules above it; calls state.c,
 * dispatch.c, job.c, spec.c, jtplugin.c and log.c. */
#ifndef JOBTAP_EVENT_H
#define JOBTAP_EVENT_H

#include <stdint.h>
#include <jansson.h>
#include <flux/core.h>

struct job;
struct jt_plugin;

/* Post event 'kind' (EV_*) or 'name' with 'context' (borrowed, may be
 * NULL): applied now, or after the event being applied whose callbacks
 * posted it. */
int event_post_known (struct job *job, int kind, json_t *context);
int event_post (struct job *job, const char *name, json_t *context);
/* Post the submit event, its context {userid, urgency[, flags]} made
 * only if read (flags -1: none). */
int event_post_submit (struct job *job,
                       uint32_t userid,
                       int urgency,
                       int flags);
/* Post an event the scheduler reports (no host action is asked back). */
int event_post_host (struct job *job, const char *name, json_t *context);
/* Post an exception, logged (admins have no eventlog tools here). */
int raise_exception_internal (struct job *job,
                              const char *type,
                              int severity,
                              const char *note);
/* Post a priority event if the job is in PRIORITY or SCHED and the
 * priority (urgency's hold and expedite applied) changes. */
void reprioritize_one (struct job *job, int64_t priority);
/* Merge annotations (borrowed) into the job's and post an annotations
 * event with them. */
void annotations_post (struct job *job, json_t *annotations);
/* Tell the host what it must do now that the job's events settled:
 * hold, release, the priority it reports. */
void job_sync_host (struct job *job);

/* Call 'topic' on every plugin in load order with one shared args
 * object, counting 'skip' (may be NULL) as handled without calling it.
 * Returns how many plugins handled it, or -1 at the first failure. */
int stack_call_skip (struct job *job,
                     const char *topic,
                     flux_plugin_arg_t *args,
                     struct jt_plugin *skip);
int stack_call (struct job *job, const char *topic, flux_plugin_arg_t *args);
/* A stack call whose result nobody reads. */
void stack_notify (struct job *job, const char *topic);
/* A stack call (if any plugin handles 'topic') whose OUT priority,
 * annotations and R are applied to the job; 'in' extra IN fields. */
int jobtap_call (struct job *job, const char *topic, json_t *in);
/* The same for a topic known handled; 'builtin' from default_priority. */
int jobtap_call_handled (struct job *job,
                         const char *topic,
                         json_t *in,
                         struct jt_plugin *builtin);

#endif
