/* The action queue (queue.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "queue.h"

static bool timespec_before (const struct timespec *a, const struct timespec *b)
{
    return a->tv_sec < b->tv_sec
           || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

static void timespec_add_ms (struct timespec *t, long ms)
{
    t->tv_sec += ms / 1000;
    t->tv_nsec += (ms % 1000) * 1000000;
    if (t->tv_nsec >= 1000000000) {
        t->tv_sec++;
        t->tv_nsec -= 1000000000;
    }
}

/* v, an array of *size elements of 'elem' bytes, with room for 'need'
 * (doubling from 'first'): v itself, or where it moved (*size updated),
 * or NULL with v unchanged. */
static void *with_room (void *v, size_t *size, size_t need, size_t first,
                        size_t elem)
{
    size_t n = *size ? *size : first;
    void *grown;

    if (need <= *size)
        return v;
    while (n < need)
        n *= 2;
    if (!(grown = realloc (v, n * elem))) {
        errno = ENOMEM;
        return NULL;
    }
    *size = n;
    return grown;
}

int queue_push (struct queue *q,
                enum action_kind kind,
                uint64_t id,
                int64_t priority,
                const char *text,
                size_t len)
{
    struct action a = {.kind = kind, .id = id, .priority = priority,
                       .len = text ? len : 0};

    if (text) {
        if (!(a.text = malloc (len)))
            return -1;
        memcpy (a.text, text, len);
    }
    pthread_mutex_lock (&q->lock);
    struct action *actions = with_room (q->actions, &q->size, q->len + 1, 64,
                                        sizeof (*actions));
    if (!actions) {
        pthread_mutex_unlock (&q->lock);
        free (a.text);
        return -1;
    }
    q->actions = actions;
    q->actions[q->len++] = a;
    pthread_cond_signal (&q->cond);
    pthread_mutex_unlock (&q->lock);
    return 0;
}

int queue_push_later (struct queue *q, const struct action *a, int delay_ms)
{
    struct later_action l = {.a = *a};

    l.a.tries++;
    l.a.text = NULL;
    if (a->text) {
        if (!(l.a.text = malloc (a->len)))
            return -1;
        memcpy (l.a.text, a->text, a->len);
    }
    clock_gettime (CLOCK_REALTIME, &l.due);
    timespec_add_ms (&l.due, delay_ms);
    pthread_mutex_lock (&q->lock);
    struct later_action *later = with_room (q->later, &q->later_size,
                                            q->later_len + 1, 8,
                                            sizeof (*later));
    if (!later) {
        pthread_mutex_unlock (&q->lock);
        free (l.a.text);
        return -1;
    }
    q->later = later;
    /* in due order; equal delays keep the order they were queued in */
    size_t i = q->later_len;
    while (i > 0 && timespec_before (&l.due, &q->later[i - 1].due)) {
        q->later[i] = q->later[i - 1];
        i--;
    }
    q->later[i] = l;
    q->later_len++;
    pthread_mutex_unlock (&q->lock);
    return 0;
}

bool queue_has_later (struct queue *q, uint64_t id)
{
    bool found = false;

    pthread_mutex_lock (&q->lock);
    for (size_t i = 0; i < q->later_len && !found; i++)
        found = q->later[i].a.id == id;
    pthread_mutex_unlock (&q->lock);
    return found;
}

/* Move the actions due by now to the pending ones (q->lock held). What
 * cannot be moved for want of memory stays for the next wait. */
static void take_due (struct queue *q)
{
    struct timespec now;
    size_t n = 0;

    if (q->later_len == 0)
        return;
    clock_gettime (CLOCK_REALTIME, &now);
    while (n < q->later_len && !timespec_before (&now, &q->later[n].due))
        n++;
    if (n == 0)
        return;
    struct action *actions = with_room (q->actions, &q->size, q->len + n, 64,
                                        sizeof (*actions));
    if (!actions)
        return;
    q->actions = actions;
    for (size_t i = 0; i < n; i++)
        q->actions[q->len++] = q->later[i].a;
    memmove (q->later, q->later + n, (q->later_len - n) * sizeof (*q->later));
    q->later_len -= n;
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
    take_due (q);
    if (!q->stop && q->len == 0 && !q->discover && !q->reprioritize) {
        struct timespec until;
        clock_gettime (CLOCK_REALTIME, &until);
        if (*polls > 0) {
            (*polls)--;
            timespec_add_ms (&until, 5);
        } else
            until.tv_sec += 1;
        if (q->later_len > 0 && timespec_before (&q->later[0].due, &until))
            until = q->later[0].due;
        q->polling = *polls > 0;
        pthread_cond_timedwait (&q->cond, &q->lock, &until);
        q->polling = false;
        take_due (q);
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
