/* The runtime's jansson pool (src/common/jsonpool.c): blocks made inside a
 * scope come from the pool, everything else from malloc, and code outside
 * the runtime can keep freeing json_dumps() strings with free(). */
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>
#include <flux/core.h>

#include "host.h"
#include "jsonpool.h"
#include "tap.h"

/* The documented rule (docs/admin.md, Memory): on only with
 * SLURM_JOBTAP_JSON_POOL set to anything but 0 (meson runs this test
 * with =1, under valgrind and the sanitizers too). */
static bool pool_expected (void)
{
    const char *env = getenv ("SLURM_JOBTAP_JSON_POOL");
    return env && *env && strcmp (env, "0") != 0;
}

static json_t *make_tree (void)
{
    return json_pack ("{s:i s:s s:[i,i,{s:f}]}", "a", 1, "b", "text", "c", 1,
                      2, "d", 1.5);
}

static void test_scopes (void)
{
    size_t base = jobtap_host_json_pool_bytes ();
    json_t *outside = make_tree ();

    ok (jobtap_host_json_pool_bytes () == base,
        "blocks made outside a scope do not come from the pool");

    jobtap_host_json_pool_begin ();
    jobtap_host_json_pool_begin ();
    json_t *inside = make_tree ();
    jobtap_host_json_pool_end ();
    json_t *still = json_string ("nested scope still open");
    jobtap_host_json_pool_end ();
    size_t held = jobtap_host_json_pool_bytes ();

    ok (held > base, "blocks made inside a scope come from the pool (%zu bytes)",
        held - base);
    ok (json_equal (inside, outside), "a pooled tree equals the same tree from malloc");
    json_object_set_new (outside, "pooled", json_incref (inside));
    json_decref (inside);
    json_decref (still);
    ok (jobtap_host_json_pool_bytes () < held,
        "freeing a pooled block gives it back");
    json_decref (outside); /* frees the malloc tree and the pooled one in it */
    ok (jobtap_host_json_pool_bytes () == base,
        "a malloc tree holding a pooled one frees both (pool back to %zu)", base);

    /* What plugins do: json_dumps() outside a scope, then free(). */
    json_t *o = json_pack ("{s:s}", "x", "y");
    char *s = json_dumps (o, 0);
    ok (jobtap_host_json_pool_bytes () == base,
        "a json_dumps() string made outside a scope is not pooled");
    free (s); /* glibc's free: it would abort on a pooled block */
    json_decref (o);
}

static void test_big_blocks (void)
{
    size_t base = jobtap_host_json_pool_bytes ();
    char big[1024];

    memset (big, 'x', sizeof (big) - 1);
    big[sizeof (big) - 1] = '\0';
    jobtap_host_json_pool_begin ();
    json_t *s = json_string (big);
    jobtap_host_json_pool_end ();
    ok (s && strlen (json_string_value (s)) == sizeof (big) - 1
            && jobtap_host_json_pool_bytes () - base < sizeof (big),
        "a block over the largest class comes from malloc, even in a scope");
    json_decref (s);
    ok (jobtap_host_json_pool_bytes () == base, "... and is freed there");
}

#define THREADS 4
#define ROUNDS 20000

/* Each thread builds trees in scopes and hands every other one to the
 * next thread to free, as slurmctld's RPC threads and our agent do. */
static json_t *handoff[THREADS];
static pthread_mutex_t handoff_lock = PTHREAD_MUTEX_INITIALIZER;

static void *churn (void *arg)
{
    int me = (int)(intptr_t)arg;
    for (int i = 0; i < ROUNDS; i++) {
        jobtap_host_json_pool_begin ();
        json_t *t = make_tree ();
        jobtap_host_json_pool_end ();
        if (i % 2) {
            json_decref (t);
            continue;
        }
        pthread_mutex_lock (&handoff_lock);
        json_t *old = handoff[(me + 1) % THREADS];
        handoff[(me + 1) % THREADS] = t;
        pthread_mutex_unlock (&handoff_lock);
        json_decref (old);
    }
    return NULL;
}

static void test_threads (void)
{
    size_t base = jobtap_host_json_pool_bytes ();
    pthread_t t[THREADS];

    for (int i = 0; i < THREADS; i++)
        pthread_create (&t[i], NULL, churn, (void *)(intptr_t)i);
    for (int i = 0; i < THREADS; i++)
        pthread_join (t[i], NULL);
    for (int i = 0; i < THREADS; i++)
        json_decref (handoff[i]);
    ok (jobtap_host_json_pool_bytes () == base,
        "%d threads allocating and freeing each other's blocks leave the "
        "pool balanced", THREADS);
}

/* A thread that only frees a few pooled blocks and exits: they must go
 * back to the pool with it, not stay in the dead thread's cache. */
static void *free_tree (void *arg)
{
    json_decref (arg);
    return NULL;
}

static void test_exit_gives_back (void)
{
    size_t base = jobtap_host_json_pool_bytes ();
    pthread_t t;

    jobtap_host_json_pool_begin ();
    json_t *tree = make_tree ();
    jobtap_host_json_pool_end ();
    pthread_create (&t, NULL, free_tree, tree);
    pthread_join (t, NULL);
    ok (jobtap_host_json_pool_bytes () == base,
        "blocks freed by a thread that then exits go back to the pool");
}

/* Many short-lived threads, as slurmctld's RPC threads: each builds a tree,
 * frees it and exits, leaving a part-used list per class; more of them
 * than the pool keeps whole, so the rest go back block by block.  Then
 * one thread takes them all up again. */
static void *build_and_free (void *arg)
{
    (void)arg;
    jobtap_host_json_pool_begin ();
    json_t *t = make_tree ();
    jobtap_host_json_pool_end ();
    json_decref (t);
    return NULL;
}

