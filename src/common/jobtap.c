/* The jobtap host: plugins in load order, the per-job table, the
 * current-job stack, topic dispatch and the flux_jobtap_* API.
 * Behaviour follows flux-core's job-manager (see the semantics
 * reference); the code is our own. */
#include <dlfcn.h>
#include <errno.h>
#include <fnmatch.h>
#include <libgen.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>

#include <flux/core.h>
#include <flux/jobtap.h>

#include "aux.h"
#include "host.h"
#include "internal.h"

#ifndef JOBTAP_PLUGIN_SEARCHDIR
#define JOBTAP_PLUGIN_SEARCHDIR "/usr/local/lib/slurm-jobtap/plugins"
#endif

#define PRIORITY_UNAVAIL (-2)

struct service {
    char *topic;
    uint32_t rolemask;
    flux_msg_handler_f cb;
    void *arg;
    struct service *next;
};

/* One loaded jobtap plugin.  Stored in the plugin's aux as "flux::jobtap"
 * (so flux_jobtap_* can tell jobtap plugins from others). */
struct jt_plugin {
    flux_plugin_t *p;
    char *list_name;      /* basename or ".builtin" */
    char *path;           /* NULL for builtins */
    char *sort_mode;      /* set_load_sort_order */
    struct service *services;
    struct jt_plugin *next;
};

struct job_aux {
    struct jt_plugin *plugin; /* NULL once the plugin is unloaded */
    struct aux_item *items;
    struct job_aux *next;
};

struct sub {
    struct jt_plugin *plugin;
    struct sub *next;
};

/* Jobs in creation order, linked through the jobs themselves, so taking
 * the oldest or removing one never scans the job table. */
enum {
    FIFO_PROV, /* unbound submissions (expired oldest first) */
    FIFO_REST, /* past job.new, jobspec to compact (ops.compact_later) */
    NFIFO
};

struct job;
struct job_link {
    struct job *prev, *next;
    bool linked;
};

struct job_fifo {
    struct job *head, *tail;
    size_t count;
};

/* An event on its way through event_post.  Its eventlog entry
 * {timestamp, name[, context]} is built only when something reads it
 * (eventlog, subscribers, state callbacks, end_event, the host's event
 * hook): most events of most jobs are never looked at. */
struct event {
    int kind;            /* EV_*, or -1 for names not in known_events[] */
    const char *name;    /* known_events[kind], else name_copy or borrowed */
    char *name_copy;     /* owned copy while queued */
    json_t *context;     /* held; may be NULL */
    double timestamp;
    json_t *entry;       /* held once built (event_entry_of) */
};

struct qentry {
    struct event ev;
    struct qentry *next;
};

/* Event names whose posting a job records in a bit (posted_other holds
 * the rest), and whose effects event_apply switches on. */
enum {
    EV_SUBMIT, EV_VALIDATE, EV_INVALIDATE, EV_DEPEND, EV_PRIORITY,
    EV_URGENCY, EV_ALLOC, EV_FREE, EV_START, EV_RELEASE, EV_FINISH,
    EV_CLEAN, EV_EXCEPTION, EV_DEPENDENCY_ADD, EV_DEPENDENCY_REMOVE,
    EV_JOBSPEC_UPDATE, EV_SET_FLAGS, EV_PROLOG_START, EV_PROLOG_FINISH,
    EV_EPILOG_START, EV_EPILOG_FINISH, EV_ANNOTATIONS, EV_MEMO,
    EV_FLUX_RESTART, EV_RESOURCE_UPDATE, EV_DEBUG,
    EV_NKNOWN
};

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

static void event_release (struct event *ev)
{
    json_decref (ev->context);
    json_decref (ev->entry);
    free (ev->name_copy);
}

/* Per-job state.  Containers most jobs never need stay NULL until first
 * used: a pending job's memory is what the scale of a site's queue
 * multiplies (docs/performance.md). */
struct job {
    flux_jobid_t id;
    uint64_t token;           /* != 0 while provisional */
    double t_created;
    struct job_link link[NFIFO]; /* membership of the runtime's FIFOs */
    uint32_t userid;
    int urgency;
    int64_t priority;
    double t_submit;
    int state;
    json_t *jobspec;          /* tree, or NULL while compacted (job_jobspec) */
    char *jobspec_text;       /* compact text; NULL if the tree changed since */
    int hot_slot;             /* 1 + index in rt.spec_hot, 0 if not there */
    bool spec_resting;        /* past job.new: trees are kept in spec_hot */
    json_t *eventlog;         /* only if the host keeps eventlogs */
    json_t *end_event;
    json_t *R;
    json_t *annotations;
    json_t *deps;             /* description -> true, insertion order */
    json_t *grudge;           /* every description ever added */
    json_t *flags;            /* array of set flags */
    uint32_t posted;          /* bit per known_events[] name posted */
    json_t *posted_other;     /* other event names -> true */
    json_t *pending_updates;  /* jobspec_update_pack, flushed per plugin */
    json_t *all_updates;      /* every applied update (submit result) */
    struct qentry *queue, *queue_tail; /* events waiting while busy */
    struct job_aux *aux;
    struct sub *subs;
    bool busy;
    bool host_event;          /* event comes from the scheduler */
    bool quiet_update;        /* don't notify jobspec_update */
    char *hold_reason;        /* what we told ops->hold, NULL if not held */
    int64_t reported_priority;
    int perilog_active;
    int refcount;
    bool in_table;
    struct job *hnext;        /* hash chain */
};

#define NBUCKETS_MIN 4096

/* A jobspec as a jansson tree costs ~6 KiB, as compact text ~0.5 KiB.
 * A job keeps the tree through submit and job.new, where plugins read it,
 * then only the text (job_spec_rest, in the host's job_new: never on the
 * submit path).  A later reader parses the text again; the SPEC_HOT most
 * recently parsed or updated trees stay. */
#define SPEC_HOT 256

static struct runtime {
    int refcount;
    struct jobtap_host_ops ops;
    void *ops_arg;
    struct jt_plugin *plugins;
    struct job **buckets;     /* grows with the number of jobs */
    size_t nbuckets, njobs;
    struct job_fifo fifo[NFIFO];
    struct job **stack;
    int stack_len, stack_cap;
    char *config_path;
    json_t *config;           /* whole instance config */
    json_t *plugins_conf;     /* [job-manager] plugins as loaded */
    bool configured;
    uint64_t next_token;
    json_t *inactive_order;   /* ids of inactive jobs, oldest first */
    struct job *spec_hot[SPEC_HOT]; /* jobs whose jobspec tree is kept */
    int spec_hot_next;
} rt;

static pthread_mutex_t rt_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

void runtime_lock (void)
{
    pthread_mutex_lock (&rt_lock);
}

void runtime_unlock (void)
{
    pthread_mutex_unlock (&rt_lock);
}

const char *jobtap_runtime_version (void)
{
    return "0.1.0";
}

/* --- logging ----------------------------------------------------------- */

void runtime_vlog (int level, const char *fmt, va_list ap)
{
    char buf[2048];

    vsnprintf (buf, sizeof (buf), fmt, ap);
    runtime_lock ();
    if (rt.ops.log)
        rt.ops.log (level, buf, rt.ops_arg);
    else
        fprintf (stderr, "slurm-jobtap: %s\n", buf);
    runtime_unlock ();
}

void runtime_log (int level, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    runtime_vlog (level, fmt, ap);
    va_end (ap);
}

static void seterr (jobtap_host_error_t *err, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));
static void seterr (jobtap_host_error_t *err, const char *fmt, ...)
{
    if (err) {
        int saved_errno = errno;
        va_list ap;
        va_start (ap, fmt);
        vsnprintf (err->text, sizeof (err->text), fmt, ap);
        va_end (ap);
        errno = saved_errno;
    }
}

static double now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* --- plugins ----------------------------------------------------------- */

static struct jt_plugin *jt_get (flux_plugin_t *p)
{
    if (!p)
        return NULL;
    int saved_errno = errno;
    struct jt_plugin *jt = flux_plugin_aux_get (p, "flux::jobtap");
    errno = saved_errno;
    return jt;
}

static const char *jt_name (flux_plugin_t *p)
{
    struct jt_plugin *jt = jt_get (p);
    return jt && jt->list_name ? jt->list_name : "none";
}

/* Internal name: what the plugin set, but a path-like name (the default
 * after load_dso) becomes the basename up to the first '.'. */
static const char *jt_internal_name (struct jt_plugin *jt)
{
    const char *name = flux_plugin_get_name (jt->p);
    return name ? name : jt->list_name;
}

