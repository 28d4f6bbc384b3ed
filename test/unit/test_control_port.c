/* The control port (TCP): control_munge.c (requests sealed in munge
 * credentials), control_listen.c (the listening sockets) and the server's
 * TCP path (control_server.c). The checks that need munged run against a
 * private one started here (skipped where munged is not installed); the
 * rest need nothing. No Slurm, no runtime beyond the server's host calls. */
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <jansson.h>

#include "control_listen.h"
#include "control_munge.h"
#include "control_proto.h"
#include "control_server.h"
#include "core_util.h"
#include "host.h"
#include "tap.h"

#define MUNGED "/usr/sbin/munged"

static char dir[80], munge_sock[120];
static pid_t munged_pid = -1;

static uint32_t seen_uid = 12345;
static uint32_t test_rolemask (uint32_t uid, void *arg)
{
    (void)arg;
    __atomic_store_n (&seen_uid, uid, __ATOMIC_SEQ_CST);
    return uid == 0 ? JOBTAP_ROLE_OWNER : JOBTAP_ROLE_USER;
}

static const char *text_of (json_t *o)
{
    static char last[1024];
    char *s = o ? json_dumps (o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    snprintf (last, sizeof (last), "%s", s ? s : "(none)");
    free (s);
    json_decref (o);
    return last;
}

static void test_authinfo (void)
{
    char *s = control_munge_socket_of_authinfo ("socket=/run/m.sock");
    is (s, "/run/m.sock", "AuthInfo socket= alone");
    free (s);
    s = control_munge_socket_of_authinfo ("ttl=60,socket=/x/y,disable_x11");
    is (s, "/x/y", "AuthInfo socket= among other options");
    free (s);
    ok (control_munge_socket_of_authinfo ("ttl=60") == NULL
            && control_munge_socket_of_authinfo (NULL) == NULL
            && control_munge_socket_of_authinfo ("socket=") == NULL,
        "no socket=: munge's default (NULL)");
}

static void test_open_without_munged (void)
{
    jobtap_host_error_t errtext;
    char *req = NULL;
    uint32_t uid = 0;
    void *ctx = control_munge_ctx_create ("/nonexistent/munge.sock");

    ok (ctx != NULL, "a munge context for any socket path");
    errno = 0;
    ok (control_munge_open (ctx, "[1]", 3, &req, &uid, &errtext) < 0
            && errno == EPROTO,
        "a frame that is no object: EPROTO (%s)", errtext.text);
    errno = 0;
    ok (control_munge_open (ctx, "{\"op\":\"list\"}", 13, &req, &uid,
                            &errtext) < 0
            && errno == EPERM,
        "a frame without a credential: EPERM");
    is (errtext.text, "authentication failed: a request over TCP must be sealed "
                 "in a munge credential", "... and says what is missing");
    errno = 0;
    ok (control_munge_open (ctx, "{\"munge\":\"MUNGE:junk\"}", 22, &req, &uid,
                            &errtext) < 0 && errno == EPERM,
        "a credential munged cannot check: EPERM");
    like (errtext.text, "^authentication failed: munge: ",
          "... with munge's reason (%s)",
          errtext.text);
    control_munge_ctx_destroy (ctx);

    json_t *big = json_pack ("{s:s%}", "x", "", (size_t)0);
    char *pad = malloc (CONTROL_MAX_SEALED + 1);
    memset (pad, 'a', CONTROL_MAX_SEALED);
    pad[CONTROL_MAX_SEALED] = '\0';
    json_object_set_new (big, "x", json_string (pad));
    free (pad);
    errno = 0;
    ok (control_munge_seal (big, "/nonexistent/munge.sock", &errtext) == NULL
            && errno == EMSGSIZE,
        "seal: a request over the TCP limit is refused before munge");
    like (errtext.text, "^request of [0-9]+ bytes is larger than the limit of "
                   "524288 bytes over TCP$", "... saying the limit");
    json_decref (big);
    json_t *small = json_pack ("{s:s}", "op", "list");
    errno = 0;
    ok (control_munge_seal (small, "/nonexistent/munge.sock", &errtext) == NULL
            && errno == EPERM,
        "seal with no munged: EPERM");
    like (errtext.text, "^munge: ", "... with munge's reason (%s)",
          errtext.text);
    json_decref (small);
}

static int port_of (int fd)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof (ss);
    if (getsockname (fd, (struct sockaddr *)&ss, &len) < 0)
        return -1;
    return ss.ss_family == AF_INET6
               ? ntohs (((struct sockaddr_in6 *)&ss)->sin6_port)
               : ntohs (((struct sockaddr_in *)&ss)->sin_port);
}

