/* msg.c, service.c, rpc.c: requests decoded and unpacked, credentials
 * and authorization, responses now and later (a kept request, another
 * thread), the host's service calls (sync and async), and flux_rpc with
 * futures and continuations, to services registered in this runtime. */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>
#include <flux/core.h>
#include <flux/jobtap.h>

#include "core_util.h"
#include "host.h"
#include "jtplugin.h"
#include "runtime.h"
#include "tap.h"

static jobtap_host_error_t err;
static const flux_msg_t *kept;     /* a request the "later" service kept */

/* "echo": unpacks {a:i}, answers {a, topic, userid, rolemask} */
static void echo_cb (flux_t *h, flux_msg_handler_t *mh,
                     const flux_msg_t *msg, void *arg)
{
    struct flux_msg_cred cred;
    const char *topic;
    int a;
    (void)mh;
    (void)arg;
    if (flux_request_unpack (msg, &topic, "{s:i}", "a", &a) < 0
        || flux_msg_get_cred (msg, &cred) < 0) {
        flux_respond_error (h, msg, errno, flux_msg_last_error (msg));
        return;
    }
    flux_respond_pack (h, msg, "{s:i s:s s:I s:I}",
                       "a", a,
                       "topic", topic,
                       "userid", (json_int_t)cred.userid,
                       "rolemask", (json_int_t)cred.rolemask);
}

/* "text": answers with the request's payload text, or nothing */
static void text_cb (flux_t *h, flux_msg_handler_t *mh,
                     const flux_msg_t *msg, void *arg)
{
    const char *s = NULL;
    (void)mh;
    (void)arg;
    if (flux_request_decode (msg, NULL, &s) < 0)
        flux_respond_error (h, msg, errno, NULL);
    else
        flux_respond (h, msg, s);
}

static void later_cb (flux_t *h, flux_msg_handler_t *mh,
                      const flux_msg_t *msg, void *arg)
{
    (void)h;
    (void)mh;
    (void)arg;
    kept = flux_msg_incref (msg);
}

static void drop_cb (flux_t *h, flux_msg_handler_t *mh,
                     const flux_msg_t *msg, void *arg)
{
    (void)h;
    (void)mh;
    (void)msg;
    (void)arg;
}

static void fail_cb (flux_t *h, flux_msg_handler_t *mh,
                     const flux_msg_t *msg, void *arg)
{
    (void)mh;
    (void)arg;
    flux_respond_error (h, msg, EPERM, "nope");
}

static int second_rc = -2;
static void twice_cb (flux_t *h, flux_msg_handler_t *mh,
                      const flux_msg_t *msg, void *arg)
{
    (void)mh;
    (void)arg;
    flux_respond_pack (h, msg, "{s:i}", "n", 1);
    second_rc = flux_respond_pack (h, msg, "{s:i}", "n", 2);
}

/* The host's async done callback, recorded. */
static int done_calls, done_errnum;
static char done_text[256];
static void record_done (json_t *response, int errnum, const char *errstr,
                         void *arg)
{
    (void)arg;
    done_calls++;
    done_errnum = errnum;
    if (errnum)
        snprintf (done_text, sizeof (done_text), "%s", errstr);
    else {
        char *s = json_dumps (response, JSON_COMPACT | JSON_ENCODE_ANY
                                            | JSON_SORT_KEYS);
        snprintf (done_text, sizeof (done_text), "%s", s ? s : "(null)");
        free (s);
    }
}

static void done_reset (void)
{
    done_calls = done_errnum = 0;
    done_text[0] = '\0';
}