static bool is_loaded (struct jt_plugin *jt)
{
    for (struct jt_plugin *x = rt.plugins; x; x = x->next)
        if (x == jt)
            return true;
    return false;
}

/* --- jobs table -------------------------------------------------------- */

static unsigned bucket (flux_jobid_t id)
{
    return (unsigned)((id ^ (id >> 29)) % rt.nbuckets);
}

static struct job *table_find (flux_jobid_t id)
{
    if (!rt.buckets)
        return NULL;
    for (struct job *j = rt.buckets[bucket (id)]; j; j = j->hnext)
        if (j->id == id)
            return j;
    return NULL;
}

/* Double the buckets once chains average two jobs, so lookups stay O(1)
 * however many jobs the scheduler holds. On ENOMEM chains just grow. */
static void table_grow (void)
{
    size_t n = rt.nbuckets ? rt.nbuckets * 2 : NBUCKETS_MIN;
    struct job **old = rt.buckets;
    size_t oldn = rt.nbuckets;
    struct job **nb = calloc (n, sizeof (*nb));

    if (!nb)
        return;
    rt.buckets = nb;
    rt.nbuckets = n;
    for (size_t b = 0; b < oldn; b++) {
        while (old[b]) {
            struct job *j = old[b];
            unsigned nbk = bucket (j->id);
            old[b] = j->hnext;
            j->hnext = rt.buckets[nbk];
            rt.buckets[nbk] = j;
        }
    }
    free (old);
}

static void table_insert (struct job *job)
{
    if (!rt.buckets || rt.njobs >= 2 * rt.nbuckets)
        table_grow ();
    if (!rt.buckets)
        abort (); /* cannot track jobs at all: out of memory at start */
    unsigned b = bucket (job->id);
    job->hnext = rt.buckets[b];
    rt.buckets[b] = job;
    job->in_table = true;
    rt.njobs++;
}

static void table_remove (struct job *job)
{
    if (!job->in_table)
        return;
    for (struct job **jp = &rt.buckets[bucket (job->id)]; *jp;
         jp = &(*jp)->hnext) {
        if (*jp == job) {
            *jp = job->hnext;
            rt.njobs--;
            break;
        }
    }
    job->in_table = false;
}

/* A snapshot of jobs (with references), so callbacks may change the
 * table while we iterate. */
static struct job **table_snapshot (int *countp, bool include_provisional);

static void job_aux_destroy_all (struct job *job);

static void fifo_push (int f, struct job *job)
{
    struct job_fifo *q = &rt.fifo[f];
    struct job_link *l = &job->link[f];

    if (l->linked)
        return;
    l->prev = q->tail;
    l->next = NULL;
    if (q->tail)
        q->tail->link[f].next = job;
    else
        q->head = job;
    q->tail = job;
    l->linked = true;
    q->count++;
}

static void fifo_unlink (int f, struct job *job)
{
    struct job_fifo *q = &rt.fifo[f];
    struct job_link *l = &job->link[f];

    if (!l->linked)
        return;
    if (l->prev)
        l->prev->link[f].next = l->next;
    else
        q->head = l->next;
    if (l->next)
        l->next->link[f].prev = l->prev;
    else
        q->tail = l->prev;
    l->prev = l->next = NULL;
    l->linked = false;
    q->count--;
}

static struct job *job_incref (struct job *job)
{
    if (job)
        job->refcount++;
    return job;
}

static void spec_hot_remove (struct job *job)
{
    if (job->hot_slot) {
        rt.spec_hot[job->hot_slot - 1] = NULL;
        job->hot_slot = 0;
    }
}

/* Keep only the text of a job's jobspec (made now if the tree changed). */
static void spec_compact (struct job *job)
{
    spec_hot_remove (job);
    if (!job->jobspec)
        return;
    if (!job->jobspec_text)
        job->jobspec_text = compact_dumps (job->jobspec);
    if (job->jobspec_text) { /* else out of memory: keep the tree */
        json_decref (job->jobspec);
        job->jobspec = NULL;
    }
}

static void spec_hot_add (struct job *job)
{
    struct job *victim;

    if (job->hot_slot)
        return;
    if ((victim = rt.spec_hot[rt.spec_hot_next]))
        spec_compact (victim);
    rt.spec_hot[rt.spec_hot_next] = job;
    job->hot_slot = rt.spec_hot_next + 1;
    rt.spec_hot_next = (rt.spec_hot_next + 1) % SPEC_HOT;
}

/* The job's jobspec tree (borrowed; incref it to hold it across anything
 * that may call plugins, which may push it out of the hot set). */
static json_t *job_jobspec (struct job *job)
{
    if (!job->jobspec && job->jobspec_text) {
        json_error_t e;
        jobtap_host_json_pool_begin ();
        job->jobspec = json_loads (job->jobspec_text, 0, &e);
        jobtap_host_json_pool_end ();
        if (!job->jobspec) {
            runtime_log (LOG_ERR,
                         "jobtap: job %ju: stored jobspec unreadable: %s",
                         (uintmax_t)job->id,
                         e.text);
            return NULL;
        }
    }
    if (job->jobspec && job->spec_resting)
        spec_hot_add (job);
    return job->jobspec;
}

/* Replace the jobspec (steals 'spec' and 'text'; text may be NULL). */
static void job_set_jobspec (struct job *job, json_t *spec, char *text)
{
    json_decref (job->jobspec);
    free (job->jobspec_text);
    job->jobspec = spec;
    job->jobspec_text = text;
    if (spec && job->spec_resting)
        spec_hot_add (job);
}

/* The job is past job.new: from now on keep its jobspec as text, now or,
 * with ops.compact_later, at the host's next jobtap_host_compact(). */
static void job_spec_rest (struct job *job)
{
    job->spec_resting = true;
    if (!rt.ops.compact_later) {
        spec_compact (job);
        return;
    }
    if (job->jobspec)
        fifo_push (FIFO_REST, job);
}

void jobtap_host_compact (void)
{
    for (;;) {
        struct job *job;
        runtime_lock ();
        if ((job = rt.fifo[FIFO_REST].head)) {
            fifo_unlink (FIFO_REST, job);
            if (!job->hot_slot) /* read again since: the hot set has it */
                spec_compact (job);
        }
        runtime_unlock ();
        if (!job)
            break;
    }
}

static void job_decref (struct job *job)
{
    if (job && --job->refcount == 0) {
        int saved_errno = errno;
        for (int f = 0; f < NFIFO; f++)
            fifo_unlink (f, job);
        spec_hot_remove (job);
        job_aux_destroy_all (job);
        while (job->subs) {
            struct sub *s = job->subs;
            job->subs = s->next;
            free (s);
        }
        while (job->queue) {
            struct qentry *q = job->queue;
            job->queue = q->next;
            event_release (&q->ev);
            free (q);
        }
        json_decref (job->jobspec);
        free (job->jobspec_text);
        json_decref (job->eventlog);
        json_decref (job->end_event);
        json_decref (job->R);
        json_decref (job->annotations);
        json_decref (job->deps);
        json_decref (job->grudge);
        json_decref (job->flags);
        json_decref (job->posted_other);
        json_decref (job->pending_updates);
        json_decref (job->all_updates);
        free (job->hold_reason);
        free (job);
        errno = saved_errno;
    }
}

/* A container member created on first use; NULL if out of memory. */
static json_t *lazy_object (json_t **slot)
{
    if (!*slot)
        *slot = json_object ();
    return *slot;
}

static json_t *lazy_array (json_t **slot)
{
    if (!*slot)
        *slot = json_array ();
    return *slot;
}

/* An object ready to change: 'o' itself when nobody but its holder (the
 * one about to change it) holds it, else a copy, or a new object if 'o'
 * is none; a new reference, NULL if out of memory.  Jobspecs and submit
 * updates are shared, not copied, and copied on write this way. */
static json_t *own_object (json_t *o)
{
    if (!json_is_object (o))
        return json_object ();
    return o->refcount == 1 ? json_incref (o) : json_copy (o);
}

/* job->all_updates ready to change: made on first use, copied first if
 * the caller of jobtap_host_submit still holds it.  NULL if out of
 * memory. */
static json_t *updates_own (struct job *job)
{
    json_t *o = own_object (job->all_updates);

    if (o) {
        json_decref (job->all_updates);
        job->all_updates = o;
    }
    return o;
}

/* The jobspec a job keeps: the caller's object itself (updates change in
 * place only what nobody else holds, own_object), or a copy without
 * attributes.system.environment, which plugins never see (Flux redacts
 * it too). New reference. */
