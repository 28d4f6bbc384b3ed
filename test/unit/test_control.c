/* src/control: the control socket's wire format (control_proto.c), its
 * requests (control_ops.c) and its server thread (control_server.c),
 * driven through a socket in a temporary directory against an in-process
 * runtime with a plugin's services: framing, malformed and oversized
 * requests, unknown ops, owner-only ops, services (unknown, answered at
 * once, answered later from another thread, never answered), silent
 * clients, clients that never read, many clients at once. No Slurm. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <flux/core.h>
#include <flux/jobtap.h>

#include "control_proto.h"
#include "control_server.h"
#include "core_util.h"
#include "host.h"
#include "job.h"
#include "jtplugin.h"
#include "runtime.h"
#include "tap.h"

#define NCLIENTS 32

static char dir[80], sock_path[100];
static uint32_t next_role = JOBTAP_ROLE_OWNER; /* the policy's answer */
static const flux_msg_t *kept;                 /* the "later" service's */

static uint32_t test_rolemask (uint32_t uid, void *arg)
{
    (void)uid;
    (void)arg;
    return __atomic_load_n (&next_role, __ATOMIC_SEQ_CST);
}

static void echo_cb (flux_t *h, flux_msg_handler_t *mh,
                     const flux_msg_t *msg, void *arg)
{
    struct flux_msg_cred cred;
    (void)mh;
    (void)arg;
    flux_msg_get_cred (msg, &cred);
    flux_respond_pack (h, msg, "{s:I s:I}", "userid", (json_int_t)cred.userid,
                       "rolemask", (json_int_t)cred.rolemask);
}

static void later_cb (flux_t *h, flux_msg_handler_t *mh,
                      const flux_msg_t *msg, void *arg)
{
    (void)h;
    (void)mh;
    (void)arg;
    __atomic_store_n (&kept, flux_msg_incref (msg), __ATOMIC_SEQ_CST);
}

static const flux_msg_t *wait_kept (void)
{
    const flux_msg_t *msg = NULL;
    for (int i = 0; i < 500 && !msg; i++) {
        if (!(msg = __atomic_exchange_n (&kept, NULL, __ATOMIC_SEQ_CST)))
            usleep (10000);
    }
    return msg;
}

static double seconds_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int connect_sock (void)
{
    struct sockaddr_un addr = { .sun_family = AF_UNIX };
    int fd = socket (AF_UNIX, SOCK_STREAM, 0);
    snprintf (addr.sun_path, sizeof (addr.sun_path), "%s", sock_path);
    if (fd < 0 || connect (fd, (struct sockaddr *)&addr, sizeof (addr)) < 0)
        bail_out ("connect %s: %s", sock_path, strerror (errno));
    return fd;
}

/* Raw body text with a correct header. */
static void send_text (int fd, const char *text)
{
    size_t len = strlen (text);
    unsigned char hdr[4] = { (unsigned char)(len >> 24),
                             (unsigned char)(len >> 16),
                             (unsigned char)(len >> 8), (unsigned char)len };
    if (write (fd, hdr, 4) != 4 || write (fd, text, len) != (ssize_t)len)
        bail_out ("write: %s", strerror (errno));
}

/* One request on a new connection: the response (new reference). */
static json_t *ask_text (const char *text)
{
    int fd = connect_sock ();
    send_text (fd, text);
    json_t *resp = control_recv (fd);
    close (fd);
    return resp;
}

/* The response as compact text with sorted keys, for exact comparisons. */
static char last[1024];
static const char *text_of (json_t *resp)
{
    char *s = json_dumps (resp, JSON_COMPACT | JSON_SORT_KEYS);
    snprintf (last, sizeof (last), "%s", s ? s : "(none)");
    free (s);
    json_decref (resp);
    return last;
}

static const char *ask (const char *text)
{
    return text_of (ask_text (text));
}

