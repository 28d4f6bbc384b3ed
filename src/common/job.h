/* Jobs as the runtime keeps them: struct job and its per-job data (the
 * events waiting to be applied, job aux per plugin, subscribers), the job
 * table (by id, growing with the number of jobs), the runtime's FIFOs
 * of jobs and the ring of jobs whose jobspec tree is kept (spec.c decides
 * who enters it).  A job is refcounted and knows its runtime (job->rt).
 * Called by every module that handles jobs; calls aux.c, log.c and the
 * strbuf.c only. */
#ifndef JOBTAP_JOB_H
#define JOBTAP_JOB_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>
#include <flux/jobtap.h>

#include "slab.h"

struct runtime;
struct jt_plugin;
struct aux_item;
struct strbuf;

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

/* A jobspec as a jansson tree costs ~6 KiB, as compact text ~0.5 KiB: the
 * trees of the SPEC_HOT jobs whose jobspec was most recently parsed or
 * updated stay (spec.c), the others keep only the text. */
#define SPEC_HOT 256

/* The runtime's jobs (rt->jobs), written by job.c only. */
struct job_table {
    struct job **buckets;        /* by id, grows with the jobs */
    size_t nbuckets, njobs;
    struct job_fifo fifo[NFIFO];
    struct job *hot[SPEC_HOT];   /* jobs whose jobspec tree is kept */
    int hot_next;                /* the slot the next one takes */
    struct qentry *spare_queue;  /* qentry_new's, for the next */
    int n_spare_queue;
    struct slab slab;            /* the jobs' blocks */
};

/* The shapes of the contexts events carry as numbers. */
enum event_numbers {
    NUMBERS_NONE = 0,
    NUMBERS_SUBMIT,   /* {userid, urgency[, flags]} */
    NUMBERS_PRIORITY, /* {priority} */
};

/* An event on its way through event_post.  Its eventlog entry
 * {timestamp, name[, context]} is built only when something reads it
 * (eventlog, subscribers, state callbacks, end_event, the host's event
 * hook): most events of most jobs are never looked at. */
struct event {
    int kind;            /* EV_* (state.h), or -1 for other names */
    const char *name;    /* the known name, else name_copy or borrowed */
    char *name_copy;     /* owned copy while queued */
    json_t *context;     /* held; may be NULL */
    double timestamp;
    json_t *entry;       /* held once built (event_entry_of) */
    bool from_host;      /* posted by the scheduler, not by a plugin */
    /* A context of numbers not made JSON yet: every job posts a submit
     * {userid, urgency[, flags]} and a priority {priority}, and nearly
     * nobody reads them (event_context_of makes them when read). */
    enum event_numbers numbers_of;
    int64_t numbers[3]; /* submit: userid, urgency, flags (-1: none);
                           priority: priority */
};

struct qentry {
    struct event ev;
    struct qentry *next;
};

struct job_aux {
    struct jt_plugin *plugin; /* NULL once the plugin is unloaded */
    struct aux_item *items;
    struct job_aux *next;
};

struct sub {
    struct jt_plugin *plugin; /* NULL: unsubscribed while walked */
    struct sub *next;
};

/* Per-job state.  Containers most jobs never need stay NULL until first
 * used: a pending job's memory is what the scale of a site's queue
 * multiplies (docs/performance.md). */
struct job {
    struct runtime *rt;
    flux_jobid_t id;
    uint64_t token;           /* != 0 while provisional */
    double t_created;
    struct job_link link[NFIFO]; /* membership of the runtime's FIFOs */
    uint32_t userid;
    int urgency;
    int64_t priority;
    double t_submit;
    int state;
    uint32_t spec_source_len;
    json_t *jobspec;          /* tree, or NULL while compacted (job_jobspec) */
    char *jobspec_text;       /* compact text; NULL if the tree changed since */
    void *spec_source;        /* spec.c: the host's recipe for the jobspec
                                 (jobtap_host_submit_from_source,
                                 jobtap_host_job_source), if any */
    json_t *spec_live;        /* spec.c: spec_replay's updates as objects
                                 while the job is not at rest, so a tree
                                 made during submission parses none (the
                                 one update, or an array of them) */
    struct strbuf *spec_replay; /* spec.c: the updates applied since the
                                   jobspec was given, compact JSON one
                                   after another */
    const json_t *spec_replay_last_of; /* spec.c: the update being applied,
                                   if listed, its text in spec_replay from
                                   spec_replay_last on (the store writes
                                   the event's context from it) */
    size_t spec_replay_last;
    int hot_slot;             /* 1 + index in the hot ring, 0 if not there */
    bool spec_resting;        /* past job.new: trees are kept in the ring */
    bool spec_unreplayable;   /* spec_replay misses an update made since
                                 the jobspec was given (spec.c) */
    json_t *eventlog;         /* only if the host keeps eventlogs */
    struct strbuf *store_pending; /* store.c: entries while provisional */
    bool store_started;       /* store.c: its history is being kept */
    json_t *end_event;
    json_t *R;
    json_t *annotations;
    json_t *deps;             /* description -> true, insertion order */
    json_t *grudge;           /* every description ever added */
    json_t *flags;            /* array of set flags */
    uint32_t posted;          /* bit per known event name posted */
    json_t *posted_other;     /* other event names -> true */
    json_t *pending_updates;  /* jobspec_update_pack, flushed per plugin */
    json_t *all_updates;      /* every applied update (submit result) */
    struct qentry *queue, *queue_tail; /* events waiting while busy */
    struct job_aux *aux;
    struct sub *subs;
    bool busy;                /* its events are being applied */
    bool host_event;          /* the next event posted comes from the
                                 scheduler (events its callbacks post
                                 do not) */
    bool quiet_update;        /* don't notify jobspec_update */
    struct jt_plugin *update_origin; /* whose updates are being flushed */
    char *hold_reason;        /* what we told ops->hold, NULL if not held */
    int64_t reported_priority;
    bool reported_urgency_hold; /* what we told ops->urgency_hold */
    int perilog_active;
    int perilog_wait;         /* PERILOG_WAIT_*: the host waits for them */
    int prolog_status;        /* the first failing prolog-finish status */
    char *prolog_note;        /* and what it says, for the host */
    int refcount;
    bool in_table;
    struct job *hnext;        /* hash chain */
};