static json_t *jobspec_redacted (json_t *jobspec)
{
    json_t *system = json_object_get (json_object_get (jobspec, "attributes"),
                                      "system");
    json_t *copy;

    if (!json_object_get (system, "environment"))
        return json_incref (jobspec);
    if (!(copy = json_deep_copy (jobspec)))
        return NULL;
    json_object_del (json_object_get (json_object_get (copy, "attributes"),
                                      "system"),
                     "environment");
    return copy;
}

static struct job *job_create (json_t *jobspec,
                               uint32_t userid,
                               int urgency,
                               double t_submit)
{
    struct job *job = calloc (1, sizeof (*job));
    json_t *spec;
    if (!job)
        return NULL;
    job->refcount = 1;
    job->userid = userid;
    job->urgency = urgency;
    job->priority = -1;
    job->reported_priority = -1;
    job->t_submit = t_submit;
    job->t_created = now ();
    job->state = FLUX_JOB_STATE_NEW;
    spec = jobspec ? jobspec_redacted (jobspec) : json_object ();
    if (!spec || (rt.ops.keep_eventlog && !(job->eventlog = json_array ()))) {
        json_decref (spec);
        job_decref (job);
        errno = ENOMEM;
        return NULL;
    }
    job_set_jobspec (job, spec, NULL);
    return job;
}

static bool job_is_bound (struct job *job)
{
    return job->token == 0;
}

/* --- current job stack ------------------------------------------------- */

static int stack_push (struct job *job)
{
    if (rt.stack_len == rt.stack_cap) {
        int cap = rt.stack_cap ? rt.stack_cap * 2 : 16;
        struct job **s = realloc (rt.stack, cap * sizeof (*s));
        if (!s)
            return -1;
        rt.stack = s;
        rt.stack_cap = cap;
    }
    rt.stack[rt.stack_len++] = job_incref (job);
    return 0;
}

static void stack_pop (void)
{
    if (rt.stack_len > 0)
        job_decref (rt.stack[--rt.stack_len]);
}

static struct job *current_job (void)
{
    return rt.stack_len > 0 ? rt.stack[rt.stack_len - 1] : NULL;
}

/* Generic lookup: current job, then the table. */
static struct job *lookup_jobid (flux_plugin_t *p, flux_jobid_t id)
{
    struct job *cur;
    struct job *job;

    if (!jt_get (p)) {
        errno = EINVAL;
        return NULL;
    }
    cur = current_job ();
    if (id == FLUX_JOBTAP_CURRENT_JOB || (cur && cur->id == id))
        return cur; /* NULL with errno untouched if there is none */
    if (!(job = table_find (id)))
        errno = ENOENT;
    return job;
}

static struct job *lookup_active_jobid (flux_plugin_t *p, flux_jobid_t id)
{
    struct job *job = lookup_jobid (p, id);
    if (!job || job->state == FLUX_JOB_STATE_INACTIVE) {
        errno = ENOENT;
        return NULL;
    }
    return job;
}

/* --- args -------------------------------------------------------------- */

static json_t *args_jobspec (void *arg)
{
    return json_incref (job_jobspec (arg));
}

static void args_job_release (void *arg)
{
    job_decref (arg);
}

/* Set o[key] = v, stealing v; fails if v is NULL (out of memory).  For
 * the runtime's literal keys, which need no UTF-8 check. */
static int obj_set (json_t *o, const char *key, json_t *v)
{
    return json_object_set_new_nocheck (o, key, v);
}

/* A callback's args: IN with the job's fields and those of 'extra' (may
 * be NULL), OUT 'out' (stolen; NULL: empty).  "jobspec" is built only if
 * the plugin reads it: most callbacks after submit (priority, state
 * changes) never do.  Built without pack formats: this runs several
 * times per job. */
static flux_plugin_arg_t *job_args_create_out (struct job *job, json_t *extra,
                                              json_t *out)
{
    json_t *in;
    flux_plugin_arg_t *args;

    jobtap_host_json_pool_begin ();
    in = json_object ();
    if (!in
        || obj_set (in, "id", json_integer ((json_int_t)job->id)) < 0
        || obj_set (in, "userid", json_integer (job->userid)) < 0
        || obj_set (in, "urgency", json_integer (job->urgency)) < 0
        || obj_set (in, "state", json_integer (job->state)) < 0
        || obj_set (in, "priority", json_integer (job->priority)) < 0
        || obj_set (in, "t_submit", json_real (job->t_submit)) < 0
        || (job->R && obj_set (in, "R", json_incref (job->R)) < 0)
        || (job->end_event
            && obj_set (in, "end_event", json_incref (job->end_event)) < 0)
        || (extra && json_object_update (in, extra) < 0)) {
        jobtap_host_json_pool_end ();
        json_decref (in);
        json_decref (out);
        return NULL;
    }
    args = plugin_arg_create_with (in, out ? out : json_object ());
    jobtap_host_json_pool_end ();
    if (!args)
        return NULL;
    if (plugin_arg_set_lazy (args,
                             "jobspec",
                             args_jobspec,
                             args_job_release,
                             job_incref (job)) < 0) {
        job_decref (job);
        flux_plugin_arg_destroy (args);
        return NULL;
    }
    return args;
}

/* After a callback that asked for jobspec updates: the args let go of
 * the jobspec they hold, so the update can change it in place when
 * nobody else holds it, and a later plugin of the stack reads it
 * updated, as in Flux (where the args hold the jobspec that updates
 * change). */
static void args_jobspec_drop (flux_plugin_arg_t *args, struct job *job)
{
    if (job->jobspec && plugin_arg_drop (args, "jobspec", job->jobspec)
        && plugin_arg_set_lazy (args,
                                "jobspec",
                                args_jobspec,
                                args_job_release,
                                job_incref (job)) < 0)
        job_decref (job);
}

static flux_plugin_arg_t *job_args_create (struct job *job)
{
    return job_args_create_out (job, NULL, NULL);
}

/* {"priority": n} from the pool, or NULL (out of memory): the context of
 * a priority event and the builtin's answer in OUT args. */
static json_t *priority_object (json_int_t priority)
{
    json_t *o;

    jobtap_host_json_pool_begin ();
    if ((o = json_object ())
        && obj_set (o, "priority", json_integer (priority)) < 0) {
        json_decref (o);
        o = NULL;
    }
    jobtap_host_json_pool_end ();
    return o;
}

/* {key1: v1 (borrowed), key2: n}, from the pool: the extra IN fields of
 * the callbacks made on every state change and update. */
static json_t *call_fields (const char *key1, json_t *v1, const char *key2,
                            int n)
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

/* --- events ------------------------------------------------------------ */

static int event_post_known (struct job *job, int kind, json_t *context);
static int stack_call (struct job *job,
                       const char *topic,
                       flux_plugin_arg_t *args);
static int jobtap_call (struct job *job, const char *topic, json_t *in);
static int jobtap_call_handled (struct job *job, const char *topic,
                                json_t *in, struct jt_plugin *builtin);
static bool stack_handles (const char *topic);
static struct jt_plugin *default_priority (const char *topic, int *handlers);
static void reprioritize_one (struct job *job, int64_t priority);

/* "job.state.<state>" without formatting: it is looked up on every
 * state change of every job. */
static const char *state_topic (int state)
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

static bool queue_has (struct job *job, int kind)
{
    for (struct qentry *q = job->queue; q; q = q->next) {
        if (q->ev.kind == kind)
            return true;
    }
    return false;
}

static int known_event (const char *name)
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

static bool posted_test (struct job *job, const char *name)
{
    int i = known_event (name);
    if (i >= 0)
        return job->posted & (1u << i);
    return json_object_get (job->posted_other, name) != NULL;
}

/* The event's eventlog entry, built on first use (borrowed; NULL if out
 * of memory). */
static json_t *event_entry_of (struct event *ev)
{
    if (!ev->entry) {
        jobtap_host_json_pool_begin ();
        if ((ev->entry = json_object ())
            && (obj_set (ev->entry, "timestamp", json_real (ev->timestamp)) < 0
                || obj_set (ev->entry, "name", json_string (ev->name)) < 0
                || (ev->context
                    && obj_set (ev->entry, "context",
                                json_incref (ev->context)) < 0))) {
            json_decref (ev->entry);
            ev->entry = NULL;
        }
        jobtap_host_json_pool_end ();
    }
    return ev->entry;
}

static void notify_event (struct job *job, struct event *ev)
{
    json_t *entry;
    if (job_is_bound (job) && rt.ops.event && (entry = event_entry_of (ev)))
        rt.ops.event (job->id, entry, rt.ops_arg);
}

