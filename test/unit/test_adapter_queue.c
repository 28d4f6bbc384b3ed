/* The adapter's action queue (src/slurm_adapter/queue.c): hand-over to
 * the agent, its wake-ups and its count of unbound submissions. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "queue.h"
#include "tap.h"

static double now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_push_take (void)
{
    struct queue q = QUEUE_INIT;
    struct queue_batch b;
    char text[] = "jobtap: reason";
    int polls = 1;

    ok (queue_push (&q, A_HOLD, 7, 0, text, sizeof (text)) == 0, "push a hold");
    text[0] = 'X';
    ok (queue_push (&q, A_PRIORITY, 8, 1234, NULL, 0) == 0, "push a priority");
    ok (queue_push (&q, A_CANCEL, 9, 0, "type\0note", 10) == 0,
        "push a cancel");
    ok (queue_wait (&q, &polls, &b), "wait takes what is pending");
    isint (polls, 1, "no poll is spent when work is pending");
    isint ((long long)b.n, 3, "three actions taken");
    ok (b.actions[0].kind == A_HOLD && b.actions[0].id == 7 &&
            !strcmp (b.actions[0].text, "jobtap: reason"),
        "the hold kept a copy of its reason");
    ok (b.actions[1].kind == A_PRIORITY && b.actions[1].id == 8 &&
            b.actions[1].priority == 1234 && b.actions[1].text == NULL,
        "the priority action, without text");
    ok (b.actions[2].kind == A_CANCEL && !strcmp (b.actions[2].text, "type") &&
            !strcmp (b.actions[2].text + 5, "note"),
        "the cancel keeps both of its strings");
    ok (!b.discover && !b.reprioritize, "no flags were asked for");
    queue_batch_free (&b);
    ok (b.actions == NULL && b.n == 0, "the batch is freed");

    ok (queue_wait (&q, &polls, &b) && b.n == 0, "the queue is empty after");
    isint (polls, 0, "an empty wait spends a poll");
    queue_batch_free (&b);
}

static void test_growth (void)
{
    struct queue q = QUEUE_INIT;
    struct queue_batch b;
    int polls = 0;
    int bad = 0;

    for (uint32_t i = 0; i < 1000; i++)
        if (queue_push (&q, A_RELEASE, i, 0, NULL, 0) < 0)
            bad++;
    ok (bad == 0, "1000 pushes");
    ok (queue_wait (&q, &polls, &b) && b.n == 1000, "1000 taken");
    for (uint32_t i = 0; i < b.n; i++)
        if (b.actions[i].id != i)
            bad++;
    ok (bad == 0, "in the order they were pushed");
    queue_batch_free (&b);
}

static void test_flags (void)
{
    struct queue q = QUEUE_INIT;
    struct queue_batch b;
    int polls = 0;

    queue_wake (&q, true, false);
    ok (queue_wait (&q, &polls, &b) && b.discover && !b.reprioritize,
        "a discovery wake");
    queue_wake (&q, false, true);
    ok (queue_wait (&q, &polls, &b) && !b.discover && b.reprioritize,
        "a reprioritize wake, the discovery flag cleared");
    polls = 3;
    double t0 = now ();
    ok (queue_wait (&q, &polls, &b) && !b.discover && !b.reprioritize,
        "flags are cleared once taken");
    ok (now () - t0 < 0.5, "a quick poll is short");
    isint (polls, 2, "and counted down");
}

static void test_unbound (void)
{
    struct queue q = QUEUE_INIT;
    struct queue_batch b;
    int polls = 0;

    queue_submitted (&q);
    queue_submitted (&q);
    ok (queue_wait (&q, &polls, &b) && b.discover, "submitted: discover");
    isint (queue_polls_after_pass (&q, true, 0), 100,
           "unbound submissions after a discovery: 100 quick polls");
    isint (queue_polls_after_pass (&q, false, 42), 42,
           "polls go on while some are unbound");
    queue_bound (&q);
    isint (queue_polls_after_pass (&q, true, 42), 100,
           "one still unbound after a discovery");
    queue_bound (&q);
    isint (queue_polls_after_pass (&q, true, 42), 0,
           "all bound: no more quick polls");
    isint (q.unbound, 0, "nothing unbound");

    queue_submitted (&q);
    isint (queue_polls_after_pass (&q, false, 0), 0,
           "out of polls with a job never bound: give up");
    isint (q.unbound, 0, "and forget it");
    queue_bound (&q);
    isint (queue_polls_after_pass (&q, false, 5), 0,
           "a count gone below zero is reset");
    isint (q.unbound, 0, "to zero");
}

static void *push_later (void *arg)
{
    struct timespec pause = {0, 20 * 1000 * 1000};
    nanosleep (&pause, NULL);
    queue_push (arg, A_RELEASE, 1, 0, NULL, 0);
    return NULL;
}

static void *stop_later (void *arg)
{
    struct timespec pause = {0, 20 * 1000 * 1000};
    nanosleep (&pause, NULL);
    queue_set_stop (arg, true);
    return NULL;
}

static void test_threads (void)
{
    struct queue q = QUEUE_INIT;
    struct queue_batch b;
    pthread_t t;
    int polls = 0;
    double t0;

    pthread_create (&t, NULL, push_later, &q);
    t0 = now ();
    ok (queue_wait (&q, &polls, &b) && b.n == 1,
        "a push from another thread is taken");
    ok (now () - t0 < 0.5, "it woke the waiting agent");
    pthread_join (t, NULL);
    queue_batch_free (&b);

    ok (!queue_stopping (&q), "not stopping");
    pthread_create (&t, NULL, stop_later, &q);
    t0 = now ();
    ok (!queue_wait (&q, &polls, &b), "a stop ends the wait");
    ok (now () - t0 < 0.5, "at once");
    pthread_join (t, NULL);
    ok (queue_stopping (&q), "stopping");
    queue_push (&q, A_RELEASE, 1, 0, NULL, 0);
    ok (!queue_wait (&q, &polls, &b), "nothing is taken while stopping");
    queue_set_stop (&q, false);
    ok (queue_wait (&q, &polls, &b) && b.n == 1, "restarted, it is taken");
    queue_batch_free (&b);
}

/* Wait until something is taken (a wait may end early: the agent just
 * waits again), for at most 'max' seconds. */
