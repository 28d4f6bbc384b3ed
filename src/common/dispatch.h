/* Callback plumbing: the current-job stack (which job a flux_jobtap_*
 * call made from a callback is about), the args a callback gets, and the
 * topic cache (which plugins handle a topic).  Making the calls, which
 * may post events, is event.c's.  Called by event.c and the modules above
 * it; calls job.c, spec.c, aux.c, jtplugin.c and plugin.c. */
#ifndef JOBTAP_DISPATCH_H
#define JOBTAP_DISPATCH_H

#include <stdbool.h>
#include <jansson.h>
#include <flux/core.h>

struct job;
struct runtime;
struct jt_plugin;

/* Which plugins handle a topic, remembered per topic: every state change
 * of every job asks, and the answer changes only with
 * plugin_handlers_generation ().  Open addressing over TOPIC_PROBE slots from a
 * hash of the topic; an answer of an older generation is free. */
#define TOPIC_CACHE 128
#define TOPIC_PROBE 4
#define TOPIC_CACHE_LEN 64
struct topic_answer {
    unsigned gen; /* plugin_handlers_generation () when cached; 0: empty */
    unsigned len; /* of topic */
    char topic[TOPIC_CACHE_LEN];
    struct jt_plugin *first;
    int count;
};

/* The answer a topic string at this address last had: most topics are
 * the runtime's constants, so a lookup is one string compare.  Addresses
 * are hashed and probed, so that where the constants happen to lie
 * (a build's layout) does not make two of them evict each other. */
#define TOPIC_POINTERS 128
#define TOPIC_POINTER_PROBE 4
struct topic_pointer {
    const char *topic;
    struct topic_answer *answer;
};

/* The runtime's dispatch state (rt->dispatch), written by dispatch.c only. */
struct dispatch {
    struct job **stack;          /* the current-job stack, with a reference */
    int stack_len, stack_cap;
    struct topic_answer topic_cache[TOPIC_CACHE];
    struct topic_pointer by_pointer[TOPIC_POINTERS];
    struct state_answer {  /* state_default_priority's, by state */
        unsigned gen;
        struct jt_plugin *builtin;
        int handlers;
    } by_state[8];
    unsigned priority_gen; /* plugin_handlers_generation () of: */
    bool priority_from_plugins; /* plugins_give_priority's answer */
    flux_plugin_arg_t *spare_args; /* emptied, for the next callback */
    struct args_job *spare_args_job; /* the same for the args' job part */
};

/* Let go of the stack's memory (the runtime's end): empty again.  A
 * zeroed struct dispatch is an empty one. */
void dispatch_clear (struct runtime *rt);

int stack_push (struct job *job);
void stack_pop (struct runtime *rt);
/* A plugin is going: its aux on the inactive jobs of the stack (out of
 * the table, still referenced there) is destroyed now, while its code is
 * loaded (job_aux_plugin_gone does the table's). */
void dispatch_stack_aux_gone (struct runtime *rt, struct jt_plugin *jt);
struct job *current_job (struct runtime *rt);
/* The job a plugin means by id: the current job (also for
 * FLUX_JOBTAP_CURRENT_JOB), else the table's; NULL with errno set.
 * lookup_active_jobid: not an inactive one. */
struct job *lookup_jobid (flux_plugin_t *p, flux_jobid_t id);
struct job *lookup_active_jobid (flux_plugin_t *p, flux_jobid_t id);

/* A callback's args: IN with the job's fields and those of 'extra' (may
 * be NULL), OUT 'out' (stolen; NULL: empty).  "jobspec" is built only if
 * the plugin reads it. */
flux_plugin_arg_t *job_args_create_out (struct job *job,
                                        json_t *extra,
                                        json_t *out);
flux_plugin_arg_t *job_args_create (struct job *job);
/* Done with args made above (NULL passes): kept emptied for the next
 * callback's when nothing else holds their objects, else destroyed. */
void job_args_done (struct runtime *rt, flux_plugin_arg_t *args);
/* args (taken; NULL passes through) with a "jobspec" IN field built
 * from the job's only when read (holding a reference to the job), or
 * NULL (out of memory: args destroyed). */
flux_plugin_arg_t *args_with_jobspec (flux_plugin_arg_t *args,
                                      struct job *job);
/* After a callback that asked for jobspec updates: the args let go of
 * the jobspec they hold, so the update can change it in place and a later
 * plugin of the stack reads it updated, as in Flux. */
void args_jobspec_drop (flux_plugin_arg_t *args, struct job *job);
/* {key1: v1 (borrowed), key2: n} (key2 may be NULL), or NULL. */
json_t *call_fields (const char *key1, json_t *v1, const char *key2, int n);
/* OUT errmsg of args (borrowed), or NULL. */
const char *out_errmsg (flux_plugin_arg_t *args);

/* The first loaded plugin (load order) with a handler for 'topic', or
 * NULL; with 'count', how many have one. */
struct jt_plugin *first_handler (struct runtime *rt,
                                 const char *topic,
                                 int *count);
/* Whether any loaded plugin has a handler for 'topic'. */
bool stack_handles (struct runtime *rt, const char *topic);
/* The builtin .priority-default when it is the first plugin handling
 * 'topic' (the runtime then gives its answer, priority = urgency,
 * itself), else NULL; *handlers: how many plugins handle it. */
struct jt_plugin *default_priority (struct runtime *rt,
                                    const char *topic,
                                    int *handlers);
/* default_priority of job.state.<state>, 'topic' (state.c's
 * state_topic): every job enters four states, so the answers are kept by
 * state until the plugins' handlers change. */
struct jt_plugin *state_default_priority (struct runtime *rt,
                                          int state,
                                          const char *topic,
                                          int *handlers);
/* Whether a plugin other than the builtin gives priorities
 * (job.state.priority or job.priority.get): asked for every new job, so
 * the answer is kept until the plugins' handlers change. */
bool plugins_give_priority (struct runtime *rt);

#endif