/* Apply dotted-key updates to a job's jobspec; a null value deletes the
 * key.  Objects along each updated path that someone else holds (a
 * callback's args, the submitter, a subtree shared between jobs, the
 * compaction memory) are copied, and keep showing what they showed (the
 * jobspec is unchanged during a callback); the others are changed in
 * place.  Out of memory part way, the updates before stay applied. */
static int jobspec_apply_pooled (struct job *job, json_t *updates)
{
    json_t *spec = job_jobspec (job);
    json_t *root = spec ? own_object (spec) : NULL;
    const char *key;
    json_t *val;
    int rc = -1;

    if (!root)
        return -1;
    json_object_foreach (updates, key, val) {
        char *path = strdup (key);
        char *saveptr = NULL;
        char *tok, *next;
        json_t *o = root;
        if (!path)
            goto done;
        tok = strtok_r (path, ".", &saveptr);
        while (tok && (next = strtok_r (NULL, ".", &saveptr))) {
            json_t *cur = json_object_get (o, tok);
            json_t *child = own_object (cur);
            if (child && child == cur)
                json_decref (child); /* o's own: changed in place */
            else if (!child || json_object_set_new (o, tok, child) < 0) {
                free (path);
                goto done;
            }
            o = child;
            tok = next;
        }
        if (tok) {
            if (json_is_null (val))
                json_object_del (o, tok);
            else
                json_object_set (o, tok, val);
        }
        free (path);
    }
    rc = 0;
done:
    job_set_jobspec (job, root, NULL); /* the text kept at rest is stale */
    return rc;
}

static int jobspec_apply (struct job *job, json_t *updates)
{
    int rc;

    jobtap_host_json_pool_begin ();
    rc = jobspec_apply_pooled (job, updates);
    jobtap_host_json_pool_end ();
    return rc;
}

static bool valid_update_key (const char *key)
{
    static const char *roots[] = { "attributes", "resources", "tasks" };
    for (size_t i = 0; i < 3; i++) {
        size_t n = strlen (roots[i]);
        if (!strncmp (key, roots[i], n) && (key[n] == '\0' || key[n] == '.'))
            return true;
    }
    return false;
}

static int validate_updates (json_t *updates)
{
    const char *key;
    json_t *val;
    if (!json_is_object (updates))
        return -1;
    json_object_foreach (updates, key, val) {
        if (!valid_update_key (key))
            return -1;
    }
    return 0;
}

static void set_state (struct job *job, int state)
{
    job->state = state;
}

static void fatal_cancel (struct job *job, json_t *context)
{
    const char *type = json_string_value (json_object_get (context, "type"));
    const char *note = json_string_value (json_object_get (context, "note"));
    if (job_is_bound (job) && !job->host_event && rt.ops.cancel)
        rt.ops.cancel (job->id,
                       type ? type : "exception",
                       note ? note : "",
                       rt.ops_arg);
}

/* Drop jt's subscriptions to job.  While the job is busy its events'
 * subscriber walk may be on an entry, so entries are only marked then
 * (plugin NULL) and subs_reap frees them once the events are applied. */
static void subs_remove (struct job *job, struct jt_plugin *jt)
{
    for (struct sub **sp = &job->subs; *sp;) {
        struct sub *s = *sp;
        if (s->plugin != jt)
            sp = &s->next;
        else if (job->busy) {
            s->plugin = NULL;
            sp = &s->next;
        }
        else {
            *sp = s->next;
            free (s);
        }
    }
}

static void subs_reap (struct job *job)
{
    subs_remove (job, NULL);
}

/* Apply one event: update the job, then fire job.event.* to subscribers,
 * job.update for jobspec updates, and job.state.<s> on a state change. */
static int event_apply (struct job *job, struct event *ev)
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
                fatal_cancel (job, context);
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
        job->priority = json_is_integer (p) ? json_integer_value (p) : 0;
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
        if (jobspec_apply (job, context) < 0)
            return -1;
        jobtap_host_json_pool_begin ();
        if (updates_own (job))
            json_object_update (job->all_updates, context);
        jobtap_host_json_pool_end ();
        if (job_is_bound (job) && !job->quiet_update && rt.ops.jobspec_update)
            rt.ops.jobspec_update (job->id, context, rt.ops_arg);
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
    case EV_EPILOG_FINISH:
        if (job->perilog_active > 0)
            job->perilog_active--;
        break;
    }

    /* state first: job.event.* callbacks see the new state, as in Flux */
    if (new_state != prev_state)
        set_state (job, new_state);
    if (job->eventlog && (entry = event_entry_of (ev)))
        json_array_append (job->eventlog, entry);
    posted_set (job, ev);
    notify_event (job, ev);

    /* subscribers first, then job.update, then job.state.* */
    if (job->subs && (entry = event_entry_of (ev))) {
        char topic[256];
        struct sub *s;
        snprintf (topic, sizeof (topic), "job.event.%s", ev->name);
        /* A callback may unsubscribe (it is only marked then, see
         * subs_remove) or subscribe (appended, so it hears this event). */
        for (s = job->subs; s; s = s->next) {
            flux_plugin_arg_t *args;
            if (!s->plugin || !(args = job_args_create (job)))
                continue;
            flux_plugin_arg_pack (args,
                                  FLUX_PLUGIN_ARG_IN,
                                  "{s:O}",
                                  "entry", entry);
            stack_push (job);
            if (flux_plugin_call (s->plugin->p, topic, args) < 0)
                runtime_log (LOG_DEBUG,
                             "jobtap: %s: %s: rc=-1",
                             s->plugin->list_name,
                             topic);
            stack_pop ();
            flux_plugin_arg_destroy (args);
        }
    }
    if (ev->kind == EV_JOBSPEC_UPDATE && stack_handles ("job.update")) {
        json_t *in = call_fields ("updates", context, NULL, 0);
        jobtap_call_handled (job, "job.update", in, NULL);
        json_decref (in);
    }
    if (new_state != prev_state) {
        const char *topic = state_topic (new_state);
        int handlers;
        struct jt_plugin *builtin = default_priority (topic, &handlers);
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
    return 0;
}

/* Tell the scheduler what it must do after a burst of events settles:
 * hold/release and priority changes.  Done at rest so a job that passes
 * DEPEND -> PRIORITY -> SCHED in one cascade is never held. */
static void job_sync_host (struct job *job)
{
    char reason[1024];
    const char *want = NULL;

    if (!job_is_bound (job))
        return;
    if (job->state == FLUX_JOB_STATE_DEPEND && json_object_size (job->deps)) {
        void *it = json_object_iter (job->deps);
        snprintf (reason,
                  sizeof (reason),
                  "jobtap: %s",
                  json_object_iter_key (it));
        want = reason;
    }
    else if (job->state == FLUX_JOB_STATE_PRIORITY)
        want = "jobtap: priority unavailable";

    if (want && (!job->hold_reason || strcmp (want, job->hold_reason))) {
        free (job->hold_reason);
        job->hold_reason = strdup (want);
        if (rt.ops.hold)
            rt.ops.hold (job->id, want, rt.ops_arg);
    }
    else if (!want && job->hold_reason) {
        free (job->hold_reason);
        job->hold_reason = NULL;
        if (rt.ops.release)
            rt.ops.release (job->id, rt.ops_arg);
    }
    if (job->state == FLUX_JOB_STATE_SCHED
        && job->priority != job->reported_priority) {
        job->reported_priority = job->priority;
        if (rt.ops.set_priority)
            rt.ops.set_priority (job->id, job->priority, rt.ops_arg);
    }
}

/* Post event 'kind' (EV_*, or -1: 'name' is not a known event) with
 * 'context' (borrowed, may be NULL): apply it now, or after the event
 * being applied, whose callbacks posted it. */
