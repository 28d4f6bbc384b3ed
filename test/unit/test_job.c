/* job.c: jobs and their refcounts, the job table, the FIFOs, job aux per
 * plugin and subscriber entries, on a runtime made here (not the
 * process's). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <flux/core.h>
#include <flux/jobtap.h>

#include "aux.h"
#include "core_util.h"
#include "dispatch.h"
#include "host.h"
#include "job.h"
#include "jtplugin.h"
#include "log.h"
#include "runtime.h"
#include "spec.h"
#include "tap.h"

static struct runtime rt;
static json_t *logged;

static void log_sink (int level, const char *msg, void *arg)
{
    (void)level;
    (void)arg;
    json_array_append_new (logged, json_string (msg));
}

static int logged_like (const char *substr)
{
    size_t i;
    json_t *v;
    int n = 0;

    json_array_foreach (logged, i, v) {
        if (strstr (json_string_value (v), substr))
            n++;
    }
    return n;
}

static struct job *job_with_id (flux_jobid_t id, int state)
{
    struct job *job = job_create (&rt, NULL, 1000, 16, 1.5);
    if (!job)
        bail_out ("job_create failed");
    job->id = id;
    job->state = state;
    return job;
}

static int destroyed;
static char destroyed_what[64];
static void aux_destructor (void *arg)
{
    destroyed++;
    snprintf (destroyed_what, sizeof (destroyed_what), "%s", (char *)arg);
    free (arg);
}

static void test_refcounts (void)
{
    json_t *spec = json_pack ("{s:i}", "version", 1);
    struct job *job = job_create (&rt, spec, 42, 20, 3.25);

    ok (job != NULL, "job_create works");
    isint (job->refcount, 1, "a new job has refcount 1");
    isint (job->state, FLUX_JOB_STATE_NEW, "a new job is in NEW");
    isint (job->userid, 42, "userid is kept");
    isint (job->urgency, 20, "urgency is kept");
    isint (job->priority, -1, "priority starts unset (-1)");
    isint (job->reported_priority, -1, "nothing reported to the host yet");
    ok (job->t_submit == 3.25, "t_submit is kept");
    ok (job->rt == &rt, "the job knows its runtime");
    ok (job_is_bound (job), "a job with no token is bound");
    ok (!job->in_table, "a new job is not in the table");
    ok (job->jobspec == spec, "a jobspec with no environment is kept as is");
    isint (spec->refcount, 2, "the job holds a reference on it");
    ok (job_incref (job) == job, "job_incref returns the job");
    isint (job->refcount, 2, "job_incref counts");
    ok (job_incref (NULL) == NULL, "job_incref (NULL) is NULL");
    job_decref (job);
    isint (job->refcount, 1, "job_decref counts down");
    errno = 1234;
    job_decref (job);
    isint (errno, 1234, "freeing a job keeps errno");
    isint (spec->refcount, 1, "the last job_decref dropped the jobspec");
    job_decref (NULL);
    json_decref (spec);

    job = job_create (&rt, NULL, 0, 16, 0.);
    ok (json_is_object (job->jobspec) && json_object_size (job->jobspec) == 0,
        "job_create with no jobspec gives an empty one");
    job_decref (job);
}

static void test_table (void)
{
    enum { N = 3 * 4096 };
    static struct job *jobs[N];
    const flux_jobid_t base = 1ULL << 40;
    int wrong = 0;

    ok (table_find (&rt, 5) == NULL, "table_find on an empty table: NULL");
    for (int i = 0; i < N; i++) {
        jobs[i] = job_with_id (base + (flux_jobid_t)i * 4096, 8);
        table_insert (jobs[i]);
        if (i == 0)
            isint (rt.jobs->nbuckets, 4096, "the first insert makes 4096 buckets");
    }
    isint (rt.jobs->njobs, N, "njobs counts every insert");
    ok (rt.jobs->nbuckets >= 8192, "the table grew past 4096 buckets (%zu)",
        rt.jobs->nbuckets);
    ok (rt.jobs->njobs <= 2 * rt.jobs->nbuckets, "chains average at most two jobs");
    for (int i = 0; i < N; i++) {
        if (table_find (&rt, jobs[i]->id) != jobs[i] || !jobs[i]->in_table)
            wrong++;
    }
    isint (wrong, 0, "every job is found by its id after growing");
    ok (table_find (&rt, base + 1) == NULL, "an id never inserted: NULL");

    for (int i = 0; i < N; i += 2)
        table_remove (jobs[i]);
    isint (rt.jobs->njobs, N / 2, "table_remove counts down");
    wrong = 0;
    for (int i = 0; i < N; i++) {
        struct job *want = i % 2 ? jobs[i] : NULL;
        if (table_find (&rt, jobs[i]->id) != want
            || jobs[i]->in_table != (want != NULL))
            wrong++;
    }
    isint (wrong, 0, "removed jobs are gone, the others still found");
    table_remove (jobs[0]);
    isint (rt.jobs->njobs, N / 2, "removing a job not in the table is a no-op");
    for (int i = 0; i < N; i += 2)
        job_decref (jobs[i]);

    /* job_forget: out of the table, the table's reference dropped */
    job_incref (jobs[1]);
    job_forget (jobs[1]);
    ok (table_find (&rt, jobs[1]->id) == NULL && jobs[1]->refcount == 1,
        "job_forget removes the job and drops one reference");
    job_decref (jobs[1]);

    jobs_free_all (&rt);
    ok (rt.jobs->buckets == NULL && rt.jobs->nbuckets == 0 && rt.jobs->njobs == 0,
        "jobs_free_all empties the table");
    ok (table_find (&rt, base + 3 * 4096) == NULL,
        "a job freed with the table is not found");
}

