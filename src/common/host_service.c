/* The host API's service calls (host.h: jobtap_host_service_call and
 * _async): a request sent to a plugin's service as a message with the
 * caller's credentials, its response handed back as JSON or an error.
 * The control socket and the `jobtap` command come through here. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <flux/core.h>

#include "host.h"
#include "host_error.h"
#include "log.h"
#include "msg.h"
#include "runtime.h"
#include "service.h"

/* A response as the host sees it: the payload (borrowed; JSON null if
 * none) or the error's number and text. */
static void response_parts (const flux_msg_t *response,
                            json_t **payload,
                            int *errnum,
                            const char **errstr)
{
    *errnum = 0;
    *errstr = NULL;
    *payload = NULL;
    flux_msg_get_errnum (response, errnum);
    if (*errnum == 0) {
        if (!(*payload = msg_payload_json (response)))
            *payload = json_null (); /* a singleton: nothing to free */
    }
    else if (flux_response_decode_error (response, errstr) < 0)
        *errstr = strerror (*errnum);
}

/* Send the request, its response to go to reply(response, arg): the
 * sender's reference to it, or NULL with err. */
static const flux_msg_t *service_call_start (const char *topic,
                                             json_t *request,
                                             uint32_t userid,
                                             uint32_t rolemask,
                                             msg_reply_f reply,
                                             void *arg,
                                             jobtap_host_error_t *err)
{
    struct flux_msg_cred cred = { .userid = userid, .rolemask = rolemask };
    const flux_msg_t *msg;

    if (!topic) {
        errno = EINVAL;
        errprintf (err, "invalid argument");
        return NULL;
    }
    if (!(msg = msg_request_create (topic, request, NULL, cred, false))) {
        errprintf (err, "out of memory");
        return NULL;
    }
    msg_set_reply (msg, reply, arg);
    if (service_send (host_runtime (), msg, err) < 0) {
        msg_set_reply (msg, NULL, NULL);
        flux_msg_decref (msg);
        return NULL;
    }
    return msg;
}

/* An async call waiting for its response. */
struct async_call {
    jobtap_host_service_done_f done;
    void *arg;
};

static void async_reply (const flux_msg_t *response, void *arg)
{
    struct async_call *call = arg;
    const char *errstr;
    json_t *payload;
    int errnum;

    response_parts (response, &payload, &errnum, &errstr);
    call->done (payload, errnum, errstr, call->arg);
    free (call);
}

int jobtap_host_service_call_async (const char *topic,
                                    json_t *request,
                                    uint32_t userid,
                                    uint32_t rolemask,
                                    jobtap_host_service_done_f done,
                                    void *arg,
                                    jobtap_host_error_t *err)
{
    struct async_call *call;
    const flux_msg_t *msg;

    if (!done) {
        errno = EINVAL;
        return errprintf (err, "invalid argument");
    }
    if (!(call = calloc (1, sizeof (*call))))
        return errprintf (err, "out of memory");
    call->done = done;
    call->arg = arg;
    runtime_lock ();
    msg = service_call_start (topic, request, userid, rolemask, async_reply,
                              call, err);
    if (!msg)
        free (call); /* the reply never ran */
    flux_msg_decref (msg);
    runtime_unlock ();
    return msg ? 0 : -1;
}

/* What a synchronous call gets back from the handler. */
struct sync_result {
    bool done;
    json_t *response;
    int errnum;
    char errstr[sizeof (((jobtap_host_error_t *)0)->text)];
};

static void sync_reply (const flux_msg_t *response, void *arg)
{
    struct sync_result *r = arg;
    const char *errstr;
    json_t *payload;

    response_parts (response, &payload, &r->errnum, &errstr);
    r->done = true;
    r->response = json_incref (payload);
    if (errstr)
        snprintf (r->errstr, sizeof (r->errstr), "%s", errstr);
}

int jobtap_host_service_call (const char *topic,
                              json_t *request,
                              uint32_t userid,
                              uint32_t rolemask,
                              json_t **response,
                              jobtap_host_error_t *err)
{
    struct sync_result r = { .done = false };
    const flux_msg_t *msg;
    int rc = -1;

    if (!response) {
        errno = EINVAL;
        return errprintf (err, "invalid argument");
    }
    runtime_lock ();
    if (!(msg = service_call_start (topic, request, userid, rolemask,
                                    sync_reply, &r, err)))
        goto out;
    if (!r.done && msg_held_elsewhere (msg)) {
        /* r lives on this stack: a later response must go nowhere */
        msg_set_reply (msg, NULL, NULL);
        flux_msg_decref (msg);
        errno = EINPROGRESS;
        errprintf (err, "%s: the service responds later; use "
                   "jobtap_host_service_call_async", topic);
        goto out;
    }
    flux_msg_decref (msg); /* dropped unanswered: r gets EPROTO now */
    if (r.errnum) {
        errno = r.errnum;
        errprintf (err, "%s", r.errstr);
        goto out;
    }
    *response = r.response;
    rc = 0;
out:
    runtime_unlock ();
    return rc;
}
