/* initfail.so: flux_plugin_init fails. */
#include <flux/core.h>

int flux_plugin_init (flux_plugin_t *p)
{
    (void)p;
    return -1;
}
