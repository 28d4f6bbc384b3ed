/* The entry points' scopes (write_scope.h). */
#include <config.h>

#include <pthread.h>
#include <stddef.h>

#include "write_scope.h"

/* Scopes are entered only under slurmctld's job write lock, which one
 * thread holds at a time, so one stack serves, with the thread whose it
 * is named: any other thread (not holding the lock for us) sees no
 * scope.  Not thread-local storage: slurmctld starts a thread per
 * RPC, and each would allocate this library's TLS block on first use.
 * The holder is read by other threads, so atomically; the stack only by
 * the holder, whose lock orders it after the previous holder's leave. */
static struct write_scope *innermost;
static pthread_t holder;
static bool held;

static bool held_here (void)
{
    return __atomic_load_n (&held, __ATOMIC_ACQUIRE)
           && pthread_equal (__atomic_load_n (&holder, __ATOMIC_RELAXED),
                             pthread_self ());
}

void write_scope_enter (struct write_scope *s)
{
    if (held_here ())
        s->outer = innermost;
    else {
        s->outer = NULL;
        __atomic_store_n (&holder, pthread_self (), __ATOMIC_RELAXED);
        __atomic_store_n (&held, true, __ATOMIC_RELEASE);
    }
    innermost = s;
}

void write_scope_leave (struct write_scope *s)
{
    if (!(innermost = s->outer))
        __atomic_store_n (&held, false, __ATOMIC_RELEASE);
}

struct write_scope *write_scope_current (void)
{
    return held_here () ? innermost : NULL;
}