/* What the host waits for (perilog.c). */
enum { PERILOG_WAIT_NONE, PERILOG_WAIT_PROLOG, PERILOG_WAIT_EPILOG };

/* A job of rt in state NEW (jobspec NULL: an empty one), not in the
 * table; refcount 1.  NULL with errno ENOMEM.  job_create_bare: with no
 * jobspec at all, for a caller that gives it its source at once. */
struct job *job_create_bare (struct runtime *rt,
                             uint32_t userid,
                             int urgency,
                             double t_submit);
struct job *job_create (struct runtime *rt,
                        json_t *jobspec,
                        uint32_t userid,
                        int urgency,
                        double t_submit);
void job_decref (struct job *job);

static inline struct job *job_incref (struct job *job)
{
    if (job)
        job->refcount++;
    return job;
}

/* Bound: the job has its scheduler id (no longer a provisional submit). */
static inline bool job_is_bound (struct job *job)
{
    return job->token == 0;
}

/* A container member created on first use; NULL if out of memory. */
static inline json_t *lazy_object (json_t **slot)
{
    if (!*slot)
        *slot = json_object ();
    return *slot;
}

static inline json_t *lazy_array (json_t **slot)
{
    if (!*slot)
        *slot = json_array ();
    return *slot;
}

void event_release (struct event *ev);
/* The submit event's context {userid, urgency[, flags]}, or NULL if out
 * of memory; flags may be NULL. */
json_t *submit_context (uint32_t userid, int urgency, const int *flags);
/* The event's context (borrowed; may be NULL), one of numbers made on
 * first use. */
json_t *event_context_of (struct event *ev);
/* The event's eventlog entry, built on first use (borrowed; NULL if out
 * of memory). */
json_t *event_entry_of (struct event *ev);
/* Whether an event of this kind waits in the job's queue. */
bool queue_has (struct job *job, int kind);

/* The table: lookup by id, insert (the job's id set), remove, and all
 * jobs with a reference each (include_provisional: unbound ones too),
 * freed by snapshot_free. */
struct job *table_find (struct runtime *rt, flux_jobid_t id);
/* A job the scheduler knows by id (not a provisional one), or NULL with
 * errno ENOENT. */
struct job *table_find_bound (struct runtime *rt, flux_jobid_t id);
void table_insert (struct job *job);
void table_remove (struct job *job);
struct job **table_snapshot (struct runtime *rt,
                             int *countp,
                             bool include_provisional);
void snapshot_free (struct job **v, int n);
/* The ids of the bound jobs (no references taken): malloc'd, *countp of
 * them; NULL with ENOMEM. */
flux_jobid_t *table_bound_ids (struct runtime *rt, size_t *countp);
/* Remove from the table and drop the table's reference (the caller
 * forgets it in the store first: store_forget). */
void job_forget (struct job *job);
/* Drop every job (runtime fini): the table is empty again.  A zeroed
 * struct job_table is an empty one. */
void jobs_free_all (struct runtime *rt);

/* An entry of a job's queue of deferred events (every submission defers
 * two: depend and priority), from a few kept for the next; NULL if out
 * of memory.  qentry_free keeps it, or frees it past the few. */
struct qentry *qentry_new (struct runtime *rt);
void qentry_free (struct runtime *rt, struct qentry *q);

/* The hot ring: the job whose slot the next job_hot_enter takes (its
 * tree is then to be compacted: job_hot_leave), or NULL; enter (no-op if
 * in); leave (no-op if not in; also when the job is freed). */
struct job *job_hot_next_victim (struct runtime *rt);
void job_hot_enter (struct job *job);
void job_hot_leave (struct job *job);

/* The jobspec a job keeps of the caller's: the object itself, or a copy
 * without attributes.system.environment, which plugins never see (Flux
 * redacts it too).  New reference. */
json_t *jobspec_redacted (json_t *jobspec);

/* Append to / take out of fifos[f] (no-ops if already in / not in). */
static inline void fifo_push (struct job_fifo *fifos, int f, struct job *job)
{
    struct job_fifo *q = &fifos[f];
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

static inline void fifo_unlink (struct job_fifo *fifos, int f, struct job *job)
{
    struct job_fifo *q = &fifos[f];
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

/* Merge a plugin's OUT annotations into the job's (a null value deletes
 * its key, an object updates an object), as Flux does; also when a
 * restart replays an annotations event. */
void job_annotations_merge (struct job *job, json_t *annotations);

struct job_aux *job_aux_find (struct job *job, struct jt_plugin *jt);
void job_aux_destroy_all (struct job *job);
/* A plugin is going: its aux is destroyed on active jobs and abandoned
 * on inactive ones, its subscriptions end. */
void job_aux_plugin_gone (struct runtime *rt, struct jt_plugin *jt);

/* Drop jt's subscriptions to job (subs_clear: all of them).  While the
 * job is busy its events' subscriber walk may be on an entry, so entries
 * are only marked then, and subs_reap frees them once it is done. */
void subs_remove (struct job *job, struct jt_plugin *jt);
void subs_clear (struct job *job);
void subs_reap (struct job *job);

#endif