static void test_proto (void)
{
    size_t size = 0;
    json_t *o = json_pack ("{s:s}", "op", "list");
    char *frame = control_frame (o, &size);
    ok (frame && size == 4 + 13 && frame[0] == 0 && frame[1] == 0
            && frame[2] == 0 && frame[3] == 13
            && !memcmp (frame + 4, "{\"op\":\"list\"}", 13),
        "frame: 4-byte big-endian length, then compact JSON");
    free (frame);
    json_decref (o);
    unsigned char hdr[4] = { 0x01, 0x02, 0x03, 0x04 };
    isint (control_frame_length (hdr), 0x01020304, "frame length is big-endian");

    const char *op = NULL;
    int errnum = 0;
    jobtap_host_error_t errtext;
    ok (control_request_parse ("{\"op\":", 6, &op, &errnum, &errtext) == NULL
            && errnum == EPROTO,
        "parse: malformed JSON is EPROTO");
    like (errtext.text, "^malformed request: ",
          "... \"malformed request: ...\"");
    ok (control_request_parse ("[1]", 3, &op, &errnum, &errtext) == NULL
            && errnum == EPROTO,
        "parse: not an object is EPROTO (%s)", errtext.text);
    ok (control_request_parse ("{\"op\":1}", 8, &op, &errnum, &errtext) == NULL
            && errnum == EPROTO && strstr (errtext.text, "\"op\""),
        "parse: no op string is EPROTO (%s)", errtext.text);
    o = control_request_parse ("{\"op\":\"x\"}", 10, &op, &errnum, &errtext);
    ok (o && errnum == 0 && !strcmp (op, "x"), "parse: a request");
    json_decref (o);
    is (text_of (control_response_ok (NULL)), "{\"ok\":true,\"result\":null}",
        "ok response");
    is (text_of (control_response_error (EPERM, "no %s", "way")),
        "{\"errnum\":1,\"error\":\"no way\",\"ok\":false}", "error response");

    int sv[2];
    if (socketpair (AF_UNIX, SOCK_STREAM, 0, sv) < 0)
        bail_out ("socketpair");
    unsigned char big[4] = { 0x00, 0x10, 0x00, 0x01 }; /* 1 MiB + 1 */
    if (write (sv[0], big, 4) != 4)
        bail_out ("write");
    errno = 0;
    ok (control_recv (sv[1]) == NULL && errno == EMSGSIZE,
        "recv: a message over 1 MiB is EMSGSIZE");
    o = json_pack ("{s:i}", "a", 1);
    ok (control_send (sv[0], o) == 0, "send");
    json_t *got = control_recv (sv[1]);
    ok (got && json_equal (got, o), "recv gets what send sent");
    json_decref (got);
    json_decref (o);
    close (sv[0]);
    errno = 0;
    ok (control_recv (sv[1]) == NULL && errno == ECONNRESET,
        "recv at end of file: ECONNRESET");
    close (sv[1]);
}