static void test_bound_and_snapshot (void)
{
    struct job *bound[3], *prov[2];
    struct job **v;
    int n = -1, seen = 0;

    for (int i = 0; i < 3; i++) {
        bound[i] = job_with_id (100 + i, FLUX_JOB_STATE_SCHED);
        table_insert (bound[i]);
    }
    for (int i = 0; i < 2; i++) {
        prov[i] = job_with_id (JOBTAP_PROVISIONAL_ID_BIT | (i + 1),
                               FLUX_JOB_STATE_NEW);
        prov[i]->token = i + 1;
        table_insert (prov[i]);
    }
    ok (table_find_bound (&rt, 101) == bound[1],
        "table_find_bound finds a bound job");
    errno = 0;
    ok (table_find_bound (&rt, JOBTAP_PROVISIONAL_ID_BIT | 1) == NULL
            && errno == ENOENT,
        "table_find_bound: a provisional job is ENOENT");
    ok (table_find (&rt, JOBTAP_PROVISIONAL_ID_BIT | 1) == prov[0],
        "table_find still finds the provisional job");
    errno = 0;
    ok (table_find_bound (&rt, 999) == NULL && errno == ENOENT,
        "table_find_bound: an unknown id is ENOENT");

    v = table_snapshot (&rt, &n, false);
    isint (n, 3, "a snapshot without provisional jobs holds the 3 bound");
    for (int i = 0; i < n; i++)
        for (int j = 0; j < 3; j++)
            if (v[i] == bound[j])
                seen |= 1 << j;
    isint (seen, 7, "each bound job is in it once");
    isint (bound[0]->refcount, 2, "the snapshot holds a reference");
    ok (v[n] == NULL, "the snapshot is NULL-terminated");
    snapshot_free (v, n);
    isint (bound[0]->refcount, 1, "snapshot_free drops it");

    size_t nids = 0;
    flux_jobid_t *ids = table_bound_ids (&rt, &nids), sum = 0;
    isint (nids, 3, "table_bound_ids lists the 3 bound jobs");
    for (size_t i = 0; i < nids; i++)
        sum += ids[i];
    isint (sum, 100 + 101 + 102, "by their ids, each once");
    isint (bound[0]->refcount, 1, "holding no reference");
    free (ids);

    v = table_snapshot (&rt, &n, true);
    isint (n, 5, "a snapshot with provisional jobs holds all 5");
    isint (prov[1]->refcount, 2, "provisional jobs are held too");
    snapshot_free (v, n);
    isint (prov[1]->refcount, 1, "and released");
    jobs_free_all (&rt);
}

