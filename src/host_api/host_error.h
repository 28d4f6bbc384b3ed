/* The project's one error convention: a function that fails returns -1
 * (or NULL) with what went wrong in err->text, where err is the caller's
 * jobtap_host_error_t (or NULL: no message wanted), and errno as the
 * failure set it.  errprintf writes the message, keeps errno and returns
 * -1, so a failure reads `return errprintf (err, "...", ...);`.  Slurm's
 * own entry points (job_submit's err_msg) get err->text at the boundary. */
#ifndef JOBTAP_HOST_ERROR_H
#define JOBTAP_HOST_ERROR_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

/* What went wrong, for a log line or the user. */
typedef struct {
    char text[512];
} jobtap_host_error_t;

static inline int errprintf (jobtap_host_error_t *err, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

static inline int errprintf (jobtap_host_error_t *err, const char *fmt, ...)
{
    if (err) {
        int saved_errno = errno;
        va_list ap;
        va_start (ap, fmt);
        vsnprintf (err->text, sizeof (err->text), fmt, ap);
        va_end (ap);
        errno = saved_errno;
    }
    return -1;
}

#endif
