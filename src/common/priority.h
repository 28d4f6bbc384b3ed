/* Asking the plugins for priorities: job.priority.get for one job, and
 * for every job in PRIORITY or SCHED (a plugin's or the host's
 * reprioritize-all, a newly loaded plugin).  Setting a priority is an
 * event (event.h reprioritize_one).  Called by the API, host, plugins
 * and submit modules; calls event.c, dispatch.c and job.c. */
#ifndef JOBTAP_PRIORITY_H
#define JOBTAP_PRIORITY_H

struct job;
struct runtime;

void get_priority (struct job *job);
/* Holds the runtime lock throughout. */
int reprioritize_all (struct runtime *rt);
/* Lets other threads take the runtime lock every few jobs: the host's
 * periodic pass only (priority.c). */
int reprioritize_all_yielding (struct runtime *rt);

#endif