static void test_fifo (void)
{
    struct job *a = job_with_id (1, 1), *b = job_with_id (2, 1),
               *c = job_with_id (3, 1);
    struct job_fifo *q = &rt.jobs->fifo[FIFO_PROV];

    fifo_push (rt.jobs->fifo, FIFO_PROV, a);
    fifo_push (rt.jobs->fifo, FIFO_PROV, b);
    fifo_push (rt.jobs->fifo, FIFO_PROV, c);
    ok (q->head == a && q->tail == c && q->count == 3,
        "push appends: head a, tail c, 3 jobs");
    ok (a->link[FIFO_PROV].next == b && b->link[FIFO_PROV].next == c
            && c->link[FIFO_PROV].prev == b && !a->link[FIFO_PROV].prev,
        "the links run a, b, c");
    fifo_push (rt.jobs->fifo, FIFO_PROV, a);
    ok (q->count == 3 && q->head == a && q->tail == c,
        "pushing a job already in is a no-op");
    ok (rt.jobs->fifo[FIFO_REST].count == 0 && !a->link[FIFO_REST].linked,
        "the other FIFO is untouched");
    fifo_unlink (rt.jobs->fifo, FIFO_PROV, b);
    ok (q->count == 2 && a->link[FIFO_PROV].next == c
            && c->link[FIFO_PROV].prev == a && !b->link[FIFO_PROV].linked,
        "unlinking the middle joins its neighbours");
    fifo_unlink (rt.jobs->fifo, FIFO_PROV, b);
    isint (q->count, 2, "unlinking a job not in is a no-op");
    fifo_unlink (rt.jobs->fifo, FIFO_PROV, a);
    ok (q->head == c && q->tail == c && q->count == 1,
        "unlinking the head makes the next one head");
    fifo_push (rt.jobs->fifo, FIFO_PROV, b);
    fifo_push (rt.jobs->fifo, FIFO_REST, b);
    ok (q->head == c && q->tail == b && rt.jobs->fifo[FIFO_REST].head == b,
        "a job is in both FIFOs at once");
    job_decref (b);
    ok (q->head == c && q->tail == c && q->count == 1
            && rt.jobs->fifo[FIFO_REST].count == 0 && !rt.jobs->fifo[FIFO_REST].head,
        "freeing a job takes it out of every FIFO");
    job_decref (c);
    ok (q->head == NULL && q->tail == NULL && q->count == 0,
        "the FIFO is empty");
    job_decref (a);
}

static void test_aux (void)
{
    struct jt_plugin *jt = core_plugin_make (&rt, "aux-plugin");
    struct jt_plugin *other = core_plugin_make (&rt, "other");
    struct job *active = job_with_id (10, FLUX_JOB_STATE_RUN);
    struct job *inactive = job_with_id (11, FLUX_JOB_STATE_INACTIVE);
    struct job *unbound = job_with_id (JOBTAP_PROVISIONAL_ID_BIT | 7,
                                       FLUX_JOB_STATE_NEW);
    struct job_aux *a;
    struct aux_item *abandoned;

    table_insert (active);
    table_insert (inactive);
    unbound->token = 7;

    ok (flux_jobtap_job_aux_set (jt->p, 10, "k", strdup ("active"),
                                 aux_destructor) == 0,
        "flux_jobtap_job_aux_set on a job in the table");
    ok (flux_jobtap_job_aux_set (jt->p, 11, "k", strdup ("inactive"),
                                 aux_destructor) == 0,
        "and on an inactive one");
    ok (flux_jobtap_job_aux_set (other->p, 10, "k", strdup ("other's"),
                                 aux_destructor) == 0,
        "another plugin sets the same key on the same job");
    errno = 0;
    ok (flux_jobtap_job_aux_set (jt->p, 12, "k", "x", NULL) < 0
            && errno == ENOENT,
        "aux_set on an unknown job: ENOENT");
    is (flux_jobtap_job_aux_get (jt->p, 10, "k"), "active",
        "each plugin reads its own value");
    is (flux_jobtap_job_aux_get (other->p, 10, "k"), "other's",
        "...the other one too");
    a = job_aux_find (active, jt);
    ok (a && a->plugin == jt && aux_get (a->items, "k")
            && !strcmp (aux_get (a->items, "k"), "active"),
        "job_aux_find gives the plugin's entry");
    ok (job_aux_find (unbound, jt) == NULL, "no entry on another job");

    /* a job on the current-job stack, not in the table */
    stack_push (unbound);
    ok (flux_jobtap_job_aux_set (jt->p, FLUX_JOBTAP_CURRENT_JOB, "k",
                                 strdup ("current"), aux_destructor) == 0,
        "aux_set on the current job");

    destroyed = 0;
    job_aux_plugin_gone (&rt, jt);
    dispatch_stack_aux_gone (&rt, jt); /* as loader.c does on removal */
    isint (destroyed, 2, "plugin gone: the active job's and the current "
           "job's aux destroyed, the inactive one's not");
    ok (job_aux_find (active, jt) == NULL, "the active job has no entry");
    is (flux_jobtap_job_aux_get (other->p, 10, "k"), "other's",
        "another plugin's aux on the same job stays");
    a = job_aux_find (inactive, NULL);
    ok (a && a->items && job_aux_find (inactive, jt) == NULL,
        "the inactive job's entry is abandoned (plugin NULL, items kept)");
    a = job_aux_find (unbound, NULL);
    ok (a && a->items == NULL, "the current job's entry is emptied");
    stack_pop (&rt);

    /* freeing a job with abandoned items only logs: the plugin's code
     * that would free them may be gone */
    abandoned = job_aux_find (inactive, NULL)->items;
    destroyed = 0;
    json_array_clear (logged);
    job_forget (inactive);
    isint (destroyed, 0, "freeing the inactive job runs no destructor");
    isint (logged_like ("job 11: leaking job aux item(s) abandoned by "
                        "unloaded plugin"), 1,
           "and logs the abandoned items with the job id");
    aux_destroy (&abandoned); /* the test's code is still here */
    isint (destroyed, 1, "(the test frees them itself)");

    destroyed = 0;
    job_forget (active);
    isint (destroyed, 1, "freeing a job runs its remaining aux destructors");
    is (destroyed_what, "other's", "...the other plugin's");
    job_decref (unbound);

    jt_retire (&rt, other);
    jt_retire (&rt, jt);
    ok (rt.plugins == NULL, "plugins retired");
}

