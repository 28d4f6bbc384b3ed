/* The action queue (queue.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "queue.h"

int queue_push (struct queue *q,
                enum action_kind kind,
                uint64_t id,
                int64_t priority,
                const char *text,
                size_t len)
{
    struct action a = {.kind = kind, .id = id, .priority = priority};

    if (text) {
        if (!(a.text = malloc (len)))
            return -1;
        memcpy (a.text, text, len);
    }
    pthread_mutex_lock (&q->lock);
    if (q->len == q->size) {
        size_t n = q->size ? q->size * 2 : 64;
        struct action *actions = realloc (q->actions, n * sizeof (*actions));
        if (!actions) {
            pthread_mutex_unlock (&q->lock);
            free (a.text);
            errno = ENOMEM;
            return -1;
        }
        q->actions = actions;
        q->size = n;
    }
    q->actions[q->len++] = a;
    pthread_cond_signal (&q->cond);
    pthread_mutex_unlock (&q->lock);
    return 0;
}

void queue_wake (struct queue *q, bool discover, bool reprioritize)
{
    pthread_mutex_lock (&q->lock);
    q->discover |= discover;
    q->reprioritize |= reprioritize;
    pthread_cond_signal (&q->cond);
    pthread_mutex_unlock (&q->lock);
}

void queue_submitted (struct queue *q)
{
    pthread_mutex_lock (&q->lock);
    q->discover = true;
    q->unbound++;
    if (!q->polling)
        pthread_cond_signal (&q->cond);
    pthread_mutex_unlock (&q->lock);
}

void queue_bound (struct queue *q)
{
    pthread_mutex_lock (&q->lock);
    q->unbound--;
    pthread_mutex_unlock (&q->lock);
}

void queue_set_stop (struct queue *q, bool stop)
{
    pthread_mutex_lock (&q->lock);
    q->stop = stop;
    pthread_cond_signal (&q->cond);
    pthread_mutex_unlock (&q->lock);
}

bool queue_stopping (struct queue *q)
{
    pthread_mutex_lock (&q->lock);
    bool stop = q->stop;
    pthread_mutex_unlock (&q->lock);
    return stop;
}

bool queue_wait (struct queue *q, int *polls, struct queue_batch *b)
{
    pthread_mutex_lock (&q->lock);
    if (!q->stop && q->len == 0 && !q->discover && !q->reprioritize) {
        struct timespec until;
        clock_gettime (CLOCK_REALTIME, &until);
        if (*polls > 0) {
            (*polls)--;
            until.tv_nsec += 5 * 1000 * 1000;
            if (until.tv_nsec >= 1000000000) {
                until.tv_sec++;
                until.tv_nsec -= 1000000000;
            }
        } else
            until.tv_sec += 1;
        q->polling = *polls > 0;
        pthread_cond_timedwait (&q->cond, &q->lock, &until);
        q->polling = false;
    }
    if (q->stop) {
        pthread_mutex_unlock (&q->lock);
        return false;
    }
    b->actions = q->actions;
    b->n = q->len;
    q->actions = NULL;
    q->len = q->size = 0;
    b->discover = q->discover;
    b->reprioritize = q->reprioritize;
    q->discover = q->reprioritize = false;
    pthread_mutex_unlock (&q->lock);
    return true;
}

int queue_polls_after_pass (struct queue *q, bool discovered, int polls)
{
    pthread_mutex_lock (&q->lock);
    if (q->unbound <= 0) {
        q->unbound = 0;
        polls = 0;
    } else if (discovered)
        polls = 100;
    else if (polls == 0)
        q->unbound = 0;
    pthread_mutex_unlock (&q->lock);
    return polls;
}

void queue_batch_free (struct queue_batch *b)
{
    for (size_t i = 0; i < b->n; i++)
        free (b->actions[i].text);
    free (b->actions);
    b->actions = NULL;
    b->n = 0;
}