static void test_cred (void)
{
    struct flux_msg_cred owner = { 0, FLUX_ROLE_OWNER };
    struct flux_msg_cred user = { 1000, FLUX_ROLE_USER };
    struct flux_msg_cred norole = { 1000, FLUX_ROLE_NONE };
    struct flux_msg_cred unknown = { FLUX_USERID_UNKNOWN, FLUX_ROLE_USER };

    ok (flux_msg_cred_authorize (owner, 1234) == 0,
        "cred_authorize: the owner may act for anyone");
    ok (flux_msg_cred_authorize (user, 1000) == 0,
        "cred_authorize: a user for himself");
    errno = 0;
    ok (flux_msg_cred_authorize (user, 1001) < 0 && errno == EPERM,
        "cred_authorize: not for another user (EPERM)");
    errno = 0;
    ok (flux_msg_cred_authorize (norole, 1000) < 0 && errno == EPERM,
        "cred_authorize: without FLUX_ROLE_USER, EPERM (as Flux's code)");
    errno = 0;
    ok (flux_msg_cred_authorize (unknown, FLUX_USERID_UNKNOWN) < 0
            && errno == EPERM,
        "cred_authorize: FLUX_USERID_UNKNOWN matches nobody");
    errno = 0;
    ok (flux_msg_incref (NULL) == NULL && errno == EINVAL,
        "flux_msg_incref (NULL): EINVAL");
    flux_msg_decref (NULL);
    ok (flux_msg_get_cred (NULL, &owner) < 0 && errno == EINVAL,
        "flux_msg_get_cred (NULL): EINVAL");
    is (flux_msg_last_error (NULL), "msg object is NULL",
        "flux_msg_last_error (NULL)");
    ok (flux_respond (NULL, NULL, NULL) < 0 && errno == EINVAL,
        "flux_respond (NULL): EINVAL");
}

