/* RPCs from plugins (flux_rpc, flux_rpc_pack) to the services other
 * plugins registered in this runtime, and the futures that carry their
 * responses (flux_future_*, flux_rpc_get*).  Entry points of the Flux
 * API: each takes the runtime lock.  Calls service.c, msg.c, jtplugin.c
 * and reactor.c.
 *
 * A continuation set with flux_future_then runs when the response
 * arrives (inside the responder's flux_respond, on its thread), or at
 * once if it is already in, or, given a timeout >= 0 that expires first,
 * on the reactor's thread with the future failed with ETIMEDOUT.  It runs
 * as the code of the plugin that set it, and never once that plugin is
 * removed.  A future that is not ready cannot be waited for, since
 * whoever would respond may need the lock the caller holds:
 * flux_future_get then fails with EDEADLK. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include <flux/core.h>

#include "aux.h"
#include "flux_handle.h"
#include "host.h"
#include "jtplugin.h"
#include "log.h"
#include "msg.h"
#include "reactor.h"
#include "service.h"

struct flux_future {
    int refcount;
    flux_t *h;
    const flux_msg_t *request;  /* weak: until its response arrives */
    bool ready;
    const flux_msg_t *response; /* NULL when ready with no response */
    int errnum;                 /* the error it was fulfilled with, or 0 */
    char *errstr;               /* its text, or NULL: strerror (errnum) */
    flux_continuation_f then;
    void *then_arg;
    flux_watcher_t *timer;      /* set with 'then' if not ready: its timeout,
                                   and whose code set it (reactor.h) */
    struct aux_item *aux;
};

static flux_future_t *future_create (flux_t *h)
{
    flux_future_t *f = calloc (1, sizeof (*f));
    if (f) {
        f->refcount = 1;
        f->h = h;
    }
    return f;
}

/* Run the continuation of f, set while it was not ready, as the code of
 * the plugin that set it; not at all if that plugin was removed. */
static void future_continue (flux_future_t *f)
{
    struct runtime *rt = flux_handle_runtime (f->h);
    struct jt_plugin *prev;

    if (reactor_watcher_orphaned (f->timer)) {
        runtime_log (LOG_DEBUG, "jobtap: the continuation of a removed "
                     "plugin's RPC is not run");
        return;
    }
    f->refcount++; /* the continuation may destroy f */
    prev = jt_enter (rt, reactor_watcher_owner (f->timer));
    f->then (f, f->then_arg);
    jt_leave (rt, prev);
    flux_future_destroy (f);
}

/* Fulfill f (under the lock) and run its continuation, if one is set. */
static void future_fulfill (flux_future_t *f,
                            const flux_msg_t *response,
                            int errnum,
                            const char *errstr)
{
    if (f->ready)
        return;
    f->ready = true;
    f->response = response ? flux_msg_incref (response) : NULL;
    f->errnum = errnum;
    f->errstr = errstr ? strdup (errstr) : NULL;
    flux_watcher_stop (f->timer);
    if (f->then)
        future_continue (f);
}

/* The timeout of flux_future_then, on the reactor's thread. */
static void future_timeout (flux_reactor_t *r,
                            flux_watcher_t *w,
                            int revents,
                            void *arg)
{
    flux_future_t *f = arg;

    (void)r;
    (void)w;
    (void)revents;
    if (f->request) { /* a late response goes nowhere */
        msg_set_reply (f->request, NULL, NULL);
        f->request = NULL;
    }
    future_fulfill (f, NULL, ETIMEDOUT, NULL);
}

/* Arm f's timer for 'timeout' seconds (< 0: none), making it first: it
 * also records whose code is setting the continuation. */
static int future_timer_set (flux_future_t *f, double timeout)
{
    flux_reactor_t *r;

    if (!f->timer
        && (!(r = reactor_get (flux_handle_runtime (f->h)))
            || !(f->timer = reactor_timer_create_kept (r, future_timeout,
                                                       f))))
        return -1;
    flux_watcher_stop (f->timer);
    if (timeout >= 0.) {
        flux_timer_watcher_reset (f->timer, timeout, 0.);
        flux_watcher_start (f->timer);
    }
    return 0;
}

