/* Jobs, their per-job data and the job table (job.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "aux.h"
#include "host.h"
#include "job.h"
#include "json_util.h"
#include "log.h"
#include "runtime.h"
#include "strbuf.h"

#define NBUCKETS_MIN 4096

void event_release (struct event *ev)
{
    json_decref (ev->context);
    json_decref (ev->entry);
    free (ev->name_copy);
}

/* --- jobs table -------------------------------------------------------- */

static unsigned bucket (struct runtime *rt, flux_jobid_t id)
{
    return (unsigned)((id ^ (id >> 29)) % rt->jobs->nbuckets);
}

struct job *table_find (struct runtime *rt, flux_jobid_t id)
{
    if (!rt->jobs->buckets)
        return NULL;
    for (struct job *j = rt->jobs->buckets[bucket (rt, id)]; j; j = j->hnext)
        if (j->id == id)
            return j;
    return NULL;
}

/* Double the buckets once chains average two jobs, so lookups stay O(1)
 * however many jobs the scheduler holds. On ENOMEM chains just grow. */
static void table_grow (struct runtime *rt)
{
    size_t n = rt->jobs->nbuckets ? rt->jobs->nbuckets * 2 : NBUCKETS_MIN;
    struct job **old = rt->jobs->buckets;
    size_t oldn = rt->jobs->nbuckets;
    struct job **nb = calloc (n, sizeof (*nb));

    if (!nb)
        return;
    rt->jobs->buckets = nb;
    rt->jobs->nbuckets = n;
    for (size_t b = 0; b < oldn; b++) {
        while (old[b]) {
            struct job *j = old[b];
            unsigned nbk = bucket (rt, j->id);
            old[b] = j->hnext;
            j->hnext = rt->jobs->buckets[nbk];
            rt->jobs->buckets[nbk] = j;
        }
    }
    free (old);
}

struct job *table_find_bound (struct runtime *rt, flux_jobid_t id)
{
    struct job *job = table_find (rt, id);
    if (!job || !job_is_bound (job)) {
        errno = ENOENT;
        return NULL;
    }
    return job;
}

void table_insert (struct job *job)
{
    struct runtime *rt = job->rt;

    if (!rt->jobs->buckets || rt->jobs->njobs >= 2 * rt->jobs->nbuckets)
        table_grow (rt);
    if (!rt->jobs->buckets)
        abort (); /* cannot track jobs at all: out of memory at start */
    unsigned b = bucket (rt, job->id);
    job->hnext = rt->jobs->buckets[b];
    rt->jobs->buckets[b] = job;
    job->in_table = true;
    rt->jobs->njobs++;
}

void table_remove (struct job *job)
{
    struct runtime *rt = job->rt;

    if (!job->in_table)
        return;
    for (struct job **jp = &rt->jobs->buckets[bucket (rt, job->id)]; *jp;
         jp = &(*jp)->hnext) {
        if (*jp == job) {
            *jp = job->hnext;
            rt->jobs->njobs--;
            break;
        }
    }
    job->in_table = false;
}

void job_decref (struct job *job)
{
    if (job && --job->refcount == 0) {
        int saved_errno = errno;
        for (int f = 0; f < NFIFO; f++)
            fifo_unlink (job->rt->jobs->fifo, f, job);
        job_hot_leave (job);
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
            qentry_free (job->rt, q);
        }
        json_decref (job->jobspec);
        free (job->jobspec_text);
        free (job->spec_source);
        strbuf_destroy (job->spec_replay);
        json_decref (job->spec_live);
        json_decref (job->eventlog);
        strbuf_destroy (job->store_pending);
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
        free (job->prolog_note);
        slab_free (&job->rt->jobs->slab, job);
        errno = saved_errno;
    }
}

struct job *job_create_bare (struct runtime *rt,
                             uint32_t userid,
                             int urgency,
                             double t_submit)
{
    /* from the slab, not malloc: a new RPC thread's first malloc of this
     * size takes glibc's arena path */
    struct job *job = slab_alloc (&rt->jobs->slab, sizeof (*job));
    if (!job) {
        errno = ENOMEM;
        return NULL;
    }
    *job = (struct job){
        .rt = rt,
        .refcount = 1,
        .userid = userid,
        .urgency = urgency,
        .priority = -1,
        .reported_priority = -1,
        .t_submit = t_submit,
        .t_created = now (),
        .state = FLUX_JOB_STATE_NEW,
    };
    if (rt->keep_eventlog && !(job->eventlog = json_array ())) {
        job_decref (job);
        errno = ENOMEM;
        return NULL;
    }
    return job;
}

