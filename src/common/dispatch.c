/* Callback plumbing: the current-job stack, callback args and the topic
 * cache (dispatch.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <flux/core.h>
#include <flux/jobtap.h>

#include "aux.h"
#include "dispatch.h"
#include "host.h"
#include "job.h"
#include "json_util.h"
#include "jtplugin.h"
#include "log.h"
#include "plugin_arg.h"
#include "plugin_container.h"
#include "runtime.h"
#include "spec.h"

/* --- current job stack ------------------------------------------------- */

int stack_push (struct job *job)
{
    struct dispatch *d = job->rt->dispatch;

    if (d->stack_len == d->stack_cap) {
        int cap = d->stack_cap ? d->stack_cap * 2 : 16;
        struct job **s = realloc (d->stack, cap * sizeof (*s));
        if (!s)
            return -1;
        d->stack = s;
        d->stack_cap = cap;
    }
    d->stack[d->stack_len++] = job_incref (job);
    return 0;
}

void stack_pop (struct runtime *rt)
{
    struct dispatch *d = rt->dispatch;

    if (d->stack_len > 0)
        job_decref (d->stack[--d->stack_len]);
}

struct job *current_job (struct runtime *rt)
{
    struct dispatch *d = rt->dispatch;

    return d->stack_len > 0 ? d->stack[d->stack_len - 1] : NULL;
}

/* Generic lookup: current job, then the table. */
struct job *lookup_jobid (flux_plugin_t *p, flux_jobid_t id)
{
    struct runtime *rt = jt_runtime (p);
    struct job *cur;
    struct job *job;

    if (!rt) {
        errno = EINVAL;
        return NULL;
    }
    cur = current_job (rt);
    if (id == FLUX_JOBTAP_CURRENT_JOB || (cur && cur->id == id))
        return cur; /* NULL with errno untouched if there is none */
    if (!(job = table_find (rt, id)))
        errno = ENOENT;
    return job;
}

struct job *lookup_active_jobid (flux_plugin_t *p, flux_jobid_t id)
{
    struct job *job = lookup_jobid (p, id);
    if (!job || job->state == FLUX_JOB_STATE_INACTIVE) {
        errno = ENOENT;
        return NULL;
    }
    return job;
}

/* --- args -------------------------------------------------------------- */

/* What a callback's args tell of its job: its fields as they were when
 * the args were made, put in IN or told when a plugin reads them, and
 * the job itself, for its jobspec. */
struct args_job {
    struct job *job;
    json_int_t id, priority;
    uint32_t userid;
    int urgency, state;
    double t_submit;
    json_t *R, *end_event;
};

enum { F_ID, F_USERID, F_URGENCY, F_STATE, F_PRIORITY, F_T_SUBMIT, F_R,
       F_END_EVENT, NFIELDS };
static const char *const field_names[NFIELDS] = {
    "id", "userid", "urgency", "state", "priority", "t_submit", "R",
    "end_event",
};

/* Field i of the job: a new reference, or NULL (unset, or out of
 * memory). */
static json_t *args_job_field (const struct args_job *a, int i)
{
    switch (i) {
    case F_ID:
        return json_integer (a->id);
    case F_USERID:
        return json_integer (a->userid);
    case F_URGENCY:
        return json_integer (a->urgency);
    case F_STATE:
        return json_integer (a->state);
    case F_PRIORITY:
        return json_integer (a->priority);
    case F_T_SUBMIT:
        return json_real (a->t_submit);
    case F_R:
        return json_incref (a->R);
    case F_END_EVENT:
        return json_incref (a->end_event);
    }
    return NULL;
}

static void args_job_fill (void *arg, json_t *in)
{
    const struct args_job *a = arg;

    for (int i = 0; i < NFIELDS; i++) {
        json_t *v;
        if (!json_object_get (in, field_names[i])
            && (v = args_job_field (a, i)))
            obj_set (in, field_names[i], v);
    }
}

static int args_job_find (void *arg,
                          const char *const *path,
                          int depth,
                          json_t **value,
                          struct jobtap_spec_scalar *scalar)
{
    const struct args_job *a = arg;