static void rpc_reply (const flux_msg_t *response, void *arg)
{
    flux_future_t *f = arg;
    const char *errstr = NULL;
    int errnum = 0;

    f->request = NULL; /* the request lets go of us once it has answered */
    flux_msg_get_errnum (response, &errnum);
    if (errnum)
        (void)flux_response_decode_error (response, &errstr);
    future_fulfill (f, response, errnum, errstr);
}

flux_future_t *flux_rpc_vpack (flux_t *h,
                               const char *topic,
                               uint32_t nodeid,
                               int flags,
                               const char *fmt,
                               va_list ap)
{
    json_error_t error;
    json_t *o;
    char *s;
    flux_future_t *f;

    if (!fmt) {
        errno = EINVAL;
        return NULL;
    }
    if (!(o = json_vpack_ex (&error, 0, fmt, ap))) {
        errno = EINVAL;
        return NULL;
    }
    s = json_dumps (o, JSON_COMPACT | JSON_ENCODE_ANY);
    json_decref (o);
    if (!s) {
        errno = ENOMEM;
        return NULL;
    }
    f = flux_rpc (h, topic, s, nodeid, flags);
    free (s);
    return f;
}

flux_future_t *flux_rpc_pack (flux_t *h,
                              const char *topic,
                              uint32_t nodeid,
                              int flags,
                              const char *fmt,
                              ...)
{
    flux_future_t *f;
    va_list ap;
    va_start (ap, fmt);
    f = flux_rpc_vpack (h, topic, nodeid, flags, fmt, ap);
    va_end (ap);
    return f;
}

flux_future_t *flux_rpc (flux_t *h,
                         const char *topic,
                         const char *s,
                         uint32_t nodeid,
                         int flags)
{
    /* a plugin calls as the instance owner, as a broker module does */
    struct flux_msg_cred owner = {
        .userid = (uint32_t)getuid (),
        .rolemask = FLUX_ROLE_OWNER | FLUX_ROLE_LOCAL,
    };
    struct runtime *rt = flux_handle_runtime (h);
    bool noresponse = flags & FLUX_RPC_NORESPONSE;
    jobtap_host_error_t err;
    const flux_msg_t *request;
    flux_future_t *f;

    (void)nodeid; /* one broker rank here: every nodeid is this one */
    if (!rt || !topic || (flags & ~FLUX_RPC_NORESPONSE)) {
        if (flags & FLUX_RPC_STREAMING)
            runtime_log (LOG_ERR, "%s: streaming RPCs are not supported by "
                         "slurm-jobtap", topic ? topic : "flux_rpc");
        errno = EINVAL;
        return NULL;
    }
    if (!(f = future_create (h)))
        return NULL;
    if (!(request = msg_request_create (topic, NULL, s, owner, noresponse))) {
        flux_future_destroy (f);
        return NULL;
    }
    runtime_lock ();
    if (!noresponse) {
        msg_set_reply (request, rpc_reply, f);
        f->request = request;
    }
    if (service_send (rt, request, &err) < 0) {
        int errnum = errno;
        msg_set_reply (request, NULL, NULL);
        f->request = NULL;
        future_fulfill (f, NULL, errnum, err.text);
    }
    else if (noresponse)
        future_fulfill (f, NULL, 0, NULL);
    flux_msg_decref (request);
    runtime_unlock ();
    return f;
}

void flux_future_incref (flux_future_t *f)
{
    if (f) {
        runtime_lock ();
        f->refcount++;
        runtime_unlock ();
    }
}

void flux_future_decref (flux_future_t *f)
{
    flux_future_destroy (f);
}

void flux_future_destroy (flux_future_t *f)
{
    int saved_errno = errno;
    if (!f)
        return;
    runtime_lock ();
    if (--f->refcount == 0) {
        if (f->request)
            msg_set_reply (f->request, NULL, NULL); /* answer goes nowhere */
        flux_msg_decref (f->response);
        flux_watcher_destroy (f->timer);
        aux_destroy (&f->aux);
        free (f->errstr);
        free (f);
    }
    runtime_unlock ();
    errno = saved_errno;
}

