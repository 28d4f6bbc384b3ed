/* src/slurm_adapter/write_scope.c: scopes nest and unwind in the thread
 * that entered them (the job write lock's holder), another thread sees
 * none meanwhile, and the next holder starts from none. */
#include <config.h>

#include <pthread.h>
#include <stdlib.h>

#include "src/common/slurm_xlator.h"
#include "src/slurmctld/slurmctld.h"

#include "tap.h"
#include "write_scope.h"

static void *current_elsewhere (void *arg)
{
    (void)arg;
    return write_scope_current ();
}

static struct write_scope *seen_by_another_thread (void)
{
    pthread_t t;
    void *seen = (void *)1;
    if (pthread_create (&t, NULL, current_elsewhere, NULL) != 0
        || pthread_join (t, &seen) != 0)
        return (void *)1;
    return seen;
}

struct enter_arg {
    struct write_scope scope;
    struct write_scope *outer_seen, *current_seen;
};

/* Another thread, the lock's next holder: enters, looks, leaves. */
static void *next_holder (void *arg)
{
    struct enter_arg *a = arg;
    write_scope_enter (&a->scope);
    a->outer_seen = a->scope.outer;
    a->current_seen = write_scope_current ();
    write_scope_leave (&a->scope);
    return NULL;
}

int main (void)
{
    struct write_scope outer = {.computing = NULL}, inner = {.agent_pass = true};
    struct enter_arg next = {.scope = {.computing = NULL}};
    pthread_t t;

    ok (write_scope_current () == NULL, "no scope before any is entered");
    write_scope_enter (&outer);
    ok (write_scope_current () == &outer, "the scope entered is current");
    ok (outer.outer == NULL, "the first has no outer scope");
    write_scope_enter (&inner);
    ok (write_scope_current () == &inner, "a nested one is current");
    ok (inner.outer == &outer, "with the first as its outer scope");
    ok (seen_by_another_thread () == NULL,
        "another thread, not the lock's holder, sees no scope");
    write_scope_leave (&inner);
    ok (write_scope_current () == &outer, "leaving it restores the first");
    write_scope_leave (&outer);
    ok (write_scope_current () == NULL, "leaving that leaves none");

    ok (pthread_create (&t, NULL, next_holder, &next) == 0
            && pthread_join (t, NULL) == 0,
        "the next holder, in another thread, enters and leaves");
    ok (next.outer_seen == NULL, "its scope has no outer one of ours");
    ok (next.current_seen == &next.scope, "and is current there");
    ok (write_scope_current () == NULL, "here, after it left, none");

    write_scope_enter (&outer);
    ok (write_scope_current () == &outer && outer.outer == NULL,
        "this thread holds it again from none");
    write_scope_leave (&outer);
    done_testing ();
}
