/* stats.c: Flux's metrics calls take any arguments, Flux's NULL handle
 * included, and report metrics off. */
#include <flux/core.h>

#include "tap.h"

int main (void)
{
    flux_t *h = (flux_t *)(void *)&h; /* any handle: none is read */

    flux_stats_set_prefix (h, "flux.job.%s", "state");
    flux_stats_set_period (h, 1.0);
    flux_stats_count (h, "cleanup.count", 3);
    flux_stats_gauge_set (h, "queue.depth", 10);
    flux_stats_gauge_inc (h, "queue.depth", -1);
    flux_stats_timing (h, "cleanup.timing", 1.5);
    flux_stats_count (NULL, NULL, 0);
    ok (!flux_stats_enabled (h, NULL), "metrics are off");
    ok (!flux_stats_enabled (h, "cleanup.count"), "for every metric");
    ok (!flux_stats_enabled (NULL, NULL), "NULL handle: off");

    done_testing ();
    return 0;
}