    /* a jobspec updated since it was given is read from its tree: the
     * next plugins of a stack read it too */
    if (!strcmp (path[0], "jobspec"))
        return spec_updated (a->job) ? JOBTAP_SPEC_UNKNOWN
                                     : spec_find (a->job, path + 1, depth - 1,
                                                  value, scalar);
    for (int i = 0; i < NFIELDS; i++) {
        if (strcmp (path[0], field_names[i]))
            continue;
        if ((i == F_R && a->R) || (i == F_END_EVENT && a->end_event))
            return JOBTAP_SPEC_UNKNOWN; /* objects: read from IN */
        if (depth > 1 || !(*value = args_job_field (a, i)))
            return i == F_R || i == F_END_EVENT ? JOBTAP_SPEC_ABSENT
                                                : JOBTAP_SPEC_UNKNOWN;
        return JOBTAP_SPEC_VALUE;
    }
    return JOBTAP_SPEC_ABSENT;
}

static json_t *args_jobspec (void *arg)
{
    const struct args_job *a = arg;
    return json_incref (job_jobspec (a->job));
}

static void args_job_destroy (void *arg)
{
    struct args_job *a = arg;
    struct dispatch *d = a->job->rt->dispatch;

    job_decref (a->job);
    json_decref (a->R);
    json_decref (a->end_event);
    if (!d->spare_args_job) /* for the next args */
        d->spare_args_job = a;
    else
        free (a);
}

static const struct plugin_arg_lazy job_lazy = {
    .key = "jobspec",
    .get = args_jobspec,
    .fill = args_job_fill,
    .find = args_job_find,
    .destroy = args_job_destroy,
};

/* The job's lazy part of args; -1 if out of memory (args unchanged). */
static int args_lazy_set (flux_plugin_arg_t *args, struct job *job)
{
    struct dispatch *d = job->rt->dispatch;
    struct args_job *a = d->spare_args_job;

    if (a)
        d->spare_args_job = NULL;
    else if (!(a = malloc (sizeof (*a))))
        return -1;
    *a = (struct args_job){
        .job = job_incref (job),
        .id = (json_int_t)job->id,
        .priority = job->priority,
        .userid = job->userid,
        .urgency = job->urgency,
        .state = job->state,
        .t_submit = job->t_submit,
        .R = json_incref (job->R),
        .end_event = json_incref (job->end_event),
    };
    if (plugin_arg_set_lazy (args, &job_lazy, a) < 0) {
        args_job_destroy (a);
        return -1;
    }
    return 0;
}

flux_plugin_arg_t *args_with_jobspec (flux_plugin_arg_t *args,
                                      struct job *job)
{
    if (args && args_lazy_set (args, job) < 0) {
        flux_plugin_arg_destroy (args);
        return NULL;
    }
    return args;
}

/* A callback's args: IN with the job's fields and those of 'extra' (may
 * be NULL; its members win), OUT 'out' (stolen; NULL: empty).  Only
 * extra is built now: the job's fields when a plugin needs IN as an
 * object (reading a few is told without it), "jobspec" only if the plugin
 * reads it.  This runs several times per job. */
flux_plugin_arg_t *job_args_create_out (struct job *job,
                                        json_t *extra,
                                        json_t *out)
{
    struct dispatch *d = job->rt->dispatch;
    /* a callback's args used again (their objects emptied), else new */
    flux_plugin_arg_t *args = d->spare_args;
    bool made = !args;
    int rc = 0;

    d->spare_args = NULL;
    if (made || extra) {
        jobtap_host_json_pool_begin ();
        if (made)
            args = plugin_arg_create_with (json_object (),
                                           out ? NULL : json_object ());
        if (args && extra)
            rc = json_object_update (plugin_arg_in (args), extra);
        jobtap_host_json_pool_end ();
    }
    if (!args || !plugin_arg_in (args) || rc < 0) {
        flux_plugin_arg_destroy (args);
        json_decref (out);
        return NULL;
    }
    if (out)
        plugin_arg_set_out (args, out);
    return args_with_jobspec (args, job);
}

/* After a callback that asked for jobspec updates: the args let go of
 * the jobspec they hold, so the update can change it in place when
 * nobody else holds it, and a later plugin of the stack reads it
 * updated, as in Flux (where the args hold the jobspec that updates
 * change). */
void args_jobspec_drop (flux_plugin_arg_t *args, struct job *job)
{
    if (job->jobspec && plugin_arg_drop (args, "jobspec", job->jobspec))
        (void)args_lazy_set (args, job); /* out of memory: no jobspec */
}

flux_plugin_arg_t *job_args_create (struct job *job)
{
    return job_args_create_out (job, NULL, NULL);
}

