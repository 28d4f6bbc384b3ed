/* Asking the plugins for priorities: job.priority.get for one job, for
 * every job in PRIORITY or SCHED (a plugin's reprioritize-all, a newly
 * loaded plugin), and for every job in SCHED (the host's periodic pass:
 * as in Flux, a job waiting in PRIORITY leaves it only when a plugin
 * gives it a priority).  Setting a priority is an event (event.h
 * reprioritize_one).  Called by the API, host, plugins, submit and
 * restore modules; calls event.c, dispatch.c and job.c. */
#ifndef JOBTAP_PRIORITY_H
#define JOBTAP_PRIORITY_H

#include <stdbool.h>

struct job;
struct runtime;

void get_priority (struct job *job);
/* Every job in PRIORITY or SCHED. Holds the runtime lock throughout. */
int reprioritize_all (struct runtime *rt);
/* Every job in SCHED: the host's pass; returns how many were asked, or
 * -1. yielding: let other threads take the runtime lock every few jobs,
 * for the host's own periodic pass only (priority.c). */
int reprioritize_scheduled (struct runtime *rt, bool yielding);

#endif
