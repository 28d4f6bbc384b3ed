/* Messages (msg.h): flux_msg_t, its reference count and accessors,
 * decoding requests and responses, and responding to a request. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <flux/core.h>

#include "host.h"
#include "log.h"
#include "msg.h"
#include "quickpack.h"

struct flux_msg {
    int refcount;                /* atomic: holders may be on any thread */
    int type;                    /* FLUX_MSGTYPE_REQUEST or _RESPONSE */
    char *topic;
    struct flux_msg_cred cred;
    int errnum;                  /* responses: 0, or the error */
    bool noresponse;

    /* The payload, kept as it came (JSON or text); the other form is made
     * on first use, under the runtime lock (the message is const then). */
    bool has_payload;
    json_t *json;
    char *string;

    /* Requests: where the response goes, and whether it went. */
    msg_reply_f reply;
    void *reply_arg;
    bool responded;

    char lasterr[160];
};

static flux_msg_t *msg_create (int type, const char *topic)
{
    flux_msg_t *msg = calloc (1, sizeof (*msg));
    if (!msg)
        return NULL;
    if (!(msg->topic = strdup (topic ? topic : ""))) {
        free (msg);
        return NULL;
    }
    msg->type = type;
    msg->refcount = 1;
    msg->cred.userid = FLUX_USERID_UNKNOWN;
    return msg;
}

static void msg_free (flux_msg_t *msg)
{
    int saved_errno = errno;
    free (msg->topic);
    json_decref (msg->json);
    free (msg->string);
    free (msg);
    errno = saved_errno;
}