static void test_host_calls (void)
{
    json_t *resp = NULL, *req;
    json_int_t a = 0, userid = 0, rolemask = 0;
    const char *topic = "";

    req = json_pack ("{s:i}", "a", 7);
    ok (jobtap_host_service_call ("job-manager.svc.echo", req, 1000,
                                  FLUX_ROLE_USER, &resp, &err) == 0
            && json_unpack (resp, "{s:I s:s s:I s:I}", "a", &a,
                            "topic", &topic, "userid", &userid,
                            "rolemask", &rolemask) == 0,
        "sync call: the handler unpacks the request and responds");
    ok (a == 7 && !strcmp (topic, "job-manager.svc.echo") && userid == 1000
            && rolemask == FLUX_ROLE_USER,
        "... with the payload, topic and the caller's cred");
    json_decref (resp);
    json_decref (req);

    errno = 0;
    ok (jobtap_host_service_call ("job-manager.svc.echo", NULL, 1000,
                                  FLUX_ROLE_USER, &resp, &err) < 0
            && errno == EPROTO,
        "no payload: flux_request_unpack fails with EPROTO");
    is (err.text, "message does not have a string payload",
        "... and flux_msg_last_error says why");
    json_t *bad = json_pack ("{s:s}", "a", "x");
    ok (jobtap_host_service_call ("job-manager.svc.echo", bad, 1000,
                                  FLUX_ROLE_USER, &resp, &err) < 0
            && errno == EPROTO && strstr (err.text, "integer") != NULL,
        "wrong type: EPROTO with jansson's text (%s)", err.text);
    json_decref (bad);

    errno = 0;
    ok (jobtap_host_service_call ("job-manager.svc.fail", NULL, 0,
                                  FLUX_ROLE_OWNER, &resp, &err) < 0
            && errno == EPERM,
        "error response: its errnum");
    is (err.text, "nope", "... and its text");
    errno = 0;
    ok (jobtap_host_service_call ("job-manager.svc.fail", NULL, 1000,
                                  FLUX_ROLE_USER, &resp, &err) < 0
            && errno == EPERM,
        "owner-only service refuses a user: EPERM");
    is (err.text, "Request requires owner credentials", "... says why");

    errno = 0;
    ok (jobtap_host_service_call ("kvs.lookup", NULL, 0, FLUX_ROLE_OWNER,
                                  &resp, &err) < 0
            && errno == ENOSYS,
        "unknown service: ENOSYS");
    is (err.text, "No service matching kvs.lookup is registered",
        "... with Flux's broker message");
    ok (jobtap_host_service_call ("svc.text", NULL, 0, FLUX_ROLE_OWNER,
                                  &resp, &err) == 0
            && json_is_null (resp),
        "short topic form; no payload gives JSON null");
    json_decref (resp);

    /* a handler that keeps the request and answers later */
    done_reset ();
    req = json_pack ("{s:i}", "a", 1);
    ok (jobtap_host_service_call_async ("job-manager.svc.later", req, 0,
                                        FLUX_ROLE_OWNER, record_done, NULL,
                                        &err) == 0
            && kept && done_calls == 0,
        "async call: the handler kept the request, no response yet");
    int a1 = 0;
    ok (flux_msg_unpack (kept, "{s:i}", "a", &a1) == 0 && a1 == 1,
        "flux_msg_unpack of the kept request after its handler returned");
    ok (flux_respond_pack (host_runtime ()->h, kept, "{s:s}", "x", "late")
                == 0
            && done_calls == 1 && !strcmp (done_text, "{\"x\":\"late\"}"),
        "a deferred flux_respond_pack reaches done");
    flux_msg_decref (kept);
    kept = NULL;
    isint (done_calls, 1, "done ran once (the decref sends nothing more)");
    json_decref (req);

    errno = 0;
    ok (jobtap_host_service_call ("job-manager.svc.later", NULL, 0,
                                  FLUX_ROLE_OWNER, &resp, &err) < 0
            && errno == EINPROGRESS && kept,
        "sync call to a handler that answers later: EINPROGRESS");
    like (err.text, "responds later", "... says so (%s)", err.text);
    ok (flux_respond (host_runtime ()->h, kept, NULL) == 0,
        "the late response goes nowhere, without error");
    flux_msg_decref (kept);
    kept = NULL;

    done_reset ();
    ok (jobtap_host_service_call_async ("job-manager.svc.drop", NULL, 0,
                                        FLUX_ROLE_OWNER, record_done, NULL,
                                        &err) == 0
            && done_calls == 1 && done_errnum == EPROTO,
        "a request dropped unanswered gives done EPROTO");
    like (done_text, "request dropped without a response", "... says so");
    errno = 0;
    ok (jobtap_host_service_call ("job-manager.svc.drop", NULL, 0,
                                  FLUX_ROLE_OWNER, &resp, &err) < 0
            && errno == EPROTO,
        "sync call to a handler that drops the request: EPROTO");
    like (err.text, "request dropped without a response", "... says so");
    done_reset ();
    ok (jobtap_host_service_call_async ("nope.nope", NULL, 0,
                                        FLUX_ROLE_OWNER, record_done, NULL,
                                        &err) < 0
            && errno == ENOSYS && done_calls == 0,
        "async call to an unknown service: -1 ENOSYS, done not called");

    ok (jobtap_host_service_call ("job-manager.svc.twice", NULL, 0,
                                  FLUX_ROLE_OWNER, &resp, &err) == 0
            && json_integer_value (json_object_get (resp, "n")) == 1
            && second_rc == 0,
        "a second response is dropped (returns 0); the first counts");
    json_decref (resp);
}

static void *respond_thread (void *arg)
{
    (void)arg;
    flux_respond_pack (host_runtime ()->h, kept, "{s:s}", "from", "thread");
    flux_msg_decref (kept);
    return NULL;
}

static void test_thread_response (void)
{
    pthread_t t = 0;
    done_reset ();
    kept = NULL;
    jobtap_host_service_call_async ("job-manager.svc.later", NULL, 0,
                                    FLUX_ROLE_OWNER, record_done, NULL, &err);
    if (!kept || pthread_create (&t, NULL, respond_thread, NULL) != 0)
        bail_out ("cannot start the responding thread");
    pthread_join (t, NULL);
    kept = NULL;
    ok (done_calls == 1 && !strcmp (done_text, "{\"from\":\"thread\"}"),
        "a response from another thread reaches done");
}

