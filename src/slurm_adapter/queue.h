/* queue: the hand-over from every other thread to the agent. Actions the
 * runtime decided on a thread that may not touch job records wait here,
 * with the flags that ask the agent for a pass (discover new jobs,
 * reprioritize all) and the count of accepted submissions not yet bound.
 *
 * Callers: actions (push), post_update (push_later: Slurm said to try
 * again later), the hooks (wake, submitted), bind (bound), the
 * agent (wait, polls_after_pass) and the entry points (stop). Any thread.
 *
 * Locks: q->lock is a leaf: nothing else is taken while it is held. It is
 * taken under slurmctld locks and under the runtime's mutex (actions
 * queued from runtime callbacks), never the other way round.
 *
 * No Slurm types: an action names its job by its jobtap id (array_id.h),
 * or, before jobtap knows the job (A_PROLOG_RESTART), by its Slurm id. */
#ifndef SLURM_JOBTAP_ADAPTER_QUEUE_H
#define SLURM_JOBTAP_ADAPTER_QUEUE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

enum action_kind {
    A_HOLD,
    A_RELEASE,
    A_PRIORITY,
    A_CANCEL,
    A_URGENCY_HOLD, /* priority 1: hold as its user would; 0: lift that */
    A_JOBSPEC_UPDATE, /* a plugin's update: plugin NUL updates-json NUL */
    A_UPDATE_CHECK,   /* did Slurm make a user's accepted update: json NUL */
    A_PROLOG_RESTART, /* a prolog slurmctld re-ran as it started (hooks_prep) */
    A_PROLOG_DONE, /* jobtap's prologs of the job are done (hooks_prep) */
    A_EPILOG_DONE, /* and its epilogs */
    A_REQUEUED,    /* the job may have been requeued: bind it anew */
};

struct action {
    enum action_kind kind;
    uint64_t id;
    uint32_t slurm_id; /* A_PROLOG_DONE, A_EPILOG_DONE: the record's job id,
                        * found by the agent's locked pass for Slurm's
                        * callback after it */
    int64_t priority; /* A_PRIORITY; A_PROLOG_DONE: the status;
                       * A_EPILOG_DONE: 1 if Slurm waits for it (the
                       * agent's locked pass finds out) */
    char *text; /* A_HOLD: the reason; A_CANCEL: type NUL note NUL;
                 * A_PROLOG_DONE: why it failed (or NULL) */
    size_t len; /* of text */
    unsigned tries; /* times Slurm said to try again later */
};

/* An action to take again no sooner than 'due' (CLOCK_REALTIME). */
struct later_action {
    struct action a;
    struct timespec due;
};

struct queue {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct action *actions; /* malloc'd, as is each text */
    size_t len, size;
    struct later_action *later; /* due in order: taken as they fall due */
    size_t later_len, later_size;
    bool stop;         /* the agent is to exit */
    bool discover;     /* a job was accepted since the last pass */
    bool reprioritize; /* reprioritize_all requested */
    bool polling;      /* the agent is in a quick poll: no need to wake it */
    int unbound;       /* accepted submissions not bound yet */
};

#define QUEUE_INIT                                                             \
    {                                                                          \
        .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER,   \
    }

/* What the agent takes in one pass. */
struct queue_batch {
    struct action *actions;
    size_t n;
    bool discover, reprioritize;
};

/* Queue an action, copying len bytes of text (text may be NULL), and wake
 * the agent. -1 with nothing queued if memory runs out. */
int queue_push (struct queue *q,
                enum action_kind kind,
                uint64_t id,
                int64_t priority,
                const char *text,
                size_t len);

/* Queue a copy of action a again, one more try, to be taken no sooner
 * than delay_ms from now: Slurm asked to try again later. -1 with
 * nothing queued if memory runs out. */
int queue_push_later (struct queue *q, const struct action *a, int delay_ms);

/* Whether an action for job id waits to be tried again: a newer one for
 * the job must wait behind it, or the older would undo it. */
bool queue_has_later (struct queue *q, uint64_t id);

/* Wake the agent, asking for discovery and/or a reprioritize_all. */
void queue_wake (struct queue *q, bool discover, bool reprioritize);

/* job_submit accepted a job: the agent is to look for it. Between quick
 * polls the agent finds it within one poll anyway, so it is not woken
 * then: it would only wait for the submitter's locks, a pass per job. */
void queue_submitted (struct queue *q);

/* The agent bound the job of one accepted submission. */
void queue_bound (struct queue *q);

/* Set or clear the agent's stop flag (waking it). */
void queue_set_stop (struct queue *q, bool stop);
bool queue_stopping (struct queue *q);

/* The agent's wait: when nothing is pending, wait for a push or a wake,
 * 5 ms while *polls > 0 (counting one down), else up to 1 s or until the
 * first action to try again falls due. Then take everything pending, and
 * the actions due, into b. Returns false, taking nothing, when the agent
 * is to stop. */
bool queue_wait (struct queue *q, int *polls, struct queue_batch *b);

/* After a pass: how many quick polls the agent is to make next. While
 * accepted submissions wait to be bound, up to 100 polls (0.5 s) after the
 * last discovery request, after which the count is forgotten in case
 * slurmctld dropped a job that job_submit accepted. */
int queue_polls_after_pass (struct queue *q, bool discovered, int polls);

void queue_batch_free (struct queue_batch *b);

#endif