static void test_short_threads (void)
{
    size_t base = jobtap_host_json_pool_bytes ();
    json_t *trees[64];
    pthread_t t;

    for (int i = 0; i < 20; i++) {
        pthread_create (&t, NULL, build_and_free, NULL);
        pthread_join (t, NULL);
    }
    ok (jobtap_host_json_pool_bytes () == base,
        "20 threads that build, free and exit leave the pool balanced");
    jobtap_host_json_pool_begin ();
    for (int i = 0; i < 64; i++)
        trees[i] = make_tree ();
    jobtap_host_json_pool_end ();
    json_t *ref = make_tree ();
    bool equal = true;
    for (int i = 0; i < 64; i++) {
        equal = equal && json_equal (trees[i], ref);
        json_decref (trees[i]);
    }
    json_decref (ref);
    ok (equal && jobtap_host_json_pool_bytes () == base,
        "their blocks serve new trees, and come back again");
}

/* What the pool holds, for the log line at shutdown. */
static void test_stats (bool on)
{
    struct json_pool_stats st;

    jobtap_json_pool_stats (&st);
    if (!on) {
        ok (!st.on && st.mapped == 0 && st.in_use == 0,
            "stats: the pool is off and holds nothing");
        return;
    }
    ok (st.on && st.reserved == 1UL << 30 && st.mapped > 0
            && st.mapped <= st.reserved && st.blocks > 0
            && st.high_water >= st.in_use && st.range_full == 0,
        "stats: holds %zu KiB in %zu blocks of %zu MiB, %zu bytes in use, "
        "high-water %zu", st.mapped >> 10, st.blocks, st.reserved >> 20,
        st.in_use, st.high_water);
    jobtap_json_pool_log_stats ();
}

static int handler (flux_plugin_t *p,
                    const char *topic,
                    flux_plugin_arg_t *args,
                    void *arg)
{
    (void)p;
    (void)topic;
    (void)args;
    (*(int *)arg)++;
    return 0;
}

/* Plugin code inside a pool scope: builds with assertions abort, saying
 * why, before the callback runs. */
static void test_no_plugin_code_in_scope (void)
{
    flux_plugin_t *p = flux_plugin_create ();
    int calls = 0, fds[2], status = 0;
    char text[512] = "";
    ssize_t n, len = 0;
    pid_t pid;

    flux_plugin_set_name (p, "scoped");
    flux_plugin_add_handler (p, "job.*", handler, &calls);
    ok (flux_plugin_call (p, "job.new", NULL) == 1 && calls == 1,
        "outside a scope a plugin callback runs");
#ifdef NDEBUG
    diag ("built with NDEBUG: the rule is not checked");
#else
    if (pipe (fds) < 0)
        bail_out ("pipe");
    fflush (stdout);
    if ((pid = fork ()) == 0) {
        dup2 (fds[1], STDERR_FILENO);
        jobtap_host_json_pool_begin ();
        flux_plugin_call (p, "job.new", NULL);
        _exit (calls == 2 ? 3 : 4); /* reached only if the rule is not kept */
    }
    close (fds[1]);
    while ((n = read (fds[0], text + len, sizeof (text) - 1 - len)) > 0)
        len += n;
    text[len] = '\0';
    close (fds[0]);
    waitpid (pid, &status, 0);
    ok (WIFSIGNALED (status) && WTERMSIG (status) == SIGABRT,
        "inside a scope, flux_plugin_call aborts (status 0x%x)", status);
    like (text, "scoped: job.new called inside a jansson pool scope",
          "and says which plugin and topic");
#endif
    flux_plugin_destroy (p);
}

/* The switch is read when the library loads: check it in a fresh
 * process, with value (NULL: unset). */
static void test_switch_off (const char *self, const char *value)
{
    pid_t pid = fork ();
    if (pid == 0) {
        if (value)
            setenv ("SLURM_JOBTAP_JSON_POOL", value, 1);
        else
            unsetenv ("SLURM_JOBTAP_JSON_POOL");
        setenv ("JSONPOOL_TEST_CHILD", "1", 1);
        execl (self, self, (char *)NULL);
        _exit (127);
    }
    int status = 0;
    waitpid (pid, &status, 0);
    ok (WIFEXITED (status) && WEXITSTATUS (status) == 0,
        "SLURM_JOBTAP_JSON_POOL%s%s: scoped blocks come from malloc",
        value ? "=" : " unset", value ? value : "");
}

static int child_main (void)
{
    jobtap_host_json_pool_begin ();
    json_t *t = make_tree ();
    jobtap_host_json_pool_end ();
    int rc = jobtap_host_json_pool_bytes () == 0 ? 0 : 1;
    json_decref (t);
    return rc;
}

int main (int argc, char *argv[])
{
    (void)argc;
    if (getenv ("JSONPOOL_TEST_CHILD"))
        return child_main ();

    size_t probe;
    jobtap_host_json_pool_begin ();
    json_t *t = json_object ();
    jobtap_host_json_pool_end ();
    probe = jobtap_host_json_pool_bytes ();
    json_decref (t);

    ok ((probe > 0) == pool_expected (),
        "the pool is %s, as expected here", probe > 0 ? "on" : "off");
    if (probe > 0) {
        test_scopes ();
        test_big_blocks ();
    }
    else
        diag ("pool off (SLURM_JOBTAP_JSON_POOL not set): only the switch "
              "is tested");
    test_stats (probe > 0);
    test_no_plugin_code_in_scope ();
    test_threads ();
    test_exit_gives_back ();
    test_short_threads ();
    test_switch_off (argv[0], "0");
    test_switch_off (argv[0], NULL); /* off by default */
    done_testing ();
    return 0;
}
