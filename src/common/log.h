/* The runtime's lock, log and error helpers: the leaf every other module
 * of src/common may call, and which calls none of them.
 *
 * One lock serializes all of the runtime (it is recursive: a plugin's
 * callback may call back into the flux_jobtap_* API).  Callers that also
 * take slurmctld's locks take those first.  The log goes to the sink the
 * host gave at jobtap_host_init, or stderr; both are process-wide, as
 * slurmctld's own log is. */
#ifndef JOBTAP_LOG_H
#define JOBTAP_LOG_H

#include <stdarg.h>
#include <stdbool.h>

#include "host.h"

#ifdef __cplusplus
extern "C" {
#endif

void runtime_lock (void);
void runtime_unlock (void);
/* Let other threads in: if another thread waits for the lock and this
 * one holds it once (a host entry point, not a callback), release it,
 * yield, and take it again: true. Else nothing happens: false. */
bool runtime_yield (void);

/* Where runtime_log writes (NULL: stderr).  Set under the lock. */
void runtime_log_sink (void (*log) (int level, const char *msg, void *arg),
                       void *arg);
void runtime_vlog (int level, const char *fmt, va_list ap);
void runtime_log (int level, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

#ifdef __cplusplus
}
#endif

#endif
