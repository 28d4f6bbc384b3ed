/* The args of the priority topics (job.priority.get, job.state.priority):
 * built with the builtin .priority-default's answer already in OUT when
 * it is the first handler, reused from one job of a reprioritize pass to
 * the next, and which OUT priorities may be applied.  Called by event.c
 * and priority.c; calls dispatch.c (the args) and log.c. */
#ifndef JOBTAP_PRIORITY_ARGS_H
#define JOBTAP_PRIORITY_ARGS_H

#include <stdbool.h>
#include <jansson.h>
#include <flux/core.h>

struct job;
struct jt_plugin;
struct runtime;

/* Args for a priority topic: OUT already holds the builtin's answer when
 * 'builtin' (from default_priority) is set. */
flux_plugin_arg_t *priority_args (struct job *job,
                                  json_t *in,
                                  struct jt_plugin *builtin);
/* priority_args (job, NULL, builtin) for a job of a pass: the IN and OUT
 * objects of the previous job (rt->pass_in, rt->pass_out) refilled in
 * place when no plugin kept, added or replaced anything in them (a pass
 * over 100k jobs then builds no JSON per job); else built anew. */
flux_plugin_arg_t *pass_priority_args (struct job *job,
                                       struct jt_plugin *builtin);
/* At the end of the outermost pass. */
void pass_args_free (struct runtime *rt);
/* {"priority": n}, or NULL (out of memory). */
json_t *priority_object (json_int_t priority);

/* Whether a plugin's OUT priority for 'topic' may be applied: -1 (none
 * set) and JOBTAP_PRIORITY_UNAVAIL (flux_jobtap_priority_unavail) are "no
 * answer" and silently not; any other negative value is out of range,
 * logged and not applied. */
bool priority_applies (struct job *job, const char *topic,
                       json_int_t priority);

#endif