static int then_calls;
static char then_text[128];
static void then_cb (flux_future_t *f, void *arg)
{
    const char *s = NULL;
    then_calls++;
    if (flux_rpc_get (f, &s) < 0)
        snprintf (then_text, sizeof (then_text), "error %d", errno);
    else
        snprintf (then_text, sizeof (then_text), "%s", s ? s : "(none)");
    if (arg) /* asked to destroy the future, as continuations do */
        flux_future_destroy (f);
}

static void test_rpc (flux_t *h)
{
    flux_future_t *f;
    const char *s = NULL, *topic = NULL;
    json_int_t userid = 0, rolemask = 0;
    int a = 0;

    f = flux_rpc_pack (h, "job-manager.svc.echo", FLUX_NODEID_ANY, 0,
                       "{s:i}", "a", 42);
    ok (f && flux_future_is_ready (f), "flux_rpc_pack: answered at once");
    ok (flux_rpc_get_unpack (f, "{s:i s:s s:I s:I}", "a", &a, "topic", &topic,
                             "userid", &userid, "rolemask", &rolemask) == 0
            && a == 42 && !strcmp (topic, "job-manager.svc.echo"),
        "flux_rpc_get_unpack");
    ok (userid == (json_int_t)getuid () && (rolemask & FLUX_ROLE_OWNER),
        "a plugin's rpc comes from the instance owner");
    errno = 0;
    ok (flux_rpc_get_unpack (f, "{s:s}", "a", &s) < 0 && errno == EPROTO,
        "flux_rpc_get_unpack of the wrong type: EPROTO");
    const void *result = NULL;
    const char *rtopic = NULL;
    ok (flux_future_get (f, &result) == 0 && result
            && flux_response_decode (result, &rtopic, NULL) == 0
            && !strcmp (rtopic, "job-manager.svc.echo"),
        "flux_future_get gives the response message");
    errno = 0;
    ok (flux_request_decode (result, NULL, NULL) < 0 && errno == EPROTO,
        "flux_request_decode of a response: EPROTO");
    flux_future_destroy (f);

    f = flux_rpc (h, "svc.text", "{\"b\":[1,2]}", 0, 0);
    ok (flux_rpc_get (f, &s) == 0 && s && !strcmp (s, "{\"b\":[1,2]}"),
        "flux_rpc, short topic: flux_rpc_get gives the payload text");
    flux_future_destroy (f);
    f = flux_rpc (h, "svc.text", NULL, 0, 0);
    ok (flux_rpc_get (f, &s) == 0 && s == NULL,
        "no payload: flux_rpc_get gives NULL");
    errno = 0;
    ok (flux_rpc_get_unpack (f, "{}") < 0 && errno == EPROTO,
        "... and flux_rpc_get_unpack fails with EPROTO");
    flux_future_destroy (f);
    f = flux_rpc (h, "svc.echo", "[1]", 0, 0);
    ok (flux_rpc_get (f, NULL) < 0 && errno == EPROTO,
        "a payload that is no object: the handler's unpack fails EPROTO");
    is (flux_future_error_string (f), "payload is not a JSON object",
        "... with flux_msg_last_error as the error text");
    flux_future_destroy (f);

    f = flux_rpc (h, "kvs.lookup", "{}", 0, 0);
    ok (f != NULL, "rpc to a broker service: a future, not a failure");
    errno = 0;
    ok (flux_rpc_get (f, NULL) < 0 && errno == ENOSYS,
        "... flux_rpc_get fails with ENOSYS");
    ok (flux_future_has_error (f), "... flux_future_has_error");
    is (future_strerror (f, errno),
        "No service matching kvs.lookup is registered",
        "... future_strerror gives Flux's message");
    flux_future_destroy (f);

    f = flux_rpc (h, "svc.fail", NULL, 0, 0);
    errno = 0;
    ok (flux_rpc_get (f, NULL) < 0 && errno == EPERM,
        "error response: errno from the handler");
    is (flux_future_error_string (f), "nope", "... and its text");
    flux_future_destroy (f);

    /* continuations */
    then_calls = 0;
    f = flux_rpc (h, "svc.text", "\"hi\"", 0, 0);
    ok (flux_future_then (f, -1., then_cb, NULL) == 0 && then_calls == 1
            && !strcmp (then_text, "\"hi\""),
        "flux_future_then on a ready future runs at once");
    flux_future_destroy (f);

    then_calls = 0;
    kept = NULL;
    f = flux_rpc (h, "svc.later", "{}", 0, 0);
    ok (f && !flux_future_is_ready (f) && kept, "a deferred rpc is not ready");
    errno = 0;
    ok (flux_future_get (f, NULL) < 0 && errno == EDEADLK,
        "flux_future_get cannot wait (no reactor): EDEADLK");
    errno = 0;
    ok (flux_future_wait_for (f, 0.) < 0 && errno == ETIMEDOUT,
        "flux_future_wait_for (0): ETIMEDOUT");
    ok (flux_future_then (f, 5., then_cb, (void *)1) == 0 && then_calls == 0,
        "flux_future_then waits for the response");
    flux_respond (h, kept, "\"later\"");
    ok (then_calls == 1 && !strcmp (then_text, "\"later\""),
        "the response runs the continuation (which destroys the future)");
    flux_msg_decref (kept);

    kept = NULL;
    f = flux_rpc (h, "svc.later", NULL, 0, 0);
    flux_future_destroy (f);
    ok (flux_respond (h, kept, NULL) == 0,
        "a response after its future was destroyed goes nowhere");
    flux_msg_decref (kept);
    kept = NULL;

    then_calls = 0;
    f = flux_rpc (h, "svc.drop", NULL, 0, 0);
    ok (flux_future_then (f, -1., then_cb, NULL) == 0 && then_calls == 1
            && !strcmp (then_text, "error 71"),
        "a dropped request fulfills the future with EPROTO");
    flux_future_destroy (f);

    f = flux_rpc (h, "svc.echo", "{\"a\":1}", 0, FLUX_RPC_NORESPONSE);
    ok (f && flux_future_is_ready (f) && flux_rpc_get (f, &s) == 0 && !s,
        "FLUX_RPC_NORESPONSE: fulfilled at once, nothing to get");
    flux_future_destroy (f);
    errno = 0;
    ok (flux_rpc (h, "svc.echo", NULL, 0, FLUX_RPC_STREAMING) == NULL
            && errno == EINVAL,
        "FLUX_RPC_STREAMING: EINVAL (not supported)");
    errno = 0;
    ok (flux_rpc (NULL, "svc.echo", NULL, 0, 0) == NULL && errno == EINVAL,
        "flux_rpc (NULL handle): EINVAL");
    ok (flux_future_then (NULL, -1., then_cb, NULL) < 0 && errno == EINVAL,
        "flux_future_then (NULL): EINVAL");
    flux_future_destroy (NULL);
}

int main (void)
{
    struct runtime *rt;
    struct jt_plugin *jt;

    core_host_setup (NULL, NULL, NULL);
    rt = host_runtime ();
    jt = core_plugin_make (rt, "svc.so");
    if (flux_plugin_set_name (jt->p, "svc") < 0
        || flux_jobtap_service_register_ex (jt->p, "echo", FLUX_ROLE_USER,
                                            echo_cb, NULL) < 0
        || flux_jobtap_service_register (jt->p, "text", text_cb, NULL) < 0
        || flux_jobtap_service_register (jt->p, "later", later_cb, NULL) < 0
        || flux_jobtap_service_register (jt->p, "drop", drop_cb, NULL) < 0
        || flux_jobtap_service_register (jt->p, "fail", fail_cb, NULL) < 0
        || flux_jobtap_service_register (jt->p, "twice", twice_cb, NULL) < 0)
        bail_out ("cannot register the test services");

    test_cred ();
    test_host_calls ();
    test_thread_response ();
    test_rpc (rt->h);

    core_host_teardown ();
    done_testing ();
}