struct job *job_create (struct runtime *rt,
                        json_t *jobspec,
                        uint32_t userid,
                        int urgency,
                        double t_submit)
{
    struct job *job = job_create_bare (rt, userid, urgency, t_submit);
    json_t *spec;

    if (!job)
        return NULL;
    if (!(spec = jobspec ? jobspec_redacted (jobspec) : json_object ())) {
        job_decref (job);
        errno = ENOMEM;
        return NULL;
    }
    job->jobspec = spec; /* a new job: not resting, so not in the hot ring */
    return job;
}

bool queue_has (struct job *job, int kind)
{
    for (struct qentry *q = job->queue; q; q = q->next) {
        if (q->ev.kind == kind)
            return true;
    }
    return false;
}

void subs_remove (struct job *job, struct jt_plugin *jt)
{
    for (struct sub **sp = &job->subs; *sp;) {
        struct sub *s = *sp;
        if (jt && s->plugin != jt)
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

void subs_clear (struct job *job)
{
    subs_remove (job, NULL);
}

void subs_reap (struct job *job)
{
    for (struct sub **sp = &job->subs; *sp;) {
        struct sub *s = *sp;
        if (s->plugin)
            sp = &s->next;
        else {
            *sp = s->next;
            free (s);
        }
    }
}

struct job **table_snapshot (struct runtime *rt,
                             int *countp,
                             bool include_provisional)
{
    int n = 0, i = 0;
    struct job **v;
    for (size_t b = 0; b < rt->jobs->nbuckets; b++)
        for (struct job *j = rt->jobs->buckets[b]; j; j = j->hnext)
            n++;
    if (!(v = calloc (n + 1, sizeof (*v))))
        return NULL;
    for (size_t b = 0; b < rt->jobs->nbuckets; b++)
        for (struct job *j = rt->jobs->buckets[b]; j; j = j->hnext)
            if (include_provisional || job_is_bound (j))
                v[i++] = job_incref (j);
    *countp = i;
    return v;
}

void snapshot_free (struct job **v, int n)
{
    for (int i = 0; i < n; i++)
        job_decref (v[i]);
    free (v);
}

flux_jobid_t *table_bound_ids (struct runtime *rt, size_t *countp)
{
    size_t n = 0, i = 0;
    flux_jobid_t *ids;
    for (size_t b = 0; b < rt->jobs->nbuckets; b++)
        for (struct job *j = rt->jobs->buckets[b]; j; j = j->hnext)
            n += job_is_bound (j);
    *countp = 0;
    if (!(ids = malloc ((n + 1) * sizeof (*ids))))
        return NULL;
    for (size_t b = 0; b < rt->jobs->nbuckets; b++)
        for (struct job *j = rt->jobs->buckets[b]; j; j = j->hnext)
            if (job_is_bound (j))
                ids[i++] = j->id;
    *countp = i;
    return ids;
}

/* --- job aux ----------------------------------------------------------- */

struct job_aux *job_aux_find (struct job *job, struct jt_plugin *jt)
{
    for (struct job_aux *a = job->aux; a; a = a->next)
        if (a->plugin == jt)
            return a;
    return NULL;
}

void job_aux_destroy_all (struct job *job)
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
void job_aux_plugin_gone (struct runtime *rt, struct jt_plugin *jt)
{
    struct job_aux *doomed = NULL;

    /* Unlink first, destroy after the walk: destructors are plugin code,
     * which may change jobs' aux and the table. */
    for (size_t b = 0; b < rt->jobs->nbuckets; b++) {
        for (struct job *j = rt->jobs->buckets[b]; j; j = j->hnext) {
            struct job_aux **ap = &j->aux;
            while (*ap) {
                struct job_aux *a = *ap;
                if (a->plugin != jt) {
                    ap = &a->next;
                    continue;
                }
                if (j->state != FLUX_JOB_STATE_INACTIVE) {
                    *ap = a->next;
                    a->next = doomed;
                    doomed = a;
                }
                else {
                    a->plugin = NULL;
                    ap = &a->next;
                }
            }
            subs_remove (j, jt);
        }
    }
    while (doomed) {
        struct job_aux *a = doomed;
        doomed = a->next;
        aux_destroy (&a->items);
        free (a);
    }
}

/* --- the hot ring ------------------------------------------------------ */

struct job *job_hot_next_victim (struct runtime *rt)
{
    return rt->jobs->hot[rt->jobs->hot_next];
}

void job_hot_enter (struct job *job)
{
    struct job_table *t = job->rt->jobs;

    if (job->hot_slot)
        return;
    t->hot[t->hot_next] = job;
    job->hot_slot = t->hot_next + 1;
    t->hot_next = (t->hot_next + 1) % SPEC_HOT;
}

void job_hot_leave (struct job *job)
{
    if (job->hot_slot) {
        job->rt->jobs->hot[job->hot_slot - 1] = NULL;
        job->hot_slot = 0;
    }
}

json_t *jobspec_redacted (json_t *jobspec)
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

/* --- lifecycle --------------------------------------------------------- */

void jobs_free_all (struct runtime *rt)
{
    for (size_t b = 0; b < rt->jobs->nbuckets; b++) {
        while (rt->jobs->buckets[b]) {
            struct job *j = rt->jobs->buckets[b];
            rt->jobs->buckets[b] = j->hnext;
            j->in_table = false;
            job_decref (j);
        }
    }
    free (rt->jobs->buckets);
    rt->jobs->buckets = NULL;
    rt->jobs->nbuckets = rt->jobs->njobs = 0;
    while (rt->jobs->spare_queue) {
        struct qentry *q = rt->jobs->spare_queue;
        rt->jobs->spare_queue = q->next;
        free (q);
    }
    rt->jobs->n_spare_queue = 0;
    /* (a job still held elsewhere keeps the chunks until the next fini) */
    (void)slab_clear (&rt->jobs->slab);
}

#define SPARE_QUEUE_MAX 16

struct qentry *qentry_new (struct runtime *rt)
{
    struct qentry *q = rt->jobs->spare_queue;
    if (!q)
        return malloc (sizeof (*q));
    rt->jobs->spare_queue = q->next;
    rt->jobs->n_spare_queue--;
    return q;
}

void qentry_free (struct runtime *rt, struct qentry *q)
{
    if (!q)
        return;
    if (rt->jobs->n_spare_queue >= SPARE_QUEUE_MAX) {
        free (q);
        return;
    }
    q->next = rt->jobs->spare_queue;
    rt->jobs->spare_queue = q;
    rt->jobs->n_spare_queue++;
}

/* --- jobs --------------------------------------------------------------- */

void job_annotations_merge (struct job *job, json_t *annotations)
{
    const char *k;
    json_t *v;
    json_object_foreach (annotations, k, v) {
        json_t *cur = json_object_get (job->annotations, k);
        if (json_is_null (v))
            json_object_del (job->annotations, k);
        else if (json_is_object (v) && json_is_object (cur))
            json_object_update (cur, v);
        else if (lazy_object (&job->annotations))
            json_object_set (job->annotations, k, v);
    }
}

void job_forget (struct job *job)
{
    table_remove (job);
    job_decref (job);
}

json_t *submit_context (uint32_t userid, int urgency, const int *flags)
{
    json_t *o = json_object ();
    if (o
        && (obj_set (o, "userid", json_integer ((json_int_t)userid)) < 0
            || obj_set (o, "urgency", json_integer (urgency)) < 0
            || (flags && obj_set (o, "flags", json_integer (*flags)) < 0))) {
        json_decref (o);
        o = NULL;
    }
    return o;
}

json_t *event_context_of (struct event *ev)
{
    if (!ev->context && ev->numbers_of != NUMBERS_NONE) {
        const int64_t *n = ev->numbers;
        int flags = (int)n[2];
        jobtap_host_json_pool_begin ();
        if (ev->numbers_of == NUMBERS_SUBMIT)
            ev->context = submit_context ((uint32_t)n[0], (int)n[1],
                                          flags >= 0 ? &flags : NULL);
        else if (ev->numbers_of == NUMBERS_PRIORITY
                 && (ev->context = json_object ())
                 && obj_set (ev->context, "priority", json_integer (n[0]))
                        < 0) {
            json_decref (ev->context);
            ev->context = NULL;
        }
        jobtap_host_json_pool_end ();
    }
    return ev->context;
}

json_t *event_entry_of (struct event *ev)
{
    if (!ev->entry) {
        event_context_of (ev);
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