static void test_requests (void)
{
    struct stat st;
    ok (stat (sock_path, &st) == 0 && S_ISSOCK (st.st_mode)
            && (st.st_mode & 0777) == 0666,
        "the socket is there, mode 0666");
    is (ask ("{\"op\":\"list\"}"), "{\"ok\":true,\"result\":[\"svc.so\"]}",
        "list");
    like (ask ("{\"op\":\"list\",\"all\":true}"),
          "^\\{\"ok\":true,\"result\":\\[\"\\.priority-default\",.*\"svc.so\"\\]\\}$",
          "list all: the builtins too");
    like (ask ("{\"op\": \"list\", "),
          "^\\{\"errnum\":71,\"error\":\"malformed request: .*\",\"ok\":false\\}$",
          "malformed JSON: EPROTO, malformed request: ...");
    is (ask ("{\"op\":\"frobnicate\"}"),
        "{\"errnum\":22,\"error\":\"unknown op \\\"frobnicate\\\"\",\"ok\":false}",
        "unknown op: EINVAL");
    like (ask ("{\"op\":\"load\"}"), "\"errnum\":71,",
          "load without a path: EPROTO");

    __atomic_store_n (&next_role, JOBTAP_ROLE_USER, __ATOMIC_SEQ_CST);
    is (ask ("{\"op\":\"load\",\"path\":\"x.so\",\"conf\":{}}"),
        "{\"errnum\":1,\"error\":\"Request requires owner credentials\","
        "\"ok\":false}",
        "load by a user: EPERM");
    is (ask ("{\"op\":\"remove\",\"name\":\"all\"}"),
        "{\"errnum\":1,\"error\":\"Request requires owner credentials\","
        "\"ok\":false}",
        "remove by a user: EPERM");
    like (ask ("{\"op\":\"rpc\",\"topic\":\"svc.echo\"}"),
          "\"rolemask\":2,", "rpc by a user: the service sees FLUX_ROLE_USER");
    struct runtime *rt = host_runtime ();
    rt->config_loaded_at = 1699999999.25; /* a time that prints exactly */
    is (ask ("{\"op\":\"status\"}"),
        "{\"ok\":true,\"result\":{\"configured\":true,"
        "\"loaded_at\":1699999999.25,\"path\":null,\"reload\":null}}",
        "status by a user: builtins only, when, no reload since");
    rt->reload_at = 1700000000.5;
    rt->reload_error = strdup ("/etc/slurm/jobtap.conf:2: bad");
    is (ask ("{\"op\":\"status\"}"),
        "{\"ok\":true,\"result\":{\"configured\":true,"
        "\"loaded_at\":1699999999.25,\"path\":null,\"reload\":{\"at\":"
        "1700000000.5,\"error\":\"/etc/slurm/jobtap.conf:2: bad\",\"ok\":false}}}",
        "status: a refused reload, when and why");
    free (rt->reload_error);
    rt->reload_error = NULL;
    rt->reload_at = 0;
    if (getuid () != 1000)
        is (ask ("{\"op\":\"job\",\"id\":42}"),
            "{\"errnum\":1,\"error\":\"job 42: belongs to another user\","
            "\"ok\":false}",
            "job of another user: EPERM");
    else
        ok (1, "# SKIP job of another user (the test runs as uid 1000)");
    __atomic_store_n (&next_role, JOBTAP_ROLE_OWNER, __ATOMIC_SEQ_CST);

    like (ask ("{\"op\":\"load\",\"path\":\"/nonexistent/x.so\"}"),
          "^\\{\"errnum\":[0-9]+,\"error\":\".*x.so.*\",\"ok\":false\\}$",
          "load of a missing plugin: its error (%s)", last);
    is (ask ("{\"op\":\"remove\",\"name\":\"nope*.so\"}"),
        "{\"errnum\":2,\"error\":\"nope*.so: Failed to find plugin to remove\","
        "\"ok\":false}",
        "remove of a glob matching nothing: ENOENT");
    like (ask ("{\"op\":\"query\",\"name\":\"svc.so\"}"),
          "^\\{\"ok\":true,\"result\":\\{.*\"name\":\"svc.so\"",
          "query");
    is (ask ("{\"op\":\"rpc\",\"topic\":\"nope.nope\",\"payload\":{}}"),
        "{\"errnum\":38,\"error\":\"No service matching nope.nope is registered\","
        "\"ok\":false}",
        "rpc to an unknown topic: ENOSYS with Flux's message");
    char want[128];
    snprintf (want, sizeof (want),
              "{\"ok\":true,\"result\":{\"rolemask\":1,\"userid\":%u}}",
              (unsigned)getuid ());
    is (ask ("{\"op\":\"rpc\",\"topic\":\"job-manager.svc.echo\"}"), want,
        "rpc: the service's answer, with the caller's uid and rolemask");
    like (ask ("{\"op\":\"job\",\"id\":42}"),
          "^\\{\"ok\":true,\"result\":\\{.*\"id\":42,.*\"state\":8,",
          "job: the job's info for the owner");
    is (ask ("{\"op\":\"job\",\"id\":43}"),
        "{\"errnum\":2,\"error\":\"job 43: unknown job\",\"ok\":false}",
        "job: unknown job is ENOENT");

    /* two requests on one connection, the second in two pieces */
    int fd = connect_sock ();
    send_text (fd, "{\"op\":\"list\"}");
    json_t *r1 = control_recv (fd);
    if (write (fd, "\0\0\0\015", 4) != 4)
        bail_out ("write");
    usleep (50000);
    if (write (fd, "{\"op\":\"list\"}", 13) != 13)
        bail_out ("write");
    json_t *r2 = control_recv (fd);
    ok (r1 && r2 && json_equal (r1, r2),
        "two requests on one connection, one sent in pieces");
    json_decref (r1);
    json_decref (r2);
    close (fd);
}

