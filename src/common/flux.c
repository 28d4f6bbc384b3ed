/* A minimal flux_t: logging to the host, handle aux, service messages,
 * and ENOSYS stand-ins for what needs a Flux broker. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include <flux/core.h>

#include "aux.h"
#include "internal.h"
#include "log.h"

struct flux_handle {
    struct aux_item *aux;
};

flux_t *flux_handle_create (void)
{
    return calloc (1, sizeof (struct flux_handle));
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
    (void)h;
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
    switch (fmt ? *fmt : 'S') {
    case 'c':
        return c_lower;
    case 'C':
        return c_upper;
    case 's':
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

/* --- service messages ------------------------------------------------- */

struct flux_msg {
    char *topic;
    json_t *payload; /* NULL: no payload */
    char *payload_str;
    uint32_t userid;
    uint32_t rolemask;
    char lasterr[256];
    int responded;   /* 0 none, 1 ok, 2 error */
    json_t *response;
    int errnum;
    char *errstr;
};

flux_msg_t *msg_create (const char *topic,
                        json_t *payload,
                        uint32_t userid,
                        uint32_t rolemask)
{
    flux_msg_t *msg = calloc (1, sizeof (*msg));
    if (!msg || !(msg->topic = strdup (topic))) {
        free (msg);
        return NULL;
    }
    msg->payload = json_incref (payload);
    msg->userid = userid;
    msg->rolemask = rolemask;
    return msg;
}

void msg_destroy (flux_msg_t *msg)
{
    if (msg) {
        int saved_errno = errno;
        free (msg->topic);
        json_decref (msg->payload);
        free (msg->payload_str);
        json_decref (msg->response);
        free (msg->errstr);
        free (msg);
        errno = saved_errno;
    }
}

int msg_result (flux_msg_t *msg, json_t **response, jobtap_host_error_t *err)
{
    if (msg->responded == 1) {
        *response = msg->response ? json_incref (msg->response) : json_null ();
        return 0;
    }
    if (msg->responded == 2) {
        errprintf (err,
                   "%s",
                   msg->errstr ? msg->errstr : strerror (msg->errnum));
        errno = msg->errnum;
        return -1;
    }
    errprintf (err, "%s: service did not respond", msg->topic);
    errno = ENOSYS;
    return -1;
}

static void msg_seterr (const flux_msg_t *cmsg, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));
static void msg_seterr (const flux_msg_t *cmsg, const char *fmt, ...)
{
    flux_msg_t *msg = (flux_msg_t *)cmsg;
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (msg->lasterr, sizeof (msg->lasterr), fmt, ap);
    va_end (ap);
}

int flux_request_decode (const flux_msg_t *msg,
                         const char **topic,
                         const char **s)
{
    flux_msg_t *m = (flux_msg_t *)msg;
    if (!msg) {
        errno = EINVAL;
        return -1;
    }
    if (topic)
        *topic = msg->topic;
    if (s) {
        if (msg->payload && !msg->payload_str)
            m->payload_str = json_dumps (msg->payload,
                                         JSON_COMPACT | JSON_ENCODE_ANY);
        *s = msg->payload_str;
    }
    return 0;
}

int flux_request_unpack (const flux_msg_t *msg,
                         const char **topic,
                         const char *fmt,
                         ...)
{
    json_error_t err;
    va_list ap;
    int rc;

    if (!msg || !fmt) {
        errno = EINVAL;
        return -1;
    }
    if (!msg->payload) {
        msg_seterr (msg, "message has no payload");
        errno = EPROTO;
        return -1;
    }
    va_start (ap, fmt);
    rc = json_vunpack_ex (msg->payload, &err, 0, fmt, ap);
    va_end (ap);
    if (rc < 0) {
        msg_seterr (msg, "%s", err.text);
        errno = EPROTO;
        return -1;
    }
    if (topic)
        *topic = msg->topic;
    return 0;
}

const char *flux_msg_last_error (const flux_msg_t *msg)
{
    if (!msg)
        return "msg object is NULL";
    return msg->lasterr;
}

int flux_msg_get_userid (const flux_msg_t *msg, uint32_t *userid)
{
    if (!msg || !userid) {
        errno = EINVAL;
        return -1;
    }
    *userid = msg->userid;
    return 0;
}