bool flux_future_is_ready (flux_future_t *f)
{
    bool ready;
    if (!f)
        return false;
    runtime_lock ();
    ready = f->ready;
    runtime_unlock ();
    return ready;
}

int flux_future_wait_for (flux_future_t *f, double timeout)
{
    if (!f) {
        errno = EINVAL;
        return -1;
    }
    if (flux_future_is_ready (f))
        return 0;
    errno = timeout < 0. ? EDEADLK : ETIMEDOUT;
    return -1;
}

int flux_future_get (flux_future_t *f, const void **result)
{
    int rc = -1;

    if (!f) {
        errno = EINVAL;
        return -1;
    }
    runtime_lock ();
    if (!f->ready) {
        runtime_log (LOG_ERR, "flux_future_get: the response is not in yet "
                     "and slurm-jobtap has no reactor to wait in "
                     "(use flux_future_then)");
        errno = EDEADLK;
    }
    else if (f->errnum)
        errno = f->errnum;
    else {
        if (result)
            *result = f->response;
        rc = 0;
    }
    runtime_unlock ();
    return rc;
}

int flux_future_then (flux_future_t *f,
                      double timeout,
                      flux_continuation_f cb,
                      void *arg)
{
    int rc = 0;

    if (!f || !cb) {
        errno = EINVAL;
        return -1;
    }
    runtime_lock ();
    if (f->ready) { /* the caller's own code runs it, now */
        f->then = cb;
        f->then_arg = arg;
        f->refcount++; /* the continuation may destroy f */
        cb (f, arg);
        flux_future_destroy (f);
    }
    else if ((rc = future_timer_set (f, timeout)) == 0) {
        f->then = cb;
        f->then_arg = arg;
    }
    runtime_unlock ();
    return rc;
}

bool flux_future_has_error (flux_future_t *f)
{
    bool has;
    if (!f)
        return false;
    runtime_lock ();
    has = f->ready && f->errnum != 0;
    runtime_unlock ();
    return has;
}

const char *flux_future_error_string (flux_future_t *f)
{
    const char *s = NULL;
    if (!f)
        return NULL;
    runtime_lock ();
    if (f->ready && f->errnum)
        s = f->errstr ? f->errstr : flux_strerror (f->errnum);
    runtime_unlock ();
    return s;
}

flux_t *flux_future_get_flux (flux_future_t *f)
{
    if (!f) {
        errno = EINVAL;
        return NULL;
    }
    return f->h;
}

int flux_future_aux_set (flux_future_t *f,
                         const char *name,
                         void *aux,
                         flux_free_f destroy)
{
    int rc;
    if (!f) {
        errno = EINVAL;
        return -1;
    }
    runtime_lock ();
    rc = aux_set (&f->aux, name, aux, destroy);
    runtime_unlock ();
    return rc;
}

void *flux_future_aux_get (flux_future_t *f, const char *name)
{
    void *v;
    if (!f) {
        errno = EINVAL;
        return NULL;
    }
    runtime_lock ();
    v = aux_get (f->aux, name);
    runtime_unlock ();
    return v;
}

int flux_rpc_get (flux_future_t *f, const char **s)
{
    const flux_msg_t *response = NULL;

    if (flux_future_get (f, (const void **)&response) < 0)
        return -1;
    if (!response) { /* FLUX_RPC_NORESPONSE: nothing to decode */
        if (s)
            *s = NULL;
        return 0;
    }
    return flux_response_decode (response, NULL, s);
}

int flux_rpc_get_vunpack (flux_future_t *f, const char *fmt, va_list ap)
{
    const flux_msg_t *response = NULL;

    if (flux_future_get (f, (const void **)&response) < 0)
        return -1;
    if (!response) {
        errno = EPROTO;
        return -1;
    }
    if (flux_response_decode (response, NULL, NULL) < 0)
        return -1;
    return flux_msg_vunpack (response, fmt, ap);
}

int flux_rpc_get_unpack (flux_future_t *f, const char *fmt, ...)
{
    va_list ap;
    int rc;
    va_start (ap, fmt);
    rc = flux_rpc_get_vunpack (f, fmt, ap);
    va_end (ap);
    return rc;
}
