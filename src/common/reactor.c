/* The runtime's reactor (reactor.h): its thread, its timers and whose
 * they are. */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>
#include <flux/core.h>

#include "flux_handle.h"
#include "host.h"
#include "jtplugin.h"
#include "log.h"
#include "reactor.h"
#include "runtime.h"

/* ppoll's longest sleep: a timer further out than this (about 31 years)
 * just wakes the thread once meanwhile. */
#define SLEEP_MAX 1e9

struct flux_watcher {
    flux_reactor_t *r;          /* NULL once destroyed or the reactor gone */
    struct jt_plugin *owner;    /* whose code made it; NULL: nobody's */
    flux_watcher_f cb;
    void *arg;
    double after, repeat;       /* seconds, as given at create or reset */
    double deadline;            /* monotonic seconds, while active */
    uint64_t seq;               /* when it was armed: ties fire in order */
    size_t slot;                /* its index in r->heap, while active */
    bool active;
    bool referenced;            /* flux_watcher_ref/unref: kept, no effect */
    bool orphaned;              /* its plugin was removed: never fires */
    bool kept;                  /* its creator frees it: never reaped */
    bool destroyed;             /* destroyed while its callback ran */
    int running;                /* its callback is running */
    struct flux_watcher *prev, *next; /* r->watchers */
};

struct flux_reactor {
    struct runtime *rt;
    flux_watcher_t *watchers;   /* all of them, newest first */
    int orphans;                /* orphaned, not kept, not yet freed */
    flux_watcher_t **heap;      /* the active timers, earliest on top */
    size_t heap_len, heap_size;
    uint64_t seq;               /* counts arms */
    double now_mono, now_wall;  /* the time of the thread's current turn */
    pthread_t thread;
    bool thread_started;
    bool stopping;
    int wake_fd;                /* eventfd: an earlier deadline, or stop */
    double sleep_until;         /* monotonic; -INFINITY while awake */
};

/* --- time ------------------------------------------------------------ */

static double clock_seconds (clockid_t id)
{
    struct timespec ts;
    clock_gettime (id, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static bool on_reactor_thread (flux_reactor_t *r)
{
    return r->thread_started && pthread_equal (pthread_self (), r->thread);
}

/* Callbacks see the time their loop turn began, as in a Flux reactor, so
 * timers started in one turn count from the same instant.  Every other
 * thread sees the time now: the thread's last turn may be long past. */
static double mono_now (flux_reactor_t *r)
{
    return on_reactor_thread (r) ? r->now_mono
                                 : clock_seconds (CLOCK_MONOTONIC);
}

static double wall_now (flux_reactor_t *r)
{
    return on_reactor_thread (r) ? r->now_wall
                                 : clock_seconds (CLOCK_REALTIME);
}

static void now_update (flux_reactor_t *r)
{
    r->now_mono = clock_seconds (CLOCK_MONOTONIC);
    r->now_wall = clock_seconds (CLOCK_REALTIME);
}

/* --- the heap of active timers --------------------------------------- */

static bool earlier (const flux_watcher_t *a, const flux_watcher_t *b)
{
    return a->deadline < b->deadline
           || (a->deadline == b->deadline && a->seq < b->seq);
}

static void heap_put (flux_reactor_t *r, size_t i, flux_watcher_t *w)
{
    r->heap[i] = w;
    w->slot = i;
}

static void heap_up (flux_reactor_t *r, size_t i)
{
    flux_watcher_t *w = r->heap[i];
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!earlier (w, r->heap[parent]))
            break;
        heap_put (r, i, r->heap[parent]);
        i = parent;
    }
    heap_put (r, i, w);
}

static void heap_down (flux_reactor_t *r, size_t i)
{
    flux_watcher_t *w = r->heap[i];
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= r->heap_len)
            break;
        if (child + 1 < r->heap_len
            && earlier (r->heap[child + 1], r->heap[child]))
            child++;
        if (!earlier (r->heap[child], w))
            break;
        heap_put (r, i, r->heap[child]);
        i = child;
    }
    heap_put (r, i, w);
}

static int heap_push (flux_reactor_t *r, flux_watcher_t *w)
{
    if (r->heap_len == r->heap_size) {
        size_t size = r->heap_size ? 2 * r->heap_size : 16;
        flux_watcher_t **heap = realloc (r->heap, size * sizeof (*heap));
        if (!heap)
            return -1;
        r->heap = heap;
        r->heap_size = size;
    }
    heap_put (r, r->heap_len++, w);
    heap_up (r, w->slot);
    return 0;
}

static void heap_remove (flux_reactor_t *r, flux_watcher_t *w)
{
    flux_watcher_t *last = r->heap[--r->heap_len];
    if (last != w) {
        heap_put (r, w->slot, last);
        heap_up (r, last->slot);
        heap_down (r, last->slot);
    }
}