void job_args_done (struct runtime *rt, flux_plugin_arg_t *args)
{
    struct dispatch *d = rt->dispatch;

    if (args && !d->spare_args && plugin_arg_empty (args))
        d->spare_args = args;
    else
        flux_plugin_arg_destroy (args);
}

/* {key1: v1 (borrowed), key2: n}, from the pool: the extra IN fields of
 * the callbacks made on every state change and update. */
json_t *call_fields (const char *key1, json_t *v1, const char *key2, int n)
{
    json_t *o;

    jobtap_host_json_pool_begin ();
    if ((o = json_object ())
        && (obj_set (o, key1, json_incref (v1)) < 0
            || (key2 && obj_set (o, key2, json_integer (n)) < 0))) {
        json_decref (o);
        o = NULL;
    }
    jobtap_host_json_pool_end ();
    return o;
}

/* The slot a topic of n bytes hashes to: eight bytes a step, as every
 * state change of every job looks a topic up (bytes past n are not
 * read). */
static uint32_t topic_hash (const char *topic, size_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15u ^ n, w;
    size_t i = 0;

    for (; i + 8 <= n; i += 8) {
        memcpy (&w, topic + i, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdu;
        h ^= h >> 32;
    }
    for (w = 0; i < n; i++)
        w = (w << 8) | (unsigned char)topic[i];
    h = (h ^ w) * 0xc4ceb9fe1a85ec53u;
    return (uint32_t)(h ^ (h >> 29));
}

/* The pointer slot of address 'topic' after its first, 'tp', holds
 * another: the one holding it among the probed, else an empty one, else
 * the first (evicted). */
static __attribute__ ((noinline)) struct topic_pointer *
pointer_slot_probe (struct dispatch *d,
                    const char *topic,
                    struct topic_pointer *tp)
{
    unsigned first = (unsigned)(tp - d->by_pointer);
    struct topic_pointer *empty = NULL;

    for (unsigned i = 1; i < TOPIC_POINTER_PROBE && tp->topic; i++) {
        struct topic_pointer *p = &d->by_pointer[(first + i) % TOPIC_POINTERS];
        if (p->topic == topic)
            return p;
        if (!p->topic && !empty)
            empty = p;
    }
    return tp->topic && empty ? empty : tp;
}

/* The pointer slot of address 'topic' (pointer_slot_probe past the
 * first). */
static inline struct topic_pointer *pointer_slot (struct dispatch *d,
                                                  const char *topic)
{
    uint64_t h = (uint64_t)(uintptr_t)topic * 0x9e3779b97f4a7c15u;
    _Static_assert (TOPIC_POINTERS == 128, "the hash takes 7 bits");
    struct topic_pointer *tp = &d->by_pointer[h >> 57];

    return tp->topic == topic ? tp : pointer_slot_probe (d, topic, tp);
}

/* The topic's cached answer (*hit), or a slot to cache it in, or NULL
 * for topics too long to cache. */
static struct topic_answer *topic_slot (struct runtime *rt,
                                        const char *topic,
                                        bool *hit)
{
    struct topic_answer *cache = rt->dispatch->topic_cache;
    unsigned gen = plugin_handlers_generation ();
    struct topic_pointer *tp = pointer_slot (rt->dispatch, topic);
    struct topic_answer *free_slot = NULL;
    size_t n;
    uint32_t h;

    /* the address's last answer, if its slot still holds that text (the
     * string there may have changed, or the slot been taken since) */
    if (tp->topic == topic && tp->answer->gen == gen
        && !strcmp (tp->answer->topic, topic)) {
        *hit = true;
        return tp->answer;
    }
    *hit = false;
    if ((n = strlen (topic)) >= TOPIC_CACHE_LEN)
        return NULL;
    h = topic_hash (topic, n);
    for (int i = 0; i < TOPIC_PROBE; i++) {
        struct topic_answer *a = &cache[(h + i) % TOPIC_CACHE];
        if (a->gen != gen) {
            if (!free_slot)
                free_slot = a;
        }
        else if (a->len == n && !memcmp (a->topic, topic, n)) {
            *hit = true;
            *tp = (struct topic_pointer){topic, a};
            return a;
        }
    }
    /* all probed slots current and taken: evict one, by hash bits */
    return free_slot ? free_slot
                     : &cache[(h + (h >> 7) % TOPIC_PROBE) % TOPIC_CACHE];
}

/* The first loaded plugin (load order) with a handler for 'topic', or
 * NULL; with 'count', how many have one. */
struct jt_plugin *first_handler (struct runtime *rt,
                                 const char *topic,
                                 int *count)
{
    bool hit;
    struct topic_answer *a = topic_slot (rt, topic, &hit);
    struct jt_plugin *first = NULL;
    int n = 0;

    if (hit) {
        if (count)
            *count = a->count;
        return a->first;
    }
    for (struct jt_plugin *jt = rt->plugins; jt; jt = jt->next) {
        if (plugin_has_handler (jt->p, topic)) {
            if (!first)
                first = jt;
            n++;
        }
    }
    if (a) {
        a->gen = plugin_handlers_generation ();
        a->len = (unsigned)strlen (topic);
        memcpy (a->topic, topic, a->len + 1);
        *pointer_slot (rt->dispatch, topic) = (struct topic_pointer){topic, a};
        a->first = first;
        a->count = n;
    }
    if (count)
        *count = n;
    return first;
}

/* Whether any loaded plugin has a handler for 'topic': callers skip
 * building args for the many topics no plugin listens to. */
bool stack_handles (struct runtime *rt, const char *topic)
{
    return first_handler (rt, topic, NULL) != NULL;
}

/* The builtin .priority-default always answers priority = urgency.  When
 * it is loaded and the first plugin with a handler for 'topic', it is
 * returned and the runtime gives that answer itself: OUT priority is set
 * before the stack call, which skips the builtin.  *handlers: how many
 * plugins handle the topic; 1 with the builtin returned means no other
 * does, so no args are needed at all (that was half of job.new's cost,
 * and most of a reprioritize).  One lookup answers both. */
struct jt_plugin *default_priority (struct runtime *rt,
                                    const char *topic,
                                    int *handlers)
{
    struct jt_plugin *first = first_handler (rt, topic, handlers);

    if (!first || first->path
        || strcmp (first->list_name, ".priority-default") != 0)
        return NULL;
    return first;
}

struct jt_plugin *state_default_priority (struct runtime *rt,
                                          int state,
                                          const char *topic,
                                          int *handlers)
{
    struct dispatch *d = rt->dispatch;
    unsigned gen = plugin_handlers_generation ();
    /* states are single bits, NEW (1) to INACTIVE (64) */
    int i = state > 0 ? __builtin_ctz ((unsigned)state) : 8;

    if (i >= 8 || (state & (state - 1)))
        return default_priority (rt, topic, handlers);
    struct state_answer *a = &d->by_state[i];
    if (a->gen != gen) {
        a->builtin = default_priority (rt, topic, &a->handlers);
        a->gen = gen;
    }
    *handlers = a->handlers;
    return a->builtin;
}

static bool plugins_answer (struct runtime *rt, const char *topic)
{
    int handlers = 0;
    bool builtin = default_priority (rt, topic, &handlers) != NULL;
    return handlers > (builtin ? 1 : 0);
}

bool plugins_give_priority (struct runtime *rt)
{
    struct dispatch *d = rt->dispatch;
    unsigned gen = plugin_handlers_generation ();

    if (d->priority_gen != gen) {
        d->priority_from_plugins = plugins_answer (rt, "job.state.priority")
                                   || plugins_answer (rt, "job.priority.get");
        d->priority_gen = gen;
    }
    return d->priority_from_plugins;
}

const char *out_errmsg (flux_plugin_arg_t *args)
{
    const char *s = NULL;
    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_OUT, "{s:s}",
                                "errmsg", &s) < 0)
        return NULL;
    return s;
}

void dispatch_clear (struct runtime *rt)
{
    struct dispatch *d = rt->dispatch;

    free (d->stack);
    flux_plugin_arg_destroy (d->spare_args);
    free (d->spare_args_job);
    memset (d, 0, sizeof (*d));
}

void dispatch_stack_aux_gone (struct runtime *rt, struct jt_plugin *jt)
{
    struct dispatch *d = rt->dispatch;

    for (int i = 0; i < d->stack_len; i++) {
        struct job *j = d->stack[i];
        if (!j->in_table) {
            struct job_aux *a = job_aux_find (j, jt);
            if (a) {
                aux_destroy (&a->items);
                a->plugin = NULL;
            }
        }
    }
}
