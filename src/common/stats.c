/* Flux's metrics calls (flux_stats_*). Flux sends them to a statsd
 * collector only when its broker was started with FLUX_FRIPP_STATSD set,
 * and otherwise does nothing with them; slurmctld has no such collector,
 * so here they are always the calls of a handle with metrics off: plugins
 * that report metrics load and run, and nothing is sent. */
#include <stdarg.h>
#include <stdbool.h>
#include <sys/types.h>

#include <flux/core.h>

void flux_stats_count (flux_t *h, const char *name, ssize_t count)
{
    (void)h;
    (void)name;
    (void)count;
}

void flux_stats_gauge_set (flux_t *h, const char *name, ssize_t value)
{
    (void)h;
    (void)name;
    (void)value;
}

void flux_stats_gauge_inc (flux_t *h, const char *name, ssize_t inc)
{
    (void)h;
    (void)name;
    (void)inc;
}

void flux_stats_timing (flux_t *h, const char *name, double ms)
{
    (void)h;
    (void)name;
    (void)ms;
}

void flux_stats_set_period (flux_t *h, double period)
{
    (void)h;
    (void)period;
}

void flux_stats_set_prefix (flux_t *h, const char *fmt, ...)
{
    (void)h;
    (void)fmt;
}

bool flux_stats_enabled (flux_t *h, const char *metric)
{
    (void)h;
    (void)metric;
    return false;
}
