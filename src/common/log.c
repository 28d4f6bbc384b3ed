/* The runtime's lock, log sink and error convention (log.h). */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>

#include "log.h"

/* Process-wide, as the runtime they guard and log for is (host.h). */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* The thread holding the lock (0: none), so that its own takes inside
 * callbacks are counted without the mutex: a recursive mutex costs a
 * submission, which takes it about eight times, more.  Only the holder
 * writes its own id here, and clears it before it lets the mutex go, so
 * no other thread can read its own id.  Not thread-local storage:
 * slurmctld runs each RPC in a thread of its own, whose first TLS access
 * in a loaded plugin costs an allocation. */
static pthread_t owner;
static int depth;           /* the holder's takes */
static int waiters;         /* threads blocked in runtime_lock (atomic) */
static void (*sink) (int level, const char *msg, void *arg);
static void *sink_arg;

void runtime_lock (void)
{
    pthread_t self = pthread_self ();

    if (__atomic_load_n (&owner, __ATOMIC_RELAXED) == self) {
        depth++;
        return;
    }
    if (pthread_mutex_trylock (&lock) != 0) {
        __atomic_add_fetch (&waiters, 1, __ATOMIC_RELAXED);
        pthread_mutex_lock (&lock);
        __atomic_sub_fetch (&waiters, 1, __ATOMIC_RELAXED);
    }
    __atomic_store_n (&owner, self, __ATOMIC_RELAXED);
    depth = 1;
}

void runtime_unlock (void)
{
    if (--depth > 0)
        return;
    __atomic_store_n (&owner, (pthread_t)0, __ATOMIC_RELAXED);
    pthread_mutex_unlock (&lock);
}

bool runtime_yield (void)
{
    /* with nobody waiting, giving up the CPU only slows a long pass */
    if (depth != 1 || __atomic_load_n (&waiters, __ATOMIC_RELAXED) == 0)
        return false;
    pthread_t self = pthread_self ();
    __atomic_store_n (&owner, (pthread_t)0, __ATOMIC_RELAXED);
    pthread_mutex_unlock (&lock);
    sched_yield ();
    pthread_mutex_lock (&lock);
    __atomic_store_n (&owner, self, __ATOMIC_RELAXED);
    return true;
}

const char *jobtap_runtime_version (void)
{
    return "0.1.0";
}

void runtime_log_sink (void (*log) (int level, const char *msg, void *arg),
                       void *arg)
{
    runtime_lock ();
    sink = log;
    sink_arg = arg;
    runtime_unlock ();
}

void runtime_vlog (int level, const char *fmt, va_list ap)
{
    char buf[2048];

    vsnprintf (buf, sizeof (buf), fmt, ap);
    runtime_lock ();
    if (sink)
        sink (level, buf, sink_arg);
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