/* --- the thread ------------------------------------------------------ */

static void wake (flux_reactor_t *r)
{
    uint64_t one = 1;
    if (r->thread_started && write (r->wake_fd, &one, sizeof (one)) < 0) {
        /* the counter is full: the thread has been woken already */
    }
    r->sleep_until = -INFINITY; /* no need to wake it twice */
}

/* Take w out of r->watchers (and of the orphans' count). */
static void list_remove (flux_reactor_t *r, flux_watcher_t *w)
{
    if (w->prev)
        w->prev->next = w->next;
    else
        r->watchers = w->next;
    if (w->next)
        w->next->prev = w->prev;
    w->prev = w->next = NULL;
    if (w->orphaned && !w->kept)
        r->orphans--;
}

static void disarm (flux_watcher_t *w)
{
    if (w->active) {
        heap_remove (w->r, w);
        w->active = false;
    }
}

static void *reactor_thread (void *arg);

static int thread_start (flux_reactor_t *r)
{
    sigset_t all, old;
    int e;

    if ((r->wake_fd = eventfd (0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0)
        return -1;
    /* slurmctld takes its signals on a thread of its own: never ours */
    sigfillset (&all);
    pthread_sigmask (SIG_SETMASK, &all, &old);
    e = pthread_create (&r->thread, NULL, reactor_thread, r);
    pthread_sigmask (SIG_SETMASK, &old, NULL);
    if (e) {
        close (r->wake_fd);
        r->wake_fd = -1;
        errno = e;
        return -1;
    }
    pthread_setname_np (r->thread, "jobtap-reactor");
    r->thread_started = true;
    return 0;
}

/* Make w due at 'deadline' (monotonic), whether it was active or not. */
static void arm (flux_watcher_t *w, double deadline)
{
    flux_reactor_t *r = w->r;

    disarm (w);
    w->deadline = deadline;
    w->seq = ++r->seq;
    if (heap_push (r, w) < 0) {
        runtime_log (LOG_ERR, "jobtap: cannot start a timer: out of memory");
        return;
    }
    w->active = true;
    if (!r->thread_started) {
        if (thread_start (r) < 0)
            runtime_log (LOG_ERR, "jobtap: cannot start the reactor thread "
                         "(timers wait for the next start): %s",
                         strerror (errno));
    }
    else if (deadline < r->sleep_until)
        wake (r);
}

/* Run w's callback as its plugin's code. */
static void watcher_call (flux_reactor_t *r, flux_watcher_t *w)
{
    struct jt_plugin *prev = jt_enter (r->rt, w->owner);

    w->running++;
    w->cb (r, w, 0, w->arg);
    if (--w->running == 0 && w->destroyed)
        free (w);
    /* may destroy a plugin removed meanwhile: reap frees its leftovers */
    jt_leave (r->rt, prev);
}

/* Run the timers due at the start of this turn, earliest first.  Those
 * armed meanwhile (a repeat, a start from a callback) wait for the next
 * turn, as in libev, so a callback restarting its own zero timer cannot
 * keep the thread here. */
static void run_expired (flux_reactor_t *r)
{
    uint64_t last = r->seq;

    while (r->heap_len > 0 && !r->stopping) {
        flux_watcher_t *w = r->heap[0];
        if (w->deadline > r->now_mono || w->seq > last)
            break;
        if (w->repeat > 0.) {
            double next = w->deadline + w->repeat;
            arm (w, next > r->now_mono ? next : r->now_mono);
        }
        else
            disarm (w);
        watcher_call (r, w);
    }
}

static void reap (flux_reactor_t *r)
{
    flux_watcher_t *w, *next;

    if (r->orphans == 0 || r->rt->retired)
        return;
    for (w = r->watchers; w; w = next) {
        next = w->next;
        if (w->orphaned && !w->kept && !w->running) {
            list_remove (r, w);
            free (w);
        }
    }
}

static struct timespec *sleep_time (flux_reactor_t *r, struct timespec *ts)
{
    double d;

    if (r->heap_len == 0 || isinf (r->heap[0]->deadline))
        return NULL;
    d = r->heap[0]->deadline - r->now_mono;
    if (d < 0.)
        d = 0.;
    else if (d > SLEEP_MAX)
        d = SLEEP_MAX;
    ts->tv_sec = (time_t)d;
    ts->tv_nsec = (long)ceil ((d - (double)ts->tv_sec) * 1e9);
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
    return ts;
}

/* Sleep without the lock; run what is due with it. */
static void *reactor_thread (void *arg)
{
    flux_reactor_t *r = arg;
    struct pollfd pfd = { .fd = r->wake_fd, .events = POLLIN };

    runtime_lock ();
    while (!r->stopping) {
        struct timespec ts, *timeout;
        uint64_t count;

        now_update (r);
        reap (r);
        run_expired (r);
        if (r->stopping)
            break;
        timeout = sleep_time (r, &ts);
        r->sleep_until = timeout ? r->heap[0]->deadline : INFINITY;
        runtime_unlock ();
        if (ppoll (&pfd, 1, timeout, NULL) > 0
            && read (r->wake_fd, &count, sizeof (count)) < 0) {
            /* EAGAIN: someone else's wakeup was read already */
        }
        runtime_lock ();
        r->sleep_until = -INFINITY;
    }
    runtime_unlock ();
    return NULL;
}

/* --- the runtime's side (reactor.h) ---------------------------------- */

flux_reactor_t *reactor_get (struct runtime *rt)
{
    flux_reactor_t *r = rt->reactor;

    if (!r) {
        if (!(r = calloc (1, sizeof (*r)))) {
            errno = ENOMEM;
            return NULL;
        }
        r->rt = rt;
        r->wake_fd = -1;
        r->sleep_until = -INFINITY;
        now_update (r);
        rt->reactor = r;
    }
    return r;
}

void reactor_plugin_gone (struct runtime *rt, struct jt_plugin *jt)
{
    flux_reactor_t *r = rt->reactor;

    if (!r || !jt)
        return;
    for (flux_watcher_t *w = r->watchers; w; w = w->next) {
        if (w->owner == jt) {
            disarm (w);
            w->owner = NULL;
            w->orphaned = true;
            if (!w->kept)
                r->orphans++;
        }
    }
}

void reactor_reap (struct runtime *rt)
{
    if (rt->reactor)
        reap (rt->reactor);
}

struct jt_plugin *reactor_watcher_owner (flux_watcher_t *w)
{
    return w ? w->owner : NULL;
}

bool reactor_watcher_orphaned (flux_watcher_t *w)
{
    return w && w->orphaned;
}

flux_reactor_t *reactor_detach (struct runtime *rt)
{
    flux_reactor_t *r = rt->reactor;

    if (!r)
        return NULL;
    rt->reactor = NULL;
    while (r->watchers) {
        flux_watcher_t *w = r->watchers;
        bool lost = w->orphaned && !w->kept && !w->running;
        disarm (w);
        list_remove (r, w);
        w->r = NULL;
        w->owner = NULL;
        if (lost) /* its plugin is gone: nobody else will free it */
            free (w);
    }
    r->stopping = true;
    wake (r);
    return r;
}

void reactor_destroy (flux_reactor_t *r)
{
    if (!r)
        return;
    if (r->thread_started) {
        if (on_reactor_thread (r)) {
            /* jobtap_host_fini from a timer callback: it cannot wait for
             * itself; the thread ends when the callback returns */
            runtime_log (LOG_ERR, "jobtap: runtime finalized from a timer "
                         "callback: its reactor is leaked");
            pthread_detach (r->thread);
            return;
        }
        pthread_join (r->thread, NULL);
        close (r->wake_fd);
    }
    free (r->heap);
    free (r);
}

/* --- flux_reactor_* -------------------------------------------------- */

flux_reactor_t *flux_get_reactor (flux_t *h)
{
    struct runtime *rt = flux_handle_runtime (h);
    flux_reactor_t *r;

    if (!rt) {
        errno = EINVAL;
        return NULL;
    }
    runtime_lock ();
    r = reactor_get (rt);
    runtime_unlock ();
    return r;
}

int flux_reactor_run (flux_reactor_t *r, int flags)
{
    (void)r;
    (void)flags;
    runtime_log (LOG_ERR, "flux_reactor_run: refused: slurm-jobtap runs "
                 "timers on a thread of its own; slurmctld has no reactor "
                 "loop for a plugin to run");
    errno = EINVAL;
    return -1;
}

void flux_reactor_stop (flux_reactor_t *r)
{
    (void)r;
    runtime_log (LOG_WARNING, "flux_reactor_stop: ignored: slurm-jobtap's "
                 "reactor runs until slurmctld unloads it");
}

void flux_reactor_stop_error (flux_reactor_t *r)
{
    flux_reactor_stop (r);
}

double flux_reactor_time (void)
{
    return clock_seconds (CLOCK_REALTIME);
}

double flux_reactor_now (flux_reactor_t *r)
{
    double t;

    if (!r)
        return flux_reactor_time ();
    runtime_lock ();
    t = wall_now (r);
    runtime_unlock ();
    return t;
}

void flux_reactor_now_update (flux_reactor_t *r)
{
    if (!r)
        return;
    runtime_lock ();
    if (on_reactor_thread (r))
        now_update (r);
    runtime_unlock ();
}

/* --- watchers -------------------------------------------------------- */

static flux_watcher_t *watcher_create_timer (flux_reactor_t *r,
                                     double after,
                                     double repeat,
                                     flux_watcher_f cb,
                                     void *arg,
                                     bool kept)
{
    flux_watcher_t *w;

    /* written so that NaN fails too */
    if (!r || !cb || !(after >= 0.) || !(repeat >= 0.)) {
        errno = EINVAL;
        return NULL;
    }
    if (!(w = calloc (1, sizeof (*w)))) {
        errno = ENOMEM;
        return NULL;
    }
    w->cb = cb;
    w->arg = arg;
    w->after = after;
    w->repeat = repeat;
    w->referenced = true;
    w->kept = kept;
    runtime_lock ();
    w->r = r;
    w->owner = r->rt->calling;
    if (w->owner && w->owner->removed) { /* made by its destructors */
        w->owner = NULL;
        w->orphaned = true;
        if (!kept)
            r->orphans++;
    }
    w->next = r->watchers;
    if (w->next)
        w->next->prev = w;
    r->watchers = w;
    runtime_unlock ();
    return w;
}

flux_watcher_t *flux_timer_watcher_create (flux_reactor_t *r,
                                           double after,
                                           double repeat,
                                           flux_watcher_f cb,
                                           void *arg)
{
    return watcher_create_timer (r, after, repeat, cb, arg, false);
}

flux_watcher_t *reactor_timer_create_kept (flux_reactor_t *r,
                                           flux_watcher_f cb,
                                           void *arg)
{
    return watcher_create_timer (r, 0., 0., cb, arg, true);
}

void flux_timer_watcher_reset (flux_watcher_t *w, double after, double repeat)
{
    if (!w)
        return;
    runtime_lock ();
    w->after = after >= 0. ? after : 0.;
    w->repeat = repeat >= 0. ? repeat : 0.;
    if (w->active) /* libev leaves this undefined: count from now */
        arm (w, mono_now (w->r) + w->after);
    runtime_unlock ();
}

void flux_timer_watcher_again (flux_watcher_t *w)
{
    if (!w)
        return;
    runtime_lock ();
    if (w->r && !w->orphaned) {
        if (w->repeat > 0.)
            arm (w, mono_now (w->r) + w->repeat);
        else
            disarm (w);
    }
    runtime_unlock ();
}

void flux_watcher_start (flux_watcher_t *w)
{
    if (!w)
        return;
    runtime_lock ();
    if (w->r && !w->active && !w->orphaned)
        arm (w, mono_now (w->r) + w->after);
    runtime_unlock ();
}

void flux_watcher_stop (flux_watcher_t *w)
{
    if (!w)
        return;
    runtime_lock ();
    if (w->r)
        disarm (w);
    runtime_unlock ();
}

void flux_watcher_destroy (flux_watcher_t *w)
{
    int saved_errno = errno;

    if (!w)
        return;
    runtime_lock ();
    if (w->r) {
        disarm (w);
        list_remove (w->r, w);
        w->r = NULL;
    }
    if (w->running) /* its own callback: freed when that returns */
        w->destroyed = true;
    else
        free (w);
    runtime_unlock ();
    errno = saved_errno;
}

bool flux_watcher_is_active (flux_watcher_t *w)
{
    bool active;

    if (!w)
        return false;
    runtime_lock ();
    active = w->active;
    runtime_unlock ();
    return active;
}

double flux_watcher_next_wakeup (flux_watcher_t *w)
{
    double t = -1.;

    if (!w) {
        errno = EINVAL;
        return -1.;
    }
    runtime_lock ();
    if (!w->r)
        errno = EINVAL;
    else if (w->active)
        t = wall_now (w->r) + (w->deadline - mono_now (w->r));
    else
        t = wall_now (w->r) + w->after;
    runtime_unlock ();
    return t;
}

/* Whether a watcher keeps a Flux reactor's loop running: recorded, with
 * no effect, since this loop runs until the runtime's end. */
static void set_referenced (flux_watcher_t *w, bool referenced)
{
    if (w) {
        runtime_lock ();
        w->referenced = referenced;
        runtime_unlock ();
    }
}

void flux_watcher_ref (flux_watcher_t *w)
{
    set_referenced (w, true);
}

void flux_watcher_unref (flux_watcher_t *w)
{
    set_referenced (w, false);
}

bool flux_watcher_is_referenced (flux_watcher_t *w)
{
    bool referenced;

    if (!w)
        return false;
    runtime_lock ();
    referenced = w->referenced;
    runtime_unlock ();
    return referenced;
}

void flux_watcher_set_priority (flux_watcher_t *w, int priority)
{
    (void)w; /* as Flux's timers: only its check watchers have one */
    (void)priority;
}