static int event_post_kind (struct job *job,
                            int kind,
                            const char *name,
                            json_t *context)
{
    struct event ev = {
        .kind = kind,
        .name = kind >= 0 ? known_events[kind] : name,
        .context = json_incref (context),
        .timestamp = now (),
    };
    struct qentry *q;
    int rc = 0;

    if (job->busy) {
        /* deferred until the current event's callbacks return */
        if (!(q = malloc (sizeof (*q)))
            || (kind < 0 && !(ev.name = ev.name_copy = strdup (name)))) {
            free (q);
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
        if (event_apply (job, &ev) < 0)
            rc = -1;
        event_release (&ev);
        if (!(q = job->queue))
            break;
        if (!(job->queue = q->next))
            job->queue_tail = NULL;
        ev = q->ev;
        free (q);
    }
    job->busy = false;
    subs_reap (job);
    job_sync_host (job);
    job_decref (job);
    return rc;
}

static int event_post_known (struct job *job, int kind, json_t *context)
{
    return event_post_kind (job, kind, NULL, context);
}

static int event_post (struct job *job, const char *name, json_t *context)
{
    return event_post_kind (job, known_event (name), name, context);
}

/* --- stack calls ------------------------------------------------------- */

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

static struct jt_plugin **plugin_snapshot (int *countp)
{
    int n = 0, i = 0;
    struct jt_plugin **v;
    for (struct jt_plugin *jt = rt.plugins; jt; jt = jt->next)
        n++;
    if (!(v = calloc (n + 1, sizeof (*v))))
        return NULL;
    for (struct jt_plugin *jt = rt.plugins; jt; jt = jt->next)
        v[i++] = jt;
    *countp = n;
    return v;
}

/* Which plugins handle a topic, remembered per topic: every state change
 * of every job asks, and the answer changes only with
 * plugin_handlers_gen.  Open addressing over TOPIC_PROBE slots from a
 * hash of the topic; an answer of an older generation is free. */
#define TOPIC_CACHE 128
#define TOPIC_PROBE 4
#define TOPIC_CACHE_LEN 64
static struct topic_answer {
    unsigned gen; /* plugin_handlers_gen when cached; 0: empty */
    char topic[TOPIC_CACHE_LEN];
    struct jt_plugin *first;
    int count;
} topic_cache[TOPIC_CACHE];

/* The topic's cached answer (*hit), or a slot to cache it in, or NULL
 * for topics too long to cache. */
static struct topic_answer *topic_slot (const char *topic, bool *hit)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    size_t n = 0;
    struct topic_answer *free_slot = NULL;

    *hit = false;
    for (const char *c = topic; *c; c++, n++)
        h = (h ^ (unsigned char)*c) * 16777619u;
    if (n >= TOPIC_CACHE_LEN)
        return NULL;
    for (int i = 0; i < TOPIC_PROBE; i++) {
        struct topic_answer *a = &topic_cache[(h + i) % TOPIC_CACHE];
        if (a->gen != plugin_handlers_gen) {
            if (!free_slot)
                free_slot = a;
        }
        else if (!strcmp (a->topic, topic)) {
            *hit = true;
            return a;
        }
    }
    /* all probed slots current and taken: evict one, by hash bits */
    return free_slot ? free_slot
                     : &topic_cache[(h + (h >> 7) % TOPIC_PROBE) % TOPIC_CACHE];
}

/* The first loaded plugin (load order) with a handler for 'topic', or
 * NULL; with 'count', how many have one. */
static struct jt_plugin *first_handler (const char *topic, int *count)
{
    bool hit;
    struct topic_answer *a = topic_slot (topic, &hit);
    struct jt_plugin *first = NULL;
    int n = 0;

    if (hit) {
        if (count)
            *count = a->count;
        return a->first;
    }
    for (struct jt_plugin *jt = rt.plugins; jt; jt = jt->next) {
        if (plugin_has_handler (jt->p, topic)) {
            if (!first)
                first = jt;
            n++;
        }
    }
    if (a) {
        a->gen = plugin_handlers_gen;
        strcpy (a->topic, topic);
        a->first = first;
        a->count = n;
    }
    if (count)
        *count = n;
    return first;
}

/* Whether any loaded plugin has a handler for 'topic': callers skip
 * building args for the many topics no plugin listens to. */
static bool stack_handles (const char *topic)
{
    return first_handler (topic, NULL) != NULL;
}

/* The builtin .priority-default always answers priority = urgency.  When
 * it is loaded and the first plugin with a handler for 'topic', it is
 * returned and the runtime gives that answer itself: OUT priority is set
 * before the stack call, which skips the builtin.  *handlers: how many
 * plugins handle the topic; 1 with the builtin returned means no other
 * does, so no args are needed at all (that was half of job.new's cost,
 * and most of a reprioritize).  One lookup answers both. */
static struct jt_plugin *default_priority (const char *topic, int *handlers)
{
    struct jt_plugin *first = first_handler (topic, handlers);

    if (!first || first->path
        || strcmp (first->list_name, ".priority-default") != 0)
        return NULL;
    return first;
}

/* Args for a priority topic: OUT already holds the builtin's answer when
 * 'builtin' (from default_priority) is set. */
static flux_plugin_arg_t *priority_args (struct job *job, json_t *in,
                                         struct jt_plugin *builtin)
{
    json_t *out = NULL;
    if (builtin && !(out = priority_object (job->urgency)))
        return NULL;
    return job_args_create_out (job, in, out);
}

/* A stack call whose result nobody reads. */
static void stack_notify (struct job *job, const char *topic)
{
    flux_plugin_arg_t *args;
    if (stack_handles (topic) && (args = job_args_create (job))) {
        stack_call (job, topic, args);
        flux_plugin_arg_destroy (args);
    }
}

/* Call 'topic' on every plugin in load order with one shared args
 * object, counting 'skip' (may be NULL) as handled without calling it:
 * the caller has put its answer in the args.  Returns the number of
 * plugins that handled it, or -1 at the first failure (OUT args already
 * set stay). */
static int stack_call_skip (struct job *job,
                            const char *topic,
                            flux_plugin_arg_t *args,
                            struct jt_plugin *skip)
{
    struct jt_plugin **v;
    int n, total = 0;

    if (!(v = plugin_snapshot (&n)))
        return -1;
    if (job)
        stack_push (job);
    for (int i = 0; i < n; i++) {
        int rc;
        if (!is_loaded (v[i])) /* removed by an earlier callback */
            continue;
        if (v[i] == skip) {
            total++;
            continue;
        }
        rc = flux_plugin_call (v[i]->p, topic, args);
        if (job && job->pending_updates) {
            args_jobspec_drop (args, job);
            flush_updates (job);
        }
        if (rc < 0) {
            runtime_log (LOG_DEBUG,
                         "jobtap: %s: %s: rc=-1",
                         v[i]->list_name,
                         topic);
            total = -1;
            break;
        }
        total += rc;
    }
    if (job)
        stack_pop ();
    free (v);
    return total;
}

static int stack_call (struct job *job,
                       const char *topic,
                       flux_plugin_arg_t *args)
{
    return stack_call_skip (job, topic, args, NULL);
}

static int raise_exception_internal (struct job *job,
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

static int jobtap_call (struct job *job, const char *topic, json_t *in)
{
    if (!stack_handles (topic))
        return 0;
    return jobtap_call_handled (job, topic, in, NULL);
}

/* Stack call plus reading OUT priority, annotations and R, for a topic
 * some plugin handles; 'builtin' from default_priority, or NULL. */
static int jobtap_call_handled (struct job *job, const char *topic,
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
        flux_plugin_arg_destroy (args);
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
        flux_plugin_arg_destroy (args);
        return -1;
    }
    if (priority >= 0)
        reprioritize_one (job, priority);
    if (annotations) {
        if (!json_is_object (annotations))
            runtime_log (LOG_ERR,
                         "jobtap: job %ju: %s: annotations must be an object",
                         (uintmax_t)job->id,
                         topic);
        else {
            const char *k;
            json_t *v;
            json_object_foreach (annotations, k, v) {
                if (json_is_null (v))
                    json_object_del (job->annotations, k);
                else if (json_is_object (v)
                         && json_is_object (json_object_get (job->annotations,
                                                             k)))
                    json_object_update (json_object_get (job->annotations, k),
                                        v);
                else if (lazy_object (&job->annotations))
                    json_object_set (job->annotations, k, v);
            }
            if (strcmp (topic, "job.new") != 0) {
                json_t *ctx = json_pack ("{s:O}", "annotations", annotations);
                event_post_known (job, EV_ANNOTATIONS, ctx);
                json_decref (ctx);
            }
        }
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
    flux_plugin_arg_destroy (args);
    return rc;
}

/* --- priority ---------------------------------------------------------- */

static void reprioritize_one (struct job *job, int64_t priority)
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
    json_t *ctx = priority_object (priority);
    event_post_known (job, EV_PRIORITY, ctx);
    json_decref (ctx);
}