flux_msg_t *msg_request_create (const char *topic,
                                json_t *json,
                                const char *s,
                                struct flux_msg_cred cred,
                                bool noresponse)
{
    flux_msg_t *msg;

    if (!topic || (json && s)) {
        errno = EINVAL;
        return NULL;
    }
    if (!(msg = msg_create (FLUX_MSGTYPE_REQUEST, topic)))
        return NULL;
    msg->cred = cred;
    msg->noresponse = noresponse;
    if (json) {
        msg->json = json_incref (json);
        msg->has_payload = true;
    }
    else if (s) {
        if (!(msg->string = strdup (s))) {
            msg_free (msg);
            return NULL;
        }
        msg->has_payload = true;
    }
    return msg;
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

static int msg_valid (const flux_msg_t *msg)
{
    if (!msg || __atomic_load_n (&msg->refcount, __ATOMIC_ACQUIRE) <= 0) {
        errno = EINVAL;
        return -1;
    }
    return 0;
}

const flux_msg_t *flux_msg_incref (const flux_msg_t *cmsg)
{
    flux_msg_t *msg = (flux_msg_t *)cmsg;
    if (msg_valid (msg) < 0)
        return NULL;
    __atomic_add_fetch (&msg->refcount, 1, __ATOMIC_ACQ_REL);
    return msg;
}

static void respond_msg (const flux_msg_t *request, flux_msg_t *response);

void flux_msg_decref (const flux_msg_t *cmsg)
{
    flux_msg_t *msg = (flux_msg_t *)cmsg;
    if (!msg || __atomic_sub_fetch (&msg->refcount, 1, __ATOMIC_ACQ_REL) > 0)
        return;
    runtime_lock ();
    if (msg->type == FLUX_MSGTYPE_REQUEST && msg->reply && !msg->responded) {
        /* The handler let go of the request without answering: tell the
         * sender rather than leave it waiting.  Revived for the call. */
        flux_msg_t *response = msg_create (FLUX_MSGTYPE_RESPONSE, msg->topic);
        msg->refcount = 1;
        if (response) {
            char text[256];
            snprintf (text, sizeof (text),
                      "%s: request dropped without a response", msg->topic);
            response->errnum = EPROTO;
            response->string = strdup (text);
            response->has_payload = response->string != NULL;
            respond_msg (msg, response);
            flux_msg_decref (response);
        }
        msg->refcount = 0;
    }
    runtime_unlock ();
    msg_free (msg);
}

void msg_set_reply (const flux_msg_t *request, msg_reply_f reply, void *arg)
{
    flux_msg_t *msg = (flux_msg_t *)request;
    runtime_lock ();
    msg->reply = reply;
    msg->reply_arg = arg;
    runtime_unlock ();
}

bool msg_held_elsewhere (const flux_msg_t *msg)
{
    return __atomic_load_n (&msg->refcount, __ATOMIC_ACQUIRE) > 1;
}

/* The payload as text (NULL if none), made from the JSON on first use. */
static const char *payload_string (const flux_msg_t *cmsg)
{
    flux_msg_t *msg = (flux_msg_t *)cmsg;
    const char *s;
    runtime_lock ();
    if (msg->has_payload && !msg->string)
        msg->string = json_dumps (msg->json, JSON_COMPACT | JSON_ENCODE_ANY);
    s = msg->string;
    runtime_unlock ();
    return s;
}

/* The payload as JSON (NULL if none or not JSON), parsed on first use. */
static json_t *payload_json (const flux_msg_t *cmsg, json_error_t *error)
{
    flux_msg_t *msg = (flux_msg_t *)cmsg;
    json_t *o;
    runtime_lock ();
    if (msg->has_payload && !msg->json && msg->string)
        msg->json = json_loads (msg->string, JSON_DECODE_ANY, error);
    o = msg->json;
    runtime_unlock ();
    return o;
}

json_t *msg_payload_json (const flux_msg_t *msg)
{
    json_t *o;
    if (!msg->has_payload || msg->errnum)
        return NULL;
    if (!(o = payload_json (msg, NULL))) {
        flux_msg_t *m = (flux_msg_t *)msg;
        runtime_lock ();
        if (!m->json)
            m->json = json_string (m->string);
        o = m->json;
        runtime_unlock ();
    }
    return o;
}

/* --- accessors --------------------------------------------------------- */

int flux_msg_get_type (const flux_msg_t *msg, int *type)
{
    if (msg_valid (msg) < 0 || !type) {
        errno = EINVAL;
        return -1;
    }
    *type = msg->type;
    return 0;
}

int flux_msg_get_topic (const flux_msg_t *msg, const char **topic)
{
    if (msg_valid (msg) < 0 || !topic) {
        errno = EINVAL;
        return -1;
    }
    *topic = msg->topic;
    return 0;
}

bool flux_msg_has_payload (const flux_msg_t *msg)
{
    return msg_valid (msg) == 0 && msg->has_payload;
}

bool flux_msg_is_noresponse (const flux_msg_t *msg)
{
    return msg_valid (msg) == 0 && msg->noresponse;
}

int flux_msg_get_string (const flux_msg_t *msg, const char **s)
{
    if (msg_valid (msg) < 0)
        return -1;
    if (s)
        *s = payload_string (msg);
    return 0;
}

int flux_msg_vunpack (const flux_msg_t *msg, const char *fmt, va_list ap)
{
    json_error_t error;
    json_t *o;

    if (msg_valid (msg) < 0)
        return -1;
    msg_seterr (msg, "%s", "");
    if (!fmt || *fmt == '\0') {
        errno = EINVAL;
        return -1;
    }
    if (!msg->has_payload) {
        msg_seterr (msg, "message does not have a string payload");
        errno = EPROTO;
        return -1;
    }
    if (!(o = payload_json (msg, &error))) {
        msg_seterr (msg, "%s", error.text);
        errno = EPROTO;
        return -1;
    }
    if (!json_is_object (o)) {
        msg_seterr (msg, "payload is not a JSON object");
        errno = EPROTO;
        return -1;
    }
    if (json_vunpack_ex (o, &error, 0, fmt, ap) < 0) {
        msg_seterr (msg, "%s", error.text);
        errno = EPROTO;
        return -1;
    }
    return 0;
}

int flux_msg_unpack (const flux_msg_t *msg, const char *fmt, ...)
{
    va_list ap;
    int rc;
    va_start (ap, fmt);
    rc = flux_msg_vunpack (msg, fmt, ap);
    va_end (ap);
    return rc;
}

const char *flux_msg_last_error (const flux_msg_t *msg)
{
    if (!msg)
        return "msg object is NULL";
    if (msg->refcount <= 0)
        return "msg object is unreferenced";
    return msg->lasterr;
}

int flux_msg_get_userid (const flux_msg_t *msg, uint32_t *userid)
{
    if (msg_valid (msg) < 0 || !userid) {
        errno = EINVAL;
        return -1;
    }
    *userid = msg->cred.userid;
    return 0;
}

int flux_msg_get_rolemask (const flux_msg_t *msg, uint32_t *rolemask)
{
    if (msg_valid (msg) < 0 || !rolemask) {
        errno = EINVAL;
        return -1;
    }
    *rolemask = msg->cred.rolemask;
    return 0;
}

int flux_msg_get_cred (const flux_msg_t *msg, struct flux_msg_cred *cred)
{
    if (msg_valid (msg) < 0 || !cred) {
        errno = EINVAL;
        return -1;
    }
    *cred = msg->cred;
    return 0;
}

int flux_msg_cred_authorize (struct flux_msg_cred cred, uint32_t userid)
{
    /* As Flux's code: the owner always; others need the user role and
     * a known userid equal to the one asked for. */
    if (cred.rolemask & FLUX_ROLE_OWNER)
        return 0;
    if ((cred.rolemask & FLUX_ROLE_USER) && cred.userid != FLUX_USERID_UNKNOWN
        && cred.userid == userid)
        return 0;
    errno = EPERM;
    return -1;
}

int flux_msg_authorize (const flux_msg_t *msg, uint32_t userid)
{
    struct flux_msg_cred cred;
    if (flux_msg_get_cred (msg, &cred) < 0)
        return -1;
    return flux_msg_cred_authorize (cred, userid);
}

int flux_msg_get_errnum (const flux_msg_t *msg, int *errnum)
{
    if (msg_valid (msg) < 0 || !errnum) {
        errno = EINVAL;
        return -1;
    }
    *errnum = msg->errnum;
    return 0;
}

/* --- requests and responses -------------------------------------------- */

static int check_type (const flux_msg_t *msg, int type)
{
    if (msg_valid (msg) < 0)
        return -1;
    if (msg->type != type) {
        errno = EPROTO;
        return -1;
    }
    return 0;
}

int flux_request_decode (const flux_msg_t *msg,
                         const char **topic,
                         const char **s)
{
    if (check_type (msg, FLUX_MSGTYPE_REQUEST) < 0)
        return -1;
    if (topic)
        *topic = msg->topic;
    if (s)
        *s = payload_string (msg);
    return 0;
}

int flux_request_unpack (const flux_msg_t *msg,
                         const char **topic,
                         const char *fmt,
                         ...)
{
    va_list ap;
    int rc;

    if (check_type (msg, FLUX_MSGTYPE_REQUEST) < 0)
        return -1;
    va_start (ap, fmt);
    rc = flux_msg_vunpack (msg, fmt, ap);
    va_end (ap);
    if (rc == 0 && topic)
        *topic = msg->topic;
    return rc;
}

int flux_response_decode (const flux_msg_t *msg,
                          const char **topic,
                          const char **s)
{
    if (check_type (msg, FLUX_MSGTYPE_RESPONSE) < 0)
        return -1;
    if (msg->errnum) {
        errno = msg->errnum;
        return -1;
    }
    if (topic)
        *topic = msg->topic;
    if (s)
        *s = payload_string (msg);
    return 0;
}

int flux_response_decode_error (const flux_msg_t *msg, const char **errstr)
{
    if (!msg || !errstr) {
        errno = EINVAL;
        return -1;
    }
    if (check_type (msg, FLUX_MSGTYPE_RESPONSE) < 0)
        return -1;
    if (msg->errnum == 0 || !msg->has_payload) {
        errno = ENOENT;
        return -1;
    }
    *errstr = payload_string (msg);
    return 0;
}

/* Deliver 'response' to whoever sent 'request', once. */
static void respond_msg (const flux_msg_t *request, flux_msg_t *response)
{
    flux_msg_t *msg = (flux_msg_t *)request;
    runtime_lock ();
    if (!msg->responded) {
        msg->responded = true;
        if (msg->reply)
            msg->reply (response, msg->reply_arg);
    }
    else
        runtime_log (LOG_DEBUG, "%s: response after the first dropped",
                     msg->topic);
    runtime_unlock ();
}

/* The checks Flux makes before responding: 1 to respond, 0 to do
 * nothing (the sender wants no response), -1 on error. */
static int respond_check (flux_t *h, const flux_msg_t *request)
{
    if (!h || check_type (request, FLUX_MSGTYPE_REQUEST) < 0) {
        errno = EINVAL;
        return -1;
    }
    return request->noresponse ? 0 : 1;
}

static int respond_new (const flux_msg_t *request,
                        int errnum,
                        json_t *json,
                        const char *s)
{
    flux_msg_t *response = msg_create (FLUX_MSGTYPE_RESPONSE, request->topic);
    if (!response) {
        json_decref (json);
        return -1;
    }
    response->errnum = errnum;
    response->cred = request->cred;
    response->json = json; /* stolen */
    if (s && !(response->string = strdup (s))) {
        flux_msg_decref (response);
        return -1;
    }
    response->has_payload = json || s;
    respond_msg (request, response);
    flux_msg_decref (response);
    return 0;
}

int flux_respond (flux_t *h, const flux_msg_t *request, const char *s)
{
    int rc = respond_check (h, request);
    if (rc <= 0)
        return rc;
    return respond_new (request, 0, NULL, s);
}

int flux_respond_pack (flux_t *h,
                       const flux_msg_t *request,
                       const char *fmt,
                       ...)
{
    json_error_t error;
    va_list ap;
    json_t *o;
    int rc;

    if ((rc = respond_check (h, request)) <= 0)
        return rc;
    if (!fmt) {
        errno = EINVAL;
        return -1;
    }
    va_start (ap, fmt);
    o = plugin_vpack (&error, fmt, ap);
    va_end (ap);
    if (!o) {
        errno = EINVAL;
        return -1;
    }
    return respond_new (request, 0, o, NULL);
}

int flux_respond_error (flux_t *h,
                        const flux_msg_t *request,
                        int errnum,
                        const char *errstr)
{
    int rc = respond_check (h, request);
    if (rc <= 0)
        return rc;
    return respond_new (request, errnum ? errnum : EINVAL, NULL, errstr);
}
