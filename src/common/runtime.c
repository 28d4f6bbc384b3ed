/* The one runtime of the process (runtime.h). */
#include "runtime.h"

static struct runtime instance;

struct runtime *host_runtime (void)
{
    return &instance;
}