static int sub_count (struct job *job)
{
    int n = 0;
    for (struct sub *s = job->subs; s; s = s->next)
        n++;
    return n;
}

static void sub_add (struct job *job, struct jt_plugin *jt)
{
    struct sub *s = calloc (1, sizeof (*s));
    struct sub **sp;

    s->plugin = jt;
    for (sp = &job->subs; *sp; sp = &(*sp)->next)
        ;
    *sp = s;
}

static void test_subs (void)
{
    struct jt_plugin *a = core_plugin_make (&rt, "a"),
                     *b = core_plugin_make (&rt, "b");
    struct job *job = job_with_id (20, FLUX_JOB_STATE_SCHED);

    sub_add (job, a);
    sub_add (job, b);
    sub_add (job, a);
    job->busy = true;
    subs_remove (job, a);
    isint (sub_count (job), 3, "subs_remove while busy frees nothing");
    ok (job->subs->plugin == NULL && job->subs->next->plugin == b
            && job->subs->next->next->plugin == NULL,
        "...it marks a's entries (plugin NULL), b's stays");
    job->busy = false;
    subs_reap (job);
    isint (sub_count (job), 1, "subs_reap frees the marked entries");
    ok (job->subs->plugin == b, "b's subscription is what is left");
    subs_reap (job);
    isint (sub_count (job), 1, "subs_reap with nothing marked: no change");

    sub_add (job, a);
    subs_remove (job, a);
    ok (sub_count (job) == 1 && job->subs->plugin == b,
        "subs_remove when not busy frees at once");

    sub_add (job, a);
    job->busy = true;
    subs_clear (job);
    ok (sub_count (job) == 2 && !job->subs->plugin
            && !job->subs->next->plugin,
        "subs_clear while busy marks every entry");
    job->busy = false;
    subs_reap (job);
    isint (sub_count (job), 0, "and subs_reap frees them");
    sub_add (job, a);
    sub_add (job, b);
    subs_clear (job);
    ok (job->subs == NULL, "subs_clear when not busy frees all");
    sub_add (job, b);
    job_decref (job); /* frees the entry left: valgrind checks */

    jt_retire (&rt, a);
    jt_retire (&rt, b);
}

static void test_queue_has (void)
{
    struct job *job = job_with_id (30, FLUX_JOB_STATE_DEPEND);
    struct qentry *q = calloc (1, sizeof (*q));

    ok (!queue_has (job, 13), "queue_has on an empty queue: false");
    q->ev.kind = 13;
    q->ev.name_copy = strdup ("dependency-add");
    q->ev.name = q->ev.name_copy;
    q->ev.context = json_pack ("{s:s}", "description", "d");
    job->queue = job->queue_tail = q;
    ok (queue_has (job, 13), "queue_has finds a queued event's kind");
    ok (!queue_has (job, 4), "and not another kind");
    job_decref (job); /* frees the queued event: valgrind checks */
}

/* Entries of deferred events are kept for the next, up to a few. */
static void test_qentry_spares (void)
{
    struct qentry *q[20];

    for (int i = 0; i < 20; i++)
        q[i] = qentry_new (&rt);
    isint (rt.jobs->n_spare_queue, 0, "new entries take the spares first");
    qentry_free (&rt, q[0]);
    ok (rt.jobs->spare_queue == q[0] && rt.jobs->n_spare_queue == 1,
        "an entry freed is kept");
    ok (qentry_new (&rt) == q[0] && rt.jobs->n_spare_queue == 0,
        "and is the next one given");
    for (int i = 0; i < 20; i++)
        qentry_free (&rt, q[i]);
    isint (rt.jobs->n_spare_queue, 16, "past 16 kept, the rest are freed");
    qentry_free (&rt, NULL);
    isint (rt.jobs->n_spare_queue, 16, "freeing NULL keeps nothing");
}

int main (void)
{
    core_runtime_init (&rt, NULL);
    logged = json_array ();
    runtime_log_sink (log_sink, NULL);

    test_refcounts ();
    test_table ();
    test_bound_and_snapshot ();
    test_fifo ();
    test_aux ();
    test_subs ();
    test_queue_has ();
    test_qentry_spares ();

    core_runtime_fini (&rt);
    runtime_log_sink (NULL, NULL);
    json_decref (logged);
    done_testing ();
}
