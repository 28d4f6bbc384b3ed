/* The entry points' scopes, one stack per thread (write_scope.h). */
#include <config.h>

#include <stddef.h>

#include "write_scope.h"

/* Per thread: the runtime's ops, which reach actions.c, carry no scope. */
static __thread struct write_scope *innermost;

void write_scope_enter (struct write_scope *s)
{
    s->outer = innermost;
    innermost = s;
}

void write_scope_leave (struct write_scope *s)
{
    innermost = s->outer;
}

struct write_scope *write_scope_current (void)
{
    return innermost;
}