static void get_priority (struct job *job)
{
    flux_plugin_arg_t *args;
    json_int_t priority = PRIORITY_UNAVAIL;
    int rc;

    int handlers;
    struct jt_plugin *builtin = default_priority ("job.priority.get",
                                                  &handlers);

    if (builtin && handlers == 1) {
        if (job->urgency != job->priority)
            reprioritize_one (job, job->urgency);
        return;
    }
    if (handlers == 0 || !(args = priority_args (job, NULL, builtin)))
        return;
    rc = stack_call_skip (job, "job.priority.get", args, builtin);
    if (rc == 0)
        goto out;
    if (rc < 0) {
        runtime_log (LOG_ERR,
                     "jobtap: job %ju: job.priority.get: callback failed",
                     (uintmax_t)job->id);
        goto out;
    }
    if (flux_plugin_arg_unpack (args,
                                FLUX_PLUGIN_ARG_OUT,
                                "{s?I}",
                                "priority", &priority) < 0) {
        runtime_log (LOG_ERR,
                     "jobtap: job %ju: job.priority.get: %s",
                     (uintmax_t)job->id,
                     flux_plugin_arg_strerror (args));
        goto out;
    }
    if (priority == PRIORITY_UNAVAIL) {
        if (job->state == FLUX_JOB_STATE_SCHED)
            runtime_log (LOG_ERR,
                         "jobtap: job %ju: BUG: plugin didn't return priority",
                         (uintmax_t)job->id);
        goto out;
    }
    if (priority > -1 && priority != job->priority)
        reprioritize_one (job, priority);
out:
    flux_plugin_arg_destroy (args);
}

static struct job **table_snapshot (int *countp, bool include_provisional)
{
    int n = 0, i = 0;
    struct job **v;
    for (size_t b = 0; b < rt.nbuckets; b++)
        for (struct job *j = rt.buckets[b]; j; j = j->hnext)
            n++;
    if (!(v = calloc (n + 1, sizeof (*v))))
        return NULL;
    for (size_t b = 0; b < rt.nbuckets; b++)
        for (struct job *j = rt.buckets[b]; j; j = j->hnext)
            if (include_provisional || job_is_bound (j))
                v[i++] = job_incref (j);
    *countp = i;
    return v;
}

static void snapshot_free (struct job **v, int n)
{
    for (int i = 0; i < n; i++)
        job_decref (v[i]);
    free (v);
}

static int reprioritize_all (void)
{
    int n;
    struct job **v = table_snapshot (&n, false);
    if (!v)
        return -1;
    for (int i = 0; i < n; i++) {
        if (v[i]->state == FLUX_JOB_STATE_PRIORITY
            || v[i]->state == FLUX_JOB_STATE_SCHED)
            get_priority (v[i]);
    }
    snapshot_free (v, n);
    return 0;
}

/* --- job aux ----------------------------------------------------------- */

static struct job_aux *job_aux_find (struct job *job, struct jt_plugin *jt)
{
    for (struct job_aux *a = job->aux; a; a = a->next)
        if (a->plugin == jt)
            return a;
    return NULL;
}

static void job_aux_destroy_all (struct job *job)
{
    while (job->aux) {
        struct job_aux *a = job->aux;
        job->aux = a->next;
        if (a->plugin)
            aux_destroy (&a->items);
        else if (a->items)
            runtime_log (LOG_ERR,
                         "job %ju: leaking job aux item(s) abandoned by "
                         "unloaded plugin",
                         (uintmax_t)job->id);
        free (a);
    }
}

/* Plugin removal: destroy its aux on active jobs, abandon the rest. */
static void job_aux_plugin_gone (struct jt_plugin *jt)
{
    for (size_t b = 0; b < rt.nbuckets; b++) {
        for (struct job *j = rt.buckets[b]; j; j = j->hnext) {
            struct job_aux **ap = &j->aux;
            while (*ap) {
                struct job_aux *a = *ap;
                if (a->plugin != jt) {
                    ap = &a->next;
                    continue;
                }
                if (j->state != FLUX_JOB_STATE_INACTIVE) {
                    *ap = a->next;
                    aux_destroy (&a->items);
                    free (a);
                }
                else {
                    a->plugin = NULL;
                    ap = &a->next;
                }
            }
            subs_remove (j, jt);
        }
    }
    for (int i = 0; i < rt.stack_len; i++) {
        struct job *j = rt.stack[i];
        if (!j->in_table) {
            struct job_aux *a = job_aux_find (j, jt);
            if (a) {
                aux_destroy (&a->items);
                a->plugin = NULL;
            }
        }
    }
}

int flux_jobtap_job_aux_set (flux_plugin_t *p,
                             flux_jobid_t id,
                             const char *name,
                             void *val,
                             flux_free_f free_fn)
{
    struct jt_plugin *jt;
    struct job *job;
    struct job_aux *a;
    int rc = -1;

    runtime_lock ();
    if (!(jt = jt_get (p))) {
        errno = EINVAL;
        goto out;
    }
    if (!(job = lookup_jobid (p, id))) {
        errno = ENOENT;
        goto out;
    }
    if (!(a = job_aux_find (job, jt))) {
        if ((!name && !val) || (!val && free_fn) || (!name && !free_fn)) {
            errno = EINVAL;
            goto out;
        }
        if (!(a = calloc (1, sizeof (*a))))
            goto out;
        a->plugin = jt;
        a->next = job->aux;
        job->aux = a;
    }
    rc = aux_set (&a->items, name, val, free_fn);
out:
    runtime_unlock ();
    return rc;
}

void *flux_jobtap_job_aux_get (flux_plugin_t *p,
                               flux_jobid_t id,
                               const char *name)
{
    struct jt_plugin *jt;
    struct job *job;
    struct job_aux *a;
    void *val = NULL;

    runtime_lock ();
    if (!(jt = jt_get (p)))
        errno = EINVAL;
    else if ((job = lookup_jobid (p, id)) && (a = job_aux_find (job, jt)))
        val = aux_get (a->items, name);
    runtime_unlock ();
    return val;
}

int flux_jobtap_job_aux_delete_value (flux_plugin_t *p,
                                      flux_jobid_t id,
                                      void *val)
{
    struct jt_plugin *jt;
    struct job *job;
    struct job_aux *a;
    int rc = -1;

    runtime_lock ();
    if (!(jt = jt_get (p)))
        errno = EINVAL;
    else if (!(job = lookup_jobid (p, id)))
        errno = ENOENT;
    else {
        if ((a = job_aux_find (job, jt)))
            aux_delete_value (&a->items, val);
        rc = 0;
    }
    runtime_unlock ();
    return rc;
}

int flux_jobtap_job_aux_delete (flux_plugin_t *p, flux_jobid_t id, void *val)
{
    return flux_jobtap_job_aux_delete_value (p, id, val);
}

/* --- flux_jobtap_* ----------------------------------------------------- */

flux_t *flux_jobtap_get_flux (flux_plugin_t *p)
{
    if (!jt_get (p)) {
        errno = EINVAL;
        return NULL;
    }
    return runtime_handle ();
}

int flux_jobtap_service_register_ex (flux_plugin_t *p,
                                     const char *method,
                                     uint32_t rolemask,
                                     flux_msg_handler_f cb,
                                     void *arg)
{
    struct jt_plugin *jt;
    struct service *s;
    const char *name;
    char topic[1024];
    int n, rc = -1;

    runtime_lock ();
    if (!(jt = jt_get (p)) || !cb || !(name = flux_plugin_get_name (p))
        || strchr (name, '/')) {
        errno = EINVAL;
        goto out;
    }
    if (name[0] == '.')
        name++;
    if (method)
        n = snprintf (topic, sizeof (topic), "job-manager.%s.%s", name, method);
    else
        n = snprintf (topic, sizeof (topic), "job-manager.%s", name);
    if (n >= (int)sizeof (topic)) {
        errno = EINVAL;
        goto out;
    }
    if (!(s = calloc (1, sizeof (*s))) || !(s->topic = strdup (topic))) {
        free (s);
        goto out;
    }
    s->rolemask = rolemask;
    s->cb = cb;
    s->arg = arg;
    s->next = jt->services;
    jt->services = s;
    runtime_log (LOG_DEBUG, "jobtap: %s: registered service %s",
                 jt->list_name ? jt->list_name : name, topic);
    rc = 0;
out:
    runtime_unlock ();
    return rc;
}

int flux_jobtap_service_register (flux_plugin_t *p,
                                  const char *method,
                                  flux_msg_handler_f cb,
                                  void *arg)
{
    return flux_jobtap_service_register_ex (p, method, 0, cb, arg);
}