/* A TCP port free now: bind port 0, read it, close. */
static int free_port (void)
{
    int fd = socket (AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET,
                             .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
    if (fd < 0 || bind (fd, (struct sockaddr *)&a, sizeof (a)) < 0)
        bail_out ("free port: %s", strerror (errno));
    int port = port_of (fd);
    close (fd);
    return port;
}

static void test_listen (void)
{
    jobtap_host_error_t err = {{0}};
    int port = free_port ();

    errno = 0;
    ok (control_listen_tcp (NULL, 0, &err) < 0 && errno == EINVAL,
        "port 0 is refused: %s", err.text);
    ok (control_listen_tcp (NULL, 70000, &err) < 0 && errno == EINVAL,
        "port 70000 is refused");
    ok (control_listen_tcp ("no.such.host.invalid", port, &err) < 0,
        "an address that does not resolve: %s", err.text);
    int fd = control_listen_tcp ("127.0.0.1", port, &err);
    ok (fd >= 0 && port_of (fd) == port, "listen on 127.0.0.1:%d", port);
    int again = control_listen_tcp ("127.0.0.1", port, &err);
    ok (again >= 0, "the same port again, as a successor would (SO_REUSEPORT)");
    close (again);
    close (fd);
    fd = socket (AF_INET, SOCK_STREAM, 0); /* another program's */
    struct sockaddr_in a = { .sin_family = AF_INET,
                             .sin_port = htons ((uint16_t)port),
                             .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
    if (fd < 0 || bind (fd, (struct sockaddr *)&a, sizeof (a)) < 0
        || listen (fd, 1) < 0)
        bail_out ("bind: %s", strerror (errno));
    errno = 0;
    ok (control_listen_tcp ("127.0.0.1", port, &err) < 0 && errno == EADDRINUSE,
        "a port another program holds: EADDRINUSE");
    like (err.text, "^control port 127\\.0\\.0\\.1:[0-9]+: Address already in use$",
          "... named in the error");
    close (fd);
    fd = control_listen_tcp (NULL, port, &err);
    ok (fd >= 0, "listen on every address (%s)", fd < 0 ? err.text : "ok");
    if (fd >= 0)
        close (fd);
}

static bool start_munged (void)
{
    char key[120], pidf[120], seed[120], logf[120];

    if (access (MUNGED, X_OK) < 0)
        return false;
    snprintf (munge_sock, sizeof (munge_sock), "%s/munge.sock", dir);
    snprintf (key, sizeof (key), "%s/munge.key", dir);
    snprintf (pidf, sizeof (pidf), "%s/munged.pid", dir);
    snprintf (seed, sizeof (seed), "%s/munged.seed", dir);
    snprintf (logf, sizeof (logf), "%s/munged.log", dir);
    FILE *f = fopen (key, "w");
    for (int i = 0; f && i < 1024; i++)
        fputc ((i * 7919 + 13) & 0xff, f);
    if (!f || fclose (f) != 0 || chmod (key, 0400) < 0)
        return false;
    char sock_opt[160], key_opt[160], pid_opt[160], seed_opt[160], log_opt[160];
    snprintf (sock_opt, sizeof (sock_opt), "--socket=%s", munge_sock);
    snprintf (key_opt, sizeof (key_opt), "--key-file=%s", key);
    snprintf (pid_opt, sizeof (pid_opt), "--pid-file=%s", pidf);
    snprintf (seed_opt, sizeof (seed_opt), "--seed-file=%s", seed);
    snprintf (log_opt, sizeof (log_opt), "--log-file=%s", logf);
    if ((munged_pid = fork ()) == 0) {
        execl (MUNGED, MUNGED, "-F", "--force", sock_opt, key_opt, pid_opt,
               seed_opt, log_opt, (char *)NULL);
        _exit (127);
    }
    for (int i = 0; i < 500; i++) {
        struct stat st;
        if (stat (munge_sock, &st) == 0)
            return true;
        usleep (10000);
    }
    return false;
}

static json_t *exchange (int fd, json_t *msg)
{
    if (control_send (fd, msg) < 0)
        return NULL;
    return control_recv (fd);
}

static int connect_port (int port)
{
    int fd = socket (AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET,
                             .sin_port = htons ((uint16_t)port),
                             .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
    if (fd < 0 || connect (fd, (struct sockaddr *)&a, sizeof (a)) < 0)
        bail_out ("connect port %d: %s", port, strerror (errno));
    return fd;
}

static void test_sealed (void)
{
    jobtap_host_error_t errtext;
    char *req = NULL, path[120];
    uint32_t uid = 4242;
    jobtap_host_error_t err = {{0}};
    json_t *list = json_pack ("{s:s}", "op", "list");

    json_t *frame = control_munge_seal (list, munge_sock, &errtext);
    ok (frame != NULL, "seal a request with munged (%s)",
        frame ? "ok" : errtext.text);
    const char *cred = json_string_value (json_object_get (frame, "munge"));
    like (cred ? cred : "", "^MUNGE:", "the frame is {\"munge\": CRED}");
    char *text = json_dumps (frame, JSON_COMPACT);
    void *ctx = control_munge_ctx_create (munge_sock);
    int rc = control_munge_open (ctx, text, strlen (text), &req, &uid,
                                 &errtext);
    ok (rc == 0, "open it (%s)", rc == 0 ? "ok" : errtext.text);
    is (req, "{\"op\":\"list\"}", "the payload is the request");
    isint (uid, getuid (), "the credential names the sender");
    free (req);
    req = NULL;
    errno = 0;
    ok (control_munge_open (ctx, text, strlen (text), &req, &uid, &errtext) < 0 && errno == EPERM,
        "the same credential twice: EPERM");
    is (errtext.text, "authentication failed: munge: Replayed credential",
        "... replayed");
    free (text);
    control_munge_ctx_destroy (ctx);

    /* the server's TCP path */
    snprintf (path, sizeof (path), "%s/jobtap.sock", dir);
    int port = free_port ();
    struct control_config cfg = {
        .path = path,
        .rolemask_of = test_rolemask,
        .io_timeout_ms = 500,
        .tcp_port = port,
        .tcp_address = "127.0.0.1",
        .munge_socket = munge_sock,
    };
    struct control_server *srv = control_server_start (&cfg, &err);
    ok (srv != NULL, "a server with a TCP port (%s)", err.text);
    if (!srv)
        return;
    /* a slurmctld replacing this one (24.11's reconfigure) shares it */
    char path2[120];
    snprintf (path2, sizeof (path2), "%s/jobtap2.sock", dir);
    cfg.path = path2;
    struct control_server *next = control_server_start (&cfg, &err);
    ok (next != NULL, "a second server of the same uid shares the port (%s)",
        err.text);
    control_server_stop (next);
    /* another program's port */
    int other = socket (AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET,
                             .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
    if (other < 0 || bind (other, (struct sockaddr *)&a, sizeof (a)) < 0
        || listen (other, 1) < 0)
        bail_out ("bind: %s", strerror (errno));
    cfg.tcp_port = port_of (other);
    errno = 0;
    ok (control_server_start (&cfg, &err) == NULL && errno == EADDRINUSE,
        "a port another program holds: %s", err.text);
    ok (access (path, F_OK) == 0 && access (path2, F_OK) < 0,
        "... and no socket file was touched");
    close (other);

    int fd = connect_port (port);
    is (text_of (exchange (fd, list)),
        "{\"errnum\":1,\"error\":\"authentication failed: a request over TCP "
        "must be sealed in a munge credential\",\"ok\":false}",
        "an unsealed request over TCP is refused");
    errno = 0;
    ok (control_recv (fd) == NULL && errno == ECONNRESET,
        "and the connection closed");
    close (fd);

    fd = connect_port (port);
    is (text_of (exchange (fd, frame)),
        "{\"errnum\":1,\"error\":\"authentication failed: munge: Replayed "
        "credential\",\"ok\":false}",
        "a replayed credential over TCP is refused");
    close (fd);
    json_decref (frame);

    fd = connect_port (port);
    for (int i = 0; i < 2; i++) {
        frame = control_munge_seal (list, munge_sock, &errtext);
        is (text_of (exchange (fd, frame)), "{\"ok\":true,\"result\":[]}",
            "a sealed request is answered (%d on one connection)", i + 1);
        json_decref (frame);
    }
    isint (__atomic_load_n (&seen_uid, __ATOMIC_SEQ_CST), getuid (),
           "the role policy was asked about the credential's uid");
    close (fd);
    control_server_stop (srv);
    json_decref (list);
}

int main (void)
{
    const char *tmp = getenv ("TMPDIR");

    test_authinfo ();
    test_open_without_munged ();
    test_listen ();

    core_host_setup (NULL, NULL, NULL);
    snprintf (dir, sizeof (dir), "%s/test_control_port.XXXXXX",
              tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp (dir) || chmod (dir, 0711) < 0)
        bail_out ("mkdtemp");
    if (start_munged ())
        test_sealed ();
    else
        diag ("skipped the checks with munged: %s is not installed or did "
              "not start", MUNGED);
    if (munged_pid > 0) {
        kill (munged_pid, SIGTERM);
        waitpid (munged_pid, NULL, 0);
    }
    char cmd[200];
    snprintf (cmd, sizeof (cmd), "rm -rf '%s'", dir);
    if (system (cmd) != 0)
        diag ("could not remove %s", dir);
    core_host_teardown ();
    done_testing ();
}