static void test_limits (void)
{
    /* 1 MiB + 1 announced: EMSGSIZE, then the connection ends */
    int fd = connect_sock ();
    if (write (fd, "\x00\x10\x00\x01", 4) != 4)
        bail_out ("write");
    is (text_of (control_recv (fd)),
        "{\"errnum\":90,\"error\":\"request of 1048577 bytes is larger than "
        "the limit of 1048576 bytes\",\"ok\":false}",
        "oversized request: EMSGSIZE");
    char c;
    ok (read (fd, &c, 1) == 0, "... and the connection is closed");
    close (fd);

    /* a silent client is closed after the I/O timeout (500 ms here),
     * and meanwhile 32 clients at once are served */
    int silent = connect_sock ();
    double t0 = seconds_now ();
    int fds[NCLIENTS];
    for (int i = 0; i < NCLIENTS; i++) {
        fds[i] = connect_sock ();
        send_text (fds[i], "{\"op\":\"list\"}");
    }
    int good = 0;
    for (int i = NCLIENTS - 1; i >= 0; i--) {
        json_t *r = control_recv (fds[i]);
        if (r && json_is_true (json_object_get (r, "ok")))
            good++;
        json_decref (r);
        close (fds[i]);
    }
    isint (good, NCLIENTS, "%d clients at once are all answered",
           NCLIENTS);
    ok (seconds_now () - t0 < 0.5, "... while a silent client is connected");
    struct pollfd pfd = { silent, POLLIN, 0 };
    ok (poll (&pfd, 1, 3000) == 1 && read (silent, &c, 1) == 0,
        "the silent client is closed");
    double waited = seconds_now () - t0;
    ok (waited >= 0.4 && waited < 2.5, "... after the timeout (%.2f s)",
        waited);
    close (silent);

    /* a client that sends and never reads: once its answers fill the
     * socket, the server stops reading it, serves the others, and closes
     * it after the I/O timeout */
    int greedy = connect_sock ();
    int flags = fcntl (greedy, F_GETFL);
    if (flags < 0 || fcntl (greedy, F_SETFL, flags | O_NONBLOCK) < 0)
        bail_out ("fcntl: %s", strerror (errno));
    const char req[] = "\x00\x00\x00\x0d{\"op\":\"list\"}";
    int sent = 0;
    double start = seconds_now ();
    while (seconds_now () - start < 5) {
        if (send (greedy, req, sizeof (req) - 1, MSG_NOSIGNAL) < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                break;
            usleep (1000); /* the server may still catch up */
            if (seconds_now () - start > 1)
                break;
            continue;
        }
        sent++;
        start = seconds_now ();
    }
    ok (sent > 10, "a client that never reads sends %d requests until the "
        "server stops reading them", sent);
    t0 = seconds_now ();
    like (ask ("{\"op\":\"list\"}"), "^\\{\"ok\":true",
          "meanwhile another client is answered");
    ok (seconds_now () - t0 < 0.3, "... at once");
    usleep (1200 * 1000); /* past the 500 ms I/O timeout */
    int answers = 0, end = 0;
    char buf[4096];
    for (;;) {
        ssize_t n = read (greedy, buf, sizeof (buf));
        if (n > 0) {
            answers += (int)n;
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            pfd = (struct pollfd){ greedy, POLLIN, 0 };
            if (poll (&pfd, 1, 2000) == 1)
                continue;
        }
        end = n == 0 || (n < 0 && errno == ECONNRESET);
        break;
    }
    ok (end, "the server closed it (%d bytes of answers were waiting)",
        answers);
    close (greedy);
}

static void test_deferred (void)
{
    /* answered later, from this thread while the server's waits */
    int fd = connect_sock ();
    send_text (fd, "{\"op\":\"rpc\",\"topic\":\"svc.later\",\"payload\":{}}");
    const flux_msg_t *msg = wait_kept ();
    ok (msg != NULL, "deferred rpc: the service kept the request");
    struct pollfd pfd = { fd, POLLIN, 0 };
    ok (poll (&pfd, 1, 100) == 0, "... no response yet");
    flux_respond_pack (host_runtime ()->h, msg, "{s:s}", "x", "late");
    flux_msg_decref (msg);
    is (text_of (control_recv (fd)), "{\"ok\":true,\"result\":{\"x\":\"late\"}}",
        "... the late answer reaches the client");
    close (fd);

    /* never answered in time: ETIMEDOUT; the late answer is dropped */
    fd = connect_sock ();
    send_text (fd, "{\"op\":\"rpc\",\"topic\":\"svc.later\"}");
    msg = wait_kept ();
    is (text_of (control_recv (fd)),
        "{\"errnum\":110,\"error\":\"svc.later: no response within 1 s\","
        "\"ok\":false}",
        "a service that does not answer in time: ETIMEDOUT");
    ok (flux_respond (host_runtime ()->h, msg, NULL) == 0,
        "... its answer after the timeout goes nowhere");
    flux_msg_decref (msg);
    close (fd);

    /* the client leaves while its rpc waits */
    fd = connect_sock ();
    send_text (fd, "{\"op\":\"rpc\",\"topic\":\"svc.later\"}");
    msg = wait_kept ();
    close (fd);
    usleep (100000);
    ok (flux_respond (host_runtime ()->h, msg, NULL) == 0,
        "an answer after the client left goes nowhere");
    flux_msg_decref (msg);

    /* the server stops while an rpc waits (checked at the end) */
    fd = connect_sock ();
    send_text (fd, "{\"op\":\"rpc\",\"topic\":\"svc.later\"}");
    msg = wait_kept ();
    ok (msg != NULL, "an rpc waits as the server stops");
    close (fd);
    /* answered after control_server_stop, in main */
    __atomic_store_n (&kept, msg, __ATOMIC_SEQ_CST);
}