int flux_msg_get_rolemask (const flux_msg_t *msg, uint32_t *rolemask)
{
    if (!msg || !rolemask) {
        errno = EINVAL;
        return -1;
    }
    *rolemask = msg->rolemask;
    return 0;
}

int flux_msg_get_topic (const flux_msg_t *msg, const char **topic)
{
    if (!msg || !topic) {
        errno = EINVAL;
        return -1;
    }
    *topic = msg->topic;
    return 0;
}

int flux_msg_authorize (const flux_msg_t *msg, uint32_t userid)
{
    if (!msg) {
        errno = EINVAL;
        return -1;
    }
    if ((msg->rolemask & FLUX_ROLE_OWNER)
        || (userid != FLUX_USERID_UNKNOWN && msg->userid == userid))
        return 0;
    errno = EPERM;
    return -1;
}

static int respond_check (const flux_msg_t *msg)
{
    if (!msg) {
        errno = EINVAL;
        return -1;
    }
    if (msg->responded) {
        errno = EPROTO; /* one response per request here */
        return -1;
    }
    return 0;
}

int flux_respond (flux_t *h, const flux_msg_t *request, const char *s)
{
    flux_msg_t *msg = (flux_msg_t *)request;
    json_t *o = NULL;
    (void)h;
    if (respond_check (request) < 0)
        return -1;
    if (s && !(o = json_loads (s, JSON_DECODE_ANY, NULL))) {
        /* Flux allows any string payload; keep it as a JSON string. */
        o = json_string (s);
    }
    msg->response = o;
    msg->responded = 1;
    return 0;
}

int flux_respond_pack (flux_t *h,
                       const flux_msg_t *request,
                       const char *fmt,
                       ...)
{
    flux_msg_t *msg = (flux_msg_t *)request;
    json_error_t err;
    va_list ap;
    json_t *o;
    (void)h;

    if (respond_check (request) < 0 || !fmt) {
        errno = EINVAL;
        return -1;
    }
    va_start (ap, fmt);
    o = plugin_vpack (&err, fmt, ap);
    va_end (ap);
    if (!o) {
        errno = EINVAL;
        return -1;
    }
    msg->response = o;
    msg->responded = 1;
    return 0;
}

int flux_respond_error (flux_t *h,
                        const flux_msg_t *request,
                        int errnum,
                        const char *errstr)
{
    flux_msg_t *msg = (flux_msg_t *)request;
    (void)h;
    if (respond_check (request) < 0)
        return -1;
    if (errnum == 0) {
        errno = EINVAL;
        return -1;
    }
    msg->errnum = errnum;
    msg->errstr = errstr ? strdup (errstr) : NULL;
    msg->responded = 2;
    return 0;
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

flux_reactor_t *flux_get_reactor (flux_t *h)
{
    (void)h;
    return unsupported ("flux_get_reactor");
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

flux_future_t *flux_rpc (flux_t *h,
                         const char *topic,
                         const char *s,
                         uint32_t nodeid,
                         int flags)
{
    (void)h;
    (void)topic;
    (void)s;
    (void)nodeid;
    (void)flags;
    return unsupported ("flux_rpc");
}

flux_future_t *flux_rpc_pack (flux_t *h,
                              const char *topic,
                              uint32_t nodeid,
                              int flags,
                              const char *fmt,
                              ...)
{
    (void)h;
    (void)topic;
    (void)nodeid;
    (void)flags;
    (void)fmt;
    return unsupported ("flux_rpc_pack");
}

void flux_future_destroy (flux_future_t *f)
{
    (void)f;
}

flux_watcher_t *flux_timer_watcher_create (flux_reactor_t *r,
                                           double after,
                                           double repeat,
                                           flux_watcher_f cb,
                                           void *arg)
{
    (void)r;
    (void)after;
    (void)repeat;
    (void)cb;
    (void)arg;
    return unsupported ("flux_timer_watcher_create");
}

void flux_watcher_start (flux_watcher_t *w)
{
    (void)w;
}

void flux_watcher_stop (flux_watcher_t *w)
{
    (void)w;
}

void flux_watcher_destroy (flux_watcher_t *w)
{
    (void)w;
}
