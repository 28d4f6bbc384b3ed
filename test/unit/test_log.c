/* log.c: the runtime's lock (recursive, exclusive between threads), its
 * log sink and the error convention. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "host_error.h"
#include "log.h"
#include "tap.h"

static char got_msg[4096];
static int got_level = -1;
static void *got_arg;
static int sink_calls;

static void sink (int level, const char *msg, void *arg)
{
    got_level = level;
    got_arg = arg;
    sink_calls++;
    snprintf (got_msg, sizeof (got_msg), "%s", msg);
}

static void test_log (void)
{
    int marker;
    char big[3000];

    runtime_log_sink (sink, &marker);
    runtime_log (LOG_WARNING, "job %d: %s", 42, "late");
    is (got_msg, "job 42: late", "runtime_log formats into the sink");
    isint (got_level, LOG_WARNING, "...with the level");
    ok (got_arg == &marker, "...and the sink's arg");

    memset (big, 'y', sizeof (big) - 1);
    big[sizeof (big) - 1] = '\0';
    runtime_log (LOG_ERR, "%s", big);
    isint (strlen (got_msg), 2047, "a long message is cut to 2047 bytes");

    sink_calls = 0;
    runtime_log_sink (NULL, NULL);
    runtime_log (LOG_DEBUG, "to stderr, not the sink");
    isint (sink_calls, 0, "with no sink, nothing reaches the old one");
}

static void test_errprintf (void)
{
    jobtap_host_error_t err = { .text = "" };

    errno = ENOENT;
    isint (errprintf (&err, "no plugin %s at line %d", "x.so", 3), -1,
           "errprintf returns -1");
    is (err.text, "no plugin x.so at line 3", "errprintf fills err->text");
    isint (errno, ENOENT, "errprintf keeps errno");
    errno = EPERM;
    isint (errprintf (NULL, "dropped %d", 1), -1,
           "errprintf with no err: -1");
    isint (errno, EPERM, "...errno kept");
}

static volatile int thread_got_lock;
static void *locker (void *arg)
{
    (void)arg;
    runtime_lock ();
    thread_got_lock = 1;
    runtime_unlock ();
    return NULL;
}

static void test_lock (void)
{
    pthread_t t;

    runtime_lock ();
    runtime_lock (); /* recursive: the thread below checks the count */
    runtime_log_sink (sink, NULL); /* takes it once more inside */
    runtime_log (LOG_INFO, "under the lock");
    is (got_msg, "under the lock", "logging while holding the lock works");
    pthread_create (&t, NULL, locker, NULL);
    usleep (100 * 1000);
    isint (thread_got_lock, 0, "another thread waits while it is held");
    runtime_unlock ();
    usleep (50 * 1000);
    isint (thread_got_lock, 0, "...still held once (two locks, one unlock)");
    runtime_unlock ();
    pthread_join (t, NULL);
    isint (thread_got_lock, 1, "...and gets it once fully released");
    runtime_log_sink (NULL, NULL);
}

/* runtime_yield lets a waiting thread in only from the outermost take. */
static void test_yield (void)
{
    pthread_t t;

    runtime_lock ();
    ok (!runtime_yield (), "yield with nobody waiting: nothing");
    thread_got_lock = 0;
    pthread_create (&t, NULL, locker, NULL);
    usleep (100 * 1000);
    runtime_lock ();
    ok (!runtime_yield () && !thread_got_lock,
        "yield inside a second take: the waiter still waits");
    runtime_unlock ();
    bool yielded = false;
    for (int i = 0; i < 200 && !thread_got_lock; i++) {
        yielded |= runtime_yield ();
        usleep (1000);
    }
    ok (yielded && thread_got_lock,
        "yield from the outermost take: the waiter got the lock");
    runtime_lock ();
    runtime_unlock ();
    runtime_unlock ();
    pthread_join (t, NULL);
    thread_got_lock = 0;
    pthread_create (&t, NULL, locker, NULL);
    for (int i = 0; i < 2000 && !thread_got_lock; i++)
        usleep (1000);
    ok (thread_got_lock, "free after the holder's last unlock");
    pthread_join (t, NULL);
}

int main (void)
{
    test_log ();
    test_errprintf ();
    test_lock ();
    test_yield ();
    done_testing ();
}
