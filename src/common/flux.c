/* A minimal flux_t: logging to the host, handle aux, job state strings,
 * and ENOSYS stand-ins for what needs a Flux broker.  Messages are in
 * msg.c, RPCs and futures in rpc.c, the reactor and timers in reactor.c. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include <flux/core.h>

#include "aux.h"
#include "flux_handle.h"
#include "host.h"
#include "jtplugin.h"
#include "log.h"
#include "runtime.h"

struct flux_handle {
    struct aux_item *aux;
    struct runtime *rt;
};

flux_t *flux_handle_create (struct runtime *rt)
{
    flux_t *h = calloc (1, sizeof (struct flux_handle));
    if (h)
        h->rt = rt;
    return h;
}

struct runtime *flux_handle_runtime (flux_t *h)
{
    return h ? h->rt : NULL;
}

void flux_handle_destroy (flux_t *h)
{
    if (h) {
        aux_destroy (&h->aux);
        free (h);
    }
}

int flux_aux_set (flux_t *h, const char *name, void *aux, flux_free_f destroy)
{
    int rc;
    if (!h) {
        errno = EINVAL;
        return -1;
    }
    runtime_lock ();
    rc = aux_set (&h->aux, name, aux, destroy);
    runtime_unlock ();
    return rc;
}

void *flux_aux_get (flux_t *h, const char *name)
{
    void *v;
    if (!h) {
        errno = EINVAL;
        return NULL;
    }
    runtime_lock ();
    v = aux_get (h->aux, name);
    runtime_unlock ();
    return v;
}

int flux_vlog (flux_t *h, int level, const char *fmt, va_list ap)
{
    int saved_errno = errno;
    struct runtime *rt = flux_handle_runtime (h);
    /* a plugin failing for job after job in a pass is summed up once */
    if (rt && rt->in_pass && level <= LOG_WARNING && pass_quiet (rt->calling)) {
        level = LOG_DEBUG;
        rt->calling->pass.quiet_lines++;
    }
    runtime_vlog (level, fmt, ap);
    errno = saved_errno;
    return 0;
}

int flux_log (flux_t *h, int level, const char *fmt, ...)
{
    va_list ap;
    int rc;
    va_start (ap, fmt);
    rc = flux_vlog (h, level, fmt, ap);
    va_end (ap);
    return rc;
}

void flux_log_verror (flux_t *h, const char *fmt, va_list ap)
{
    int saved_errno = errno;
    char buf[2048];

    vsnprintf (buf, sizeof (buf), fmt, ap);
    flux_log (h, LOG_ERR, "%s: %s", buf, strerror (saved_errno));
    errno = saved_errno;
}

void flux_log_error (flux_t *h, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    flux_log_verror (h, fmt, ap);
    va_end (ap);
}

const char *flux_strerror (int errnum)
{
    return strerror (errnum);
}

/* --- job states and results ------------------------------------------ */

static const struct {
    int state;
    const char *upper, *lower, *c_upper, *c_lower;
} states[] = {
    { FLUX_JOB_STATE_NEW, "NEW", "new", "N", "n" },
    { FLUX_JOB_STATE_DEPEND, "DEPEND", "depend", "D", "d" },
    { FLUX_JOB_STATE_PRIORITY, "PRIORITY", "priority", "P", "p" },
    { FLUX_JOB_STATE_SCHED, "SCHED", "sched", "S", "s" },
    { FLUX_JOB_STATE_RUN, "RUN", "run", "R", "r" },
    { FLUX_JOB_STATE_CLEANUP, "CLEANUP", "cleanup", "C", "c" },
    { FLUX_JOB_STATE_INACTIVE, "INACTIVE", "inactive", "I", "i" },
};

static const struct {
    int result;
    const char *upper, *lower, *c_upper, *c_lower;
} results[] = {
    { FLUX_JOB_RESULT_COMPLETED, "COMPLETED", "completed", "CD", "cd" },
    { FLUX_JOB_RESULT_FAILED, "FAILED", "failed", "F", "f" },
    { FLUX_JOB_RESULT_CANCELED, "CANCELED", "canceled", "CA", "ca" },
    { FLUX_JOB_RESULT_TIMEOUT, "TIMEOUT", "timeout", "TO", "to" },
};

#define NELEM(a) (sizeof (a) / sizeof ((a)[0]))

static const char *pick (const char *fmt,
                         const char *upper,
                         const char *lower,
                         const char *c_upper,
                         const char *c_lower)
{
    /* Flux's formats: s/S the short name, l/L the long one, lower or
     * upper case */
    switch (fmt ? *fmt : 'L') {
    case 's':
        return c_lower;
    case 'S':
        return c_upper;
    case 'l':
        return lower;
    default:
        return upper;
    }
}

const char *flux_job_statetostr (flux_job_state_t state, const char *fmt)
{
    for (size_t i = 0; i < NELEM (states); i++)
        if (states[i].state == (int)state)
            return pick (fmt,
                         states[i].upper,
                         states[i].lower,
                         states[i].c_upper,
                         states[i].c_lower);
    return pick (fmt, "(unknown)", "(unknown)", "?", "?");
}

int flux_job_strtostate (const char *s, flux_job_state_t *state)
{
    if (s && state) {
        for (size_t i = 0; i < NELEM (states); i++) {
            if (!strcmp (s, states[i].upper) || !strcmp (s, states[i].lower)
                || !strcmp (s, states[i].c_upper)
                || !strcmp (s, states[i].c_lower)) {
                *state = states[i].state;
                return 0;
            }
        }
    }
    errno = EINVAL;
    return -1;
}

const char *flux_job_resulttostr (flux_job_result_t result, const char *fmt)
{
    for (size_t i = 0; i < NELEM (results); i++)
        if (results[i].result == (int)result)
            return pick (fmt,
                         results[i].upper,
                         results[i].lower,
                         results[i].c_upper,
                         results[i].c_lower);
    return pick (fmt, "(unknown)", "(unknown)", "?", "?");
}

int flux_job_strtoresult (const char *s, flux_job_result_t *result)
{
    if (s && result) {
        for (size_t i = 0; i < NELEM (results); i++) {
            if (!strcmp (s, results[i].upper) || !strcmp (s, results[i].lower)
                || !strcmp (s, results[i].c_upper)
                || !strcmp (s, results[i].c_lower)) {
                *result = results[i].result;
                return 0;
            }
        }
    }
    errno = EINVAL;
    return -1;
}

/* --- not available without a broker ---------------------------------- */

static void *unsupported (const char *what)
{
    runtime_log (LOG_ERR,
                 "%s: not supported by slurm-jobtap (no Flux broker)",
                 what);
    errno = ENOSYS;
    return NULL;
}

const char *flux_attr_get (flux_t *h, const char *name)
{
    (void)h;
    (void)name;
    return unsupported ("flux_attr_get");
}

int flux_get_rank (flux_t *h, uint32_t *rank)
{
    (void)h;
    (void)rank;
    unsupported ("flux_get_rank");
    return -1;
}

int flux_get_size (flux_t *h, uint32_t *size)
{
    (void)h;
    (void)size;
    unsupported ("flux_get_size");
    return -1;
}