int flux_jobtap_set_load_sort_order (flux_plugin_t *p, const char *mode)
{
    struct jt_plugin *jt;
    int rc = -1;

    runtime_lock ();
    if (!(jt = jt_get (p)) || !mode
        || (strcmp (mode, "none") && strcmp (mode, "state")
            && strcmp (mode, "-state"))) {
        errno = EINVAL;
        goto out;
    }
    if (strcmp (mode, "none") != 0) {
        char *s = strdup (mode);
        if (!s)
            goto out;
        free (jt->sort_mode);
        jt->sort_mode = s;
    }
    rc = 0;
out:
    runtime_unlock ();
    return rc;
}

int flux_jobtap_reprioritize_all (flux_plugin_t *p)
{
    int rc;
    runtime_lock ();
    if (!jt_get (p)) {
        errno = EINVAL;
        rc = -1;
    }
    else
        rc = reprioritize_all ();
    runtime_unlock ();
    return rc;
}

int flux_jobtap_reprioritize_job (flux_plugin_t *p,
                                  flux_jobid_t id,
                                  unsigned int priority)
{
    struct job *job;
    int rc = -1;

    runtime_lock ();
    if (!jt_get (p))
        errno = EINVAL;
    else if (!(job = table_find (id))
             || job->state == FLUX_JOB_STATE_INACTIVE) {
        /* literal id only: CURRENT_JOB is not special here */
        struct job *cur = current_job ();
        if (cur && cur->id == id && id != FLUX_JOBTAP_CURRENT_JOB) {
            reprioritize_one (cur, priority);
            rc = 0;
        }
        else
            errno = ENOENT;
    }
    else {
        reprioritize_one (job, priority);
        rc = 0;
    }
    runtime_unlock ();
    return rc;
}

int flux_jobtap_priority_unavail (flux_plugin_t *p, flux_plugin_arg_t *args)
{
    if (!jt_get (p)) {
        errno = EINVAL;
        return -1;
    }
    return flux_plugin_arg_pack (args,
                                 FLUX_PLUGIN_ARG_OUT,
                                 "{s:I}",
                                 "priority", (json_int_t)PRIORITY_UNAVAIL);
}

static int jobtap_verror (flux_plugin_arg_t *args, const char *fmt, va_list ap)
{
    flux_error_t error;
    int n;

    memset (&error, 0, sizeof (error));
    n = vsnprintf (error.text, sizeof (error.text), fmt, ap);
    if (n >= (int)sizeof (error.text))
        error.text[sizeof (error.text) - 2] = '+';
    if (error.text[0])
        flux_plugin_arg_pack (args,
                              FLUX_PLUGIN_ARG_OUT,
                              "{s:s}",
                              "errmsg", error.text);
    return -1;
}

int flux_jobtap_error (flux_plugin_t *p,
                       flux_plugin_arg_t *args,
                       const char *fmt,
                       ...)
{
    va_list ap;
    (void)p;
    if (!fmt)
        return -1;
    va_start (ap, fmt);
    jobtap_verror (args, fmt, ap);
    va_end (ap);
    return -1;
}

static int reject_default (flux_plugin_arg_t *args, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));
static int reject_default (flux_plugin_arg_t *args, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    jobtap_verror (args, fmt, ap);
    va_end (ap);
    return -1;
}

int flux_jobtap_reject_job (flux_plugin_t *p,
                            flux_plugin_arg_t *args,
                            const char *fmt,
                            ...)
{
    va_list ap;
    if (!fmt) {
        const char *name;
        runtime_lock ();
        name = jt_name (p);
        reject_default (args, "rejected by job-manager plugin '%s'", name);
        runtime_unlock ();
        return -1;
    }
    va_start (ap, fmt);
    jobtap_verror (args, fmt, ap);
    va_end (ap);
    return -1;
}

/* The job for dependency add/remove: the current job if ids match,
 * otherwise an active job by literal id. */
static struct job *dependency_job (flux_plugin_t *p, flux_jobid_t id)
{
    struct job *cur = current_job ();
    struct job *job;

    if (!jt_get (p)) {
        errno = EINVAL;
        return NULL;
    }
    if (cur && cur->id == id)
        job = cur;
    else if (!(job = table_find (id))
             || job->state == FLUX_JOB_STATE_INACTIVE) {
        errno = ENOENT;
        return NULL;
    }
    if (job->state != FLUX_JOB_STATE_DEPEND
        && job->state != FLUX_JOB_STATE_NEW) {
        errno = EINVAL;
        return NULL;
    }
    return job;
}

int flux_jobtap_dependency_add (flux_plugin_t *p,
                                flux_jobid_t id,
                                const char *description)
{
    struct job *job;
    int rc = -1;

    runtime_lock ();
    if (!(job = dependency_job (p, id)))
        goto out;
    if (!description) {
        errno = EINVAL;
        goto out;
    }
    if (json_object_get (job->deps, description))
        rc = 0; /* idempotent */
    else {
        json_t *ctx = json_pack ("{s:s}", "description", description);
        rc = event_post_known (job, EV_DEPENDENCY_ADD, ctx);
        json_decref (ctx);
    }
out:
    runtime_unlock ();
    return rc;
}

int flux_jobtap_dependency_remove (flux_plugin_t *p,
                                   flux_jobid_t id,
                                   const char *description)
{
    struct job *job;
    int rc = -1;

    runtime_lock ();
    if (!(job = dependency_job (p, id)))
        goto out;
    if (!description) {
        errno = EINVAL;
        goto out;
    }
    json_t *ctx = json_pack ("{s:s}", "description", description);
    rc = event_post_known (job, EV_DEPENDENCY_REMOVE, ctx);
    json_decref (ctx);
out:
    runtime_unlock ();
    return rc;
}

int flux_jobtap_job_set_flag (flux_plugin_t *p,
                              flux_jobid_t id,
                              const char *flag)
{
    struct job *job;
    int rc = -1;

    runtime_lock ();
    if (!p || !flag || !jt_get (p)) {
        errno = EINVAL;
        goto out;
    }
    if (!(job = lookup_active_jobid (p, id)))
        goto out;
    if (strcmp (flag, "alloc-bypass") && strcmp (flag, "debug")
        && strcmp (flag, "immutable")) {
        errno = EINVAL;
        goto out;
    }
    json_t *ctx = json_pack ("{s:[s]}", "flags", flag);
    rc = event_post_known (job, EV_SET_FLAGS, ctx);
    json_decref (ctx);
out:
    runtime_unlock ();
    return rc;
}

int flux_jobtap_raise_exception (flux_plugin_t *p,
                                 flux_jobid_t id,
                                 const char *type,
                                 int severity,
                                 const char *fmt,
                                 ...)
{
    struct job *job;
    char note[1024];
    va_list ap;
    int n, rc = -1;

    runtime_lock ();
    if (!p || !type || !fmt || !jt_get (p)) {
        errno = EINVAL;
        goto out;
    }
    if (!(job = lookup_active_jobid (p, id)))
        goto out;
    va_start (ap, fmt);
    n = vsnprintf (note, sizeof (note), fmt, ap);
    va_end (ap);
    if (n >= (int)sizeof (note))
        note[sizeof (note) - 2] = '+';
    rc = raise_exception_internal (job, type, severity, note);
out:
    runtime_unlock ();
    return rc;
}

/* Events that move a job between states belong to the scheduler here:
 * a plugin posting them would desynchronise Slurm and the runtime. */
static bool scheduler_owned_event (const char *name)
{
    static const char *owned[] = {
        "submit", "validate", "invalidate", "depend", "priority", "alloc",
        "start", "finish", "release", "free", "clean", "flux-restart",
        "dependency-add", "dependency-remove", "jobspec-update", NULL,
    };
    for (int i = 0; owned[i]; i++)
        if (!strcmp (name, owned[i]))
            return true;
    return false;
}

int flux_jobtap_event_post_pack (flux_plugin_t *p,
                                 flux_jobid_t id,
                                 const char *name,
                                 const char *fmt,
                                 ...)
{
    struct job *job;
    json_t *ctx = NULL;
    int rc = -1;

    runtime_lock ();
    if (!p || !name || !jt_get (p)) {
        errno = EINVAL;
        goto out;
    }
    if (!(job = lookup_active_jobid (p, id)))
        goto out;
    if (scheduler_owned_event (name)) {
        runtime_log (LOG_ERR,
                     "jobtap: %s: event '%s' cannot be posted by a plugin "
                     "under slurm-jobtap",
                     jt_name (p),
                     name);
        errno = EPERM;
        goto out;
    }
    if (fmt) {
        json_error_t err;
        va_list ap;
        va_start (ap, fmt);
        ctx = plugin_vpack (&err, fmt, ap);
        va_end (ap);
        if (!ctx) {
            errno = EINVAL;
            goto out;
        }
    }
    rc = event_post (job, name, ctx);
    json_decref (ctx);
out:
    runtime_unlock ();
    return rc;
}