static bool wait_some (struct queue *q, struct queue_batch *b, double max)
{
    int polls = 0;
    double t0 = now ();

    do {
        if (!queue_wait (q, &polls, b))
            return false;
        if (b->n > 0)
            return true;
        queue_batch_free (b);
    } while (now () - t0 < max);
    return false;
}

static void test_later (void)
{
    struct queue q = QUEUE_INIT;
    struct queue_batch b;
    char text[] = "lifecycle.so\0{\"k\":1}";
    struct action a = {.kind = A_JOBSPEC_UPDATE, .id = 5, .text = text,
                       .len = sizeof (text)};
    double t0;

    ok (queue_push_later (&q, &a, 200) == 0, "an update to try again in 200 ms");
    a.id = 6;
    /* from before the push: under valgrind the pushes and checks take
     * some of the 100 ms */
    t0 = now ();
    ok (queue_push_later (&q, &a, 100) == 0, "another, due sooner");
    a.id = 5;
    ok (queue_push_later (&q, &a, 200) == 0, "a newer one for job 5");
    ok (queue_has_later (&q, 5) && queue_has_later (&q, 6)
            && !queue_has_later (&q, 7),
        "the queue knows which jobs have one waiting");
    ok (wait_some (&q, &b, 5) && b.n == 1 && b.actions[0].id == 6,
        "the first to fall due is taken alone");
    double waited = now () - t0;
    ok (waited >= 0.09, "not before its delay (%.3f s)", waited);
    queue_batch_free (&b);
    /* then job 5's two, in one batch or two (each is due at its push) */
    size_t taken = 0, whole = 0;
    bool fives = true;
    char *texts[2] = {NULL, NULL};
    while (taken < 2 && wait_some (&q, &b, 5)) {
        for (size_t i = 0; i < b.n && taken < 2; i++, taken++) {
            struct action *x = &b.actions[i];
            fives &= x->id == 5;
            whole += x->tries == 1 && x->len == sizeof (text)
                     && memcmp (x->text, text, sizeof (text)) == 0;
            texts[taken] = x->text;
            x->text = NULL;
        }
        queue_batch_free (&b);
    }
    ok (taken == 2 && fives, "then both of job 5's");
    ok (whole == 2, "each a copy of its action, one try more, its text whole");
    ok (texts[0] && texts[1] && texts[0] != texts[1],
        "each with a text of its own");
    free (texts[0]);
    free (texts[1]);
    ok (!queue_has_later (&q, 5), "nothing waits any more");
    queue_push (&q, A_RELEASE, 1, 0, NULL, 0);
    a.id = 8;
    queue_push_later (&q, &a, 60000);
    ok (wait_some (&q, &b, 5) && b.n == 1 && b.actions[0].id == 1,
        "a push is taken at once, the later one left for its time");
    queue_batch_free (&b);
    free (q.later[0].a.text);
    free (q.later);
}

int main (void)
{
    test_push_take ();
    test_growth ();
    test_flags ();
    test_unbound ();
    test_threads ();
    test_later ();
    done_testing ();
    return 0;
}