static void make_stale_socket (void)
{
    struct sockaddr_un addr = { .sun_family = AF_UNIX };
    int fd = socket (AF_UNIX, SOCK_STREAM, 0);
    snprintf (addr.sun_path, sizeof (addr.sun_path), "%s", sock_path);
    if (fd < 0 || bind (fd, (struct sockaddr *)&addr, sizeof (addr)) < 0)
        bail_out ("stale socket: %s", strerror (errno));
    close (fd); /* the file stays */
}

int main (void)
{
    jobtap_host_error_t err = {{0}};
    struct runtime *rt;
    struct jt_plugin *jt;
    const char *tmp = getenv ("TMPDIR");

    test_proto ();

    core_host_setup (NULL, NULL, NULL);
    rt = host_runtime ();
    jt = core_plugin_make (rt, "svc.so");
    if (flux_plugin_set_name (jt->p, "svc") < 0
        || flux_jobtap_service_register_ex (jt->p, "echo", FLUX_ROLE_USER,
                                            echo_cb, NULL) < 0
        || flux_jobtap_service_register (jt->p, "later", later_cb, NULL) < 0)
        bail_out ("cannot register the test services");
    struct job *job = core_job_in_table (rt, 42, FLUX_JOB_STATE_SCHED);
    job->userid = 1000;

    snprintf (dir, sizeof (dir), "%s/test_control.XXXXXX",
              tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp (dir))
        bail_out ("mkdtemp");
    snprintf (sock_path, sizeof (sock_path), "%s/jobtap.sock", dir);
    make_stale_socket ();

    struct control_config cfg = {
        .path = sock_path,
        .rolemask_of = test_rolemask,
        .io_timeout_ms = 500,
        .rpc_timeout_ms = 1000,
    };
    struct control_server *srv = control_server_start (&cfg, &err);
    ok (srv != NULL, "server starts over a stale socket (%s)", err.text);
    if (!srv)
        bail_out ("no server");
    struct control_server *second = control_server_start (&cfg, &err);
    ok (second != NULL, "a second server takes the path over");
    control_server_stop (srv);
    ok (access (sock_path, F_OK) == 0,
        "the first one's stop leaves the second one's socket");
    srv = second;

    test_requests ();
    test_limits ();
    test_deferred ();

    control_server_stop (srv);
    ok (access (sock_path, F_OK) < 0, "stop removes the socket");
    const flux_msg_t *msg = __atomic_exchange_n (&kept, NULL,
                                                 __ATOMIC_SEQ_CST);
    ok (msg && flux_respond (host_runtime ()->h, msg, NULL) == 0,
        "an answer after the server stopped goes nowhere");
    flux_msg_decref (msg);

    char longpath[200];
    memset (longpath, 'x', sizeof (longpath) - 1);
    longpath[0] = '/';
    longpath[sizeof (longpath) - 1] = '\0';
    cfg.path = longpath;
    errno = 0;
    ok (control_server_start (&cfg, &err) == NULL && errno == ENAMETOOLONG,
        "a path too long for a socket: %s", err.text);
    cfg.path = dir; /* a directory */
    ok (control_server_start (&cfg, &err) == NULL && errno == EEXIST,
        "a path that is no socket is left alone: %s", err.text);

    rmdir (dir);
    core_host_teardown ();
    done_testing ();
}