static bool updates_allowed (struct job *job)
{
    return job->state != FLUX_JOB_STATE_RUN
           && job->state != FLUX_JOB_STATE_CLEANUP
           && job->state != FLUX_JOB_STATE_INACTIVE;
}

int flux_jobtap_jobspec_update_pack (flux_plugin_t *p, const char *fmt, ...)
{
    struct job *job;
    json_t *o = NULL;
    json_error_t err;
    va_list ap;
    int rc = -1;

    runtime_lock ();
    if (!p || !fmt || !jt_get (p) || !(job = current_job ())
        || !updates_allowed (job)) {
        errno = EINVAL;
        goto out;
    }
    jobtap_host_json_pool_begin ();
    va_start (ap, fmt);
    o = plugin_vpack (&err, fmt, ap);
    va_end (ap);
    if (o && validate_updates (o) == 0) {
        if (!job->pending_updates)
            job->pending_updates = json_incref (o);
        else
            json_object_update (job->pending_updates, o);
        rc = 0;
    }
    jobtap_host_json_pool_end ();
    if (rc < 0) {
        errno = EINVAL;
        goto out;
    }
out:
    json_decref (o);
    runtime_unlock ();
    return rc;
}

int flux_jobtap_jobspec_update_id_pack (flux_plugin_t *p,
                                        flux_jobid_t id,
                                        const char *fmt,
                                        ...)
{
    struct job *job;
    json_t *o = NULL;
    json_error_t err;
    va_list ap;
    int rc = -1;

    runtime_lock ();
    if (!p || !fmt || !jt_get (p) || !(job = table_find (id))
        || !updates_allowed (job) || job == current_job ()) {
        errno = EINVAL;
        goto out;
    }
    va_start (ap, fmt);
    o = plugin_vpack (&err, fmt, ap);
    va_end (ap);
    if (!o || validate_updates (o) < 0) {
        errno = EINVAL;
        goto out;
    }
    rc = event_post_known (job, EV_JOBSPEC_UPDATE, o);
out:
    json_decref (o);
    runtime_unlock ();
    return rc;
}

flux_plugin_arg_t *flux_jobtap_job_lookup (flux_plugin_t *p, flux_jobid_t id)
{
    struct job *job;
    flux_plugin_arg_t *args = NULL;

    runtime_lock ();
    if (!p || !jt_get (p))
        errno = EINVAL;
    else if (!(job = lookup_jobid (p, id)))
        errno = ENOENT;
    else if ((args = job_args_create (job)))
        plugin_arg_resolve (args); /* the plugin may keep them past the job */
    runtime_unlock ();
    return args;
}

int flux_jobtap_get_job_result (flux_plugin_t *p,
                                flux_jobid_t id,
                                flux_job_result_t *resultp)
{
    struct job *job;
    const char *name = NULL;
    json_t *ctx = NULL;
    int rc = -1;

    runtime_lock ();
    if (!p || !resultp || !jt_get (p)) {
        errno = EINVAL;
        goto out;
    }
    if (!(job = lookup_jobid (p, id))) {
        errno = ENOENT;
        goto out;
    }
    if ((job->state != FLUX_JOB_STATE_CLEANUP
         && job->state != FLUX_JOB_STATE_INACTIVE)
        || !job->end_event
        || json_unpack (job->end_event,
                        "{s:s s:o}",
                        "name", &name,
                        "context", &ctx) < 0) {
        errno = EINVAL;
        goto out;
    }
    if (!strcmp (name, "finish")) {
        int status = -1;
        json_unpack (ctx, "{s:i}", "status", &status);
        *resultp = status == 0 ? FLUX_JOB_RESULT_COMPLETED
                               : FLUX_JOB_RESULT_FAILED;
    }
    else {
        const char *type = "";
        json_unpack (ctx, "{s:s}", "type", &type);
        if (!strcmp (type, "cancel"))
            *resultp = FLUX_JOB_RESULT_CANCELED;
        else if (!strcmp (type, "timeout"))
            *resultp = FLUX_JOB_RESULT_TIMEOUT;
        else
            *resultp = FLUX_JOB_RESULT_FAILED;
    }
    rc = 0;
out:
    runtime_unlock ();
    return rc;
}

int flux_jobtap_job_event_posted (flux_plugin_t *p,
                                  flux_jobid_t id,
                                  const char *name)
{
    struct job *job;
    int rc = -1;

    runtime_lock ();
    if (!p || !name || !jt_get (p))
        errno = EINVAL;
    else if ((job = lookup_jobid (p, id)))
        rc = posted_test (job, name) ? 1 : 0;
    runtime_unlock ();
    return rc;
}

int flux_jobtap_job_subscribe (flux_plugin_t *p, flux_jobid_t id)
{
    struct job *job;
    struct sub *s, **sp;
    int rc = -1;

    runtime_lock ();
    if (!(job = lookup_active_jobid (p, id))) {
        errno = ENOENT;
        goto out;
    }
    if (!(s = calloc (1, sizeof (*s))))
        goto out;
    s->plugin = jt_get (p);
    for (sp = &job->subs; *sp; sp = &(*sp)->next)
        ;
    *sp = s;
    rc = 0;
out:
    runtime_unlock ();
    return rc;
}

void flux_jobtap_job_unsubscribe (flux_plugin_t *p, flux_jobid_t id)
{
    struct job *job;
    struct jt_plugin *jt;

    runtime_lock ();
    if ((jt = jt_get (p)) && (job = lookup_active_jobid (p, id)))
        subs_remove (job, jt);
    runtime_unlock ();
}

static int perilog_post (struct job *job,
                         const char *name,
                         const char *description,
                         int status,
                         bool finish)
{
    json_t *ctx = finish ? json_pack ("{s:s s:i}",
                                      "description", description,
                                      "status", status)
                         : json_pack ("{s:s}", "description", description);
    int rc = event_post (job, name, ctx);
    json_decref (ctx);
    return rc;
}

int flux_jobtap_prolog_start (flux_plugin_t *p, const char *description)
{
    struct job *job;
    int rc = -1;

    runtime_lock ();
    if (!jt_get (p) || !description || !(job = current_job ())
        || job->state == FLUX_JOB_STATE_CLEANUP
        || job->state == FLUX_JOB_STATE_INACTIVE)
        errno = EINVAL;
    else
        rc = perilog_post (job, "prolog-start", description, 0, false);
    runtime_unlock ();
    return rc;
}

int flux_jobtap_prolog_finish (flux_plugin_t *p,
                               flux_jobid_t id,
                               const char *description,
                               int status)
{
    struct job *job;
    int rc = -1;

    runtime_lock ();
    if (!jt_get (p))
        errno = EINVAL;
    else if (!(job = lookup_active_jobid (p, id)))
        ;
    else if (!description)
        errno = EINVAL;
    else
        rc = perilog_post (job, "prolog-finish", description, status, true);
    runtime_unlock ();
    return rc;
}

int flux_jobtap_epilog_start (flux_plugin_t *p, const char *description)
{
    struct job *job;
    int rc = -1;

    runtime_lock ();
    if (!jt_get (p) || !description || !(job = current_job ())
        || job->state != FLUX_JOB_STATE_CLEANUP)
        errno = EINVAL;
    else
        rc = perilog_post (job, "epilog-start", description, 0, false);
    runtime_unlock ();
    return rc;
}

int flux_jobtap_epilog_finish (flux_plugin_t *p,
                               flux_jobid_t id,
                               const char *description,
                               int status)
{
    struct job *job;
    int rc = -1;

    runtime_lock ();
    if (!jt_get (p))
        errno = EINVAL;
    else if (!(job = lookup_active_jobid (p, id)))
        ;
    else if (!description || job->state != FLUX_JOB_STATE_CLEANUP)
        errno = EINVAL;
    else
        rc = perilog_post (job, "epilog-finish", description, status, true);
    runtime_unlock ();
    return rc;
}

int flux_jobtap_call (flux_plugin_t *p,
                      flux_jobid_t id,
                      const char *topic,
                      flux_plugin_arg_t *args)
{
    struct job *job;
    int rc = -1;

    runtime_lock ();
    if (!p || !jt_get (p) || !args || !topic || !strncmp (topic, "job.", 4)) {
        errno = EINVAL;
        goto out;
    }
    if (!(job = lookup_jobid (p, id))) {
        errno = ENOENT;
        goto out;
    }
    rc = stack_call (job, topic, args);
out:
    runtime_unlock ();
    return rc;
}

#include "host.c.inc"
