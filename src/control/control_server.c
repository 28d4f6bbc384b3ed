/* The control socket's thread (control_server.h): connections, framing,
 * timeouts; what a request does is control_ops.c's.
 *
 * Deferred rpc answers: a service may answer from any thread, with the
 * runtime's mutex held. Its done callback only files the answer in the
 * mailbox (a leaf lock) and wakes the thread through a pipe. The mailbox
 * is reference counted by the server and every unanswered call, so an
 * answer that comes after its connection, or the whole server, is gone
 * is dropped safely. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <netdb.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "control_listen.h"
#include "control_munge.h"
#include "control_ops.h"
#include "control_proto.h"
#include "control_server.h"
#include "host_error.h"

struct client;

/* An rpc waiting for its service's answer. */
struct pending {
    struct client *client; /* NULL once nobody waits (mailbox lock) */
    struct mailbox *box;
    json_t *response;      /* set by done */
    bool answered;
    struct pending *next;  /* in box->answered, once answered */
};

struct mailbox {
    pthread_mutex_t lock; /* leaf: taken inside the runtime's mutex */
    int refcount;
    struct pending *answered, **tail;
    int wake[2];          /* pipe: [0] polled by the thread */
};

enum client_state { CLIENT_READING, CLIENT_WAITING, CLIENT_WRITING };

struct client {
    int fd;
    bool sealed; /* over TCP: each request in a munge credential */
    char peer[96]; /* for the log: "uid N" or "HOST port PORT" of a TCP peer */
    struct control_caller caller;
    enum client_state state;
    unsigned char header[CONTROL_HEADER_SIZE];
    size_t header_got;
    char *body;
    size_t body_len, body_got;
    char *out;
    size_t out_len, out_sent;
    bool close_after_write;
    struct pending *pending;
    char topic[128]; /* of the pending rpc, for the timeout message */
    int64_t deadline_ms;
};

struct control_server {
    struct control_config cfg;
    char *path;
    dev_t dev;
    ino_t ino;
    int listen_fd;
    int tcp_fd;  /* -1: no TCP port */
    void *munge; /* munge_ctx_t, for sealed requests */
    struct mailbox *box;
    struct client **clients;
    int nclients;
    struct pollfd *pfds;
    pthread_t thread;
    int stopping; /* set by control_server_stop (atomic access) */
};

static int64_t now_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void server_log (struct control_server *srv, int level, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));
static void server_log (struct control_server *srv, int level, const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    if (!srv->cfg.log)
        return;
    va_start (ap, fmt);
    vsnprintf (msg, sizeof (msg), fmt, ap);
    va_end (ap);
    srv->cfg.log (level, msg, srv->cfg.arg);
}

/* --- the mailbox ------------------------------------------------------- */

static struct mailbox *mailbox_create (void)
{
    struct mailbox *box = calloc (1, sizeof (*box));
    if (!box)
        return NULL;
    if (pipe2 (box->wake, O_NONBLOCK | O_CLOEXEC) < 0) {
        free (box);
        return NULL;
    }
    pthread_mutex_init (&box->lock, NULL);
    box->refcount = 1;
    box->tail = &box->answered;
    return box;
}

/* Called with box->lock held; unlocks it. */
static void mailbox_unref_unlock (struct mailbox *box)
{
    bool last = --box->refcount == 0;
    pthread_mutex_unlock (&box->lock);
    if (last) {
        close (box->wake[0]);
        close (box->wake[1]);
        pthread_mutex_destroy (&box->lock);
        free (box);
    }
}

static void pending_free (struct pending *p)
{
    if (p) {
        json_decref (p->response);
        free (p);
    }
}

/* jobtap_host_service_done_f: any thread, the runtime's mutex held. */
static void rpc_done (json_t *payload, int errnum, const char *errstr,
                      void *arg)
{
    struct pending *p = arg;
    struct mailbox *box = p->box;
    json_t *response = control_ops_rpc_response (payload, errnum, errstr);

    pthread_mutex_lock (&box->lock);
    p->answered = true;
    if (!p->client) {
        pending_free (p);
        json_decref (response);
    }
    else {
        p->response = response;
        *box->tail = p;
        box->tail = &p->next;
        char c = 1;
        if (write (box->wake[1], &c, 1) < 0) {
            /* full: the thread is awake already */
        }
    }
    mailbox_unref_unlock (box);
}

/* --- clients ----------------------------------------------------------- */

static void client_abandon_pending (struct control_server *srv,
                                    struct client *c)
{
    if (!c->pending)
        return;
    pthread_mutex_lock (&srv->box->lock);
    /* answered: it is in the mailbox, and the next drain frees it */
    c->pending->client = NULL;
    pthread_mutex_unlock (&srv->box->lock);
    c->pending = NULL;
}

static void client_destroy (struct control_server *srv, struct client *c)
{
    client_abandon_pending (srv, c);
    close (c->fd);
    free (c->body);
    free (c->out);
    free (c);
}

static void client_expect_request (struct control_server *srv,
                                   struct client *c)
{
    c->state = CLIENT_READING;
    c->header_got = c->body_len = c->body_got = 0;
    free (c->body);
    c->body = NULL;
    c->deadline_ms = now_ms () + srv->cfg.io_timeout_ms;
}

/* Queue 'response' (taken) to be written; the connection ends after it
 * if 'then_close'. */
static void client_respond (struct control_server *srv,
                            struct client *c,
                            json_t *response,
                            bool then_close)
{
    free (c->out);
    c->out = response ? control_frame (response, &c->out_len) : NULL;
    if (!c->out) {
        /* an answer too large for the protocol, or no memory */
        json_decref (response);
        response = control_response_error (
            EMSGSIZE, "response larger than the limit of %d bytes",
            CONTROL_MAX_MESSAGE);
        c->out = response ? control_frame (response, &c->out_len) : NULL;
        then_close = true;
    }
    json_decref (response);
    c->out_sent = 0;
    c->close_after_write = then_close || !c->out;
    c->state = CLIENT_WRITING;
    c->deadline_ms = now_ms () + srv->cfg.io_timeout_ms;
}

static void log_change (struct control_server *srv,
                        struct client *c,
                        const char *op,
                        json_t *req,
                        json_t *response)
{
    const char *what = NULL, *error = NULL;
    int ok = 0;

    if (strcmp (op, "load") && strcmp (op, "remove"))
        return;
    (void)json_unpack (req, "{s?s s?s}", "path", &what, "name", &what);
    (void)json_unpack (response, "{s:b s?s}", "ok", &ok, "error", &error);
    if (ok)
        server_log (srv, LOG_INFO, "control: uid %u: %s %s", c->caller.uid, op,
              what ? what : "?");
    else
        server_log (srv, LOG_INFO, "control: uid %u: %s %s failed: %s",
              c->caller.uid, op, what ? what : "?", error ? error : "?");
}

/* A request from the TCP port: its credential names the caller, and its
 * payload replaces the body. NULL when it was refused (the answer is
 * queued and the connection ends after it). */
static struct client *client_open_sealed (struct control_server *srv,
                                          struct client *c)
{
    jobtap_host_error_t errtext;
    char *request;
    uint32_t uid;

    if (control_munge_open (srv->munge, c->body, c->body_len, &request, &uid,
                            &errtext)
        < 0) {
        int e = errno;
        server_log (srv, LOG_WARNING, "control: request from %s refused: %s",
                    c->peer, errtext.text);
        client_respond (srv, c,
                        control_response_error (e, "%s", errtext.text), true);
        return NULL;
    }
    free (c->body);
    c->body = request;
    c->body_len = strlen (request);
    c->caller.uid = uid;
    c->caller.rolemask = srv->cfg.rolemask_of (uid, srv->cfg.arg);
    return c;
}

static void client_run_request (struct control_server *srv, struct client *c)
{
    jobtap_host_error_t errtext;
    const char *op = NULL;
    int errnum;
    json_t *req, *response;
    struct pending *p;

    if (c->sealed && !(c = client_open_sealed (srv, c)))
        return;
    req = control_request_parse (c->body, c->body_len, &op, &errnum, &errtext);
    if (!req) {
        client_respond (srv, c, control_response_error (errnum, "%s",
                                                        errtext.text),
                        false);
        return;
    }
    /* made first: a service may answer before control_ops_run returns */
    if (!(p = calloc (1, sizeof (*p)))) {
        json_decref (req);
        client_respond (srv, c, control_response_error (ENOMEM, "%s",
                                                        strerror (ENOMEM)),
                        true);
        return;
    }
    p->client = c;
    p->box = srv->box;
    c->pending = p;
    c->state = CLIENT_WAITING;
    c->deadline_ms = now_ms () + srv->cfg.rpc_timeout_ms;
    snprintf (c->topic, sizeof (c->topic), "%s",
              json_string_value (json_object_get (req, "topic")) ?: op);
    pthread_mutex_lock (&srv->box->lock);
    srv->box->refcount++; /* the call's, dropped by rpc_done */
    pthread_mutex_unlock (&srv->box->lock);

    response = control_ops_run (op, req, &c->caller, rpc_done, p);
    if (response) { /* done will never run */
        c->pending = NULL;
        pending_free (p);
        pthread_mutex_lock (&srv->box->lock);
        mailbox_unref_unlock (srv->box);
        log_change (srv, c, op, req, response);
        client_respond (srv, c, response, false);
    }
    json_decref (req);
}

/* Read what is there. false: the connection is to be closed. */
static bool client_read (struct control_server *srv, struct client *c)
{
    for (;;) {
        void *buf;
        size_t want;
        if (c->header_got < CONTROL_HEADER_SIZE) {
            buf = c->header + c->header_got;
            want = CONTROL_HEADER_SIZE - c->header_got;
        }
        else {
            buf = c->body + c->body_got;
            want = c->body_len - c->body_got;
        }
        ssize_t n = read (c->fd, buf, want);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return true;
        if (n <= 0)
            return false; /* end of file or error: the client left */
        if (c->header_got < CONTROL_HEADER_SIZE) {
            c->header_got += (size_t)n;
            if (c->header_got < CONTROL_HEADER_SIZE)
                continue;
            uint32_t len = control_frame_length (c->header);
            if (len > CONTROL_MAX_MESSAGE) {
                client_respond (srv, c,
                                control_response_error (
                                    EMSGSIZE,
                                    "request of %u bytes is larger than the "
                                    "limit of %d bytes",
                                    len, CONTROL_MAX_MESSAGE),
                                true);
                return true;
            }
            if (!(c->body = malloc (len ? len : 1)))
                return false;
            c->body_len = len;
        }
        else
            c->body_got += (size_t)n;
        if (c->body_got == c->body_len) {
            client_run_request (srv, c);
            return true;
        }
    }
}

/* Write what the socket takes. false: the connection is to be closed. */
static bool client_write (struct control_server *srv, struct client *c)
{
    while (c->out && c->out_sent < c->out_len) {
        ssize_t n = send (c->fd, c->out + c->out_sent,
                          c->out_len - c->out_sent, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return true;
        if (n < 0)
            return false;
        c->out_sent += (size_t)n;
    }
    free (c->out);
    c->out = NULL;
    if (c->close_after_write)
        return false;
    client_expect_request (srv, c);
    return true;
}

/* Take what connections wait on 'listen_fd'; 'sealed' for the TCP port. */
static void accept_clients (struct control_server *srv, int listen_fd,
                            bool sealed)
{
    while (srv->nclients < srv->cfg.max_clients) {
        struct sockaddr_storage ss;
        socklen_t sslen = sizeof (ss);
        int fd = accept4 (listen_fd, (struct sockaddr *)&ss, &sslen,
                          SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR
                && errno != ECONNABORTED)
                server_log (srv, LOG_ERR, "control: accept: %s", strerror (errno));
            return;
        }
        struct ucred cred = { 0 };
        socklen_t len = sizeof (cred);
        struct client *c;
        if ((!sealed
             && getsockopt (fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
            || !(c = calloc (1, sizeof (*c)))) {
            server_log (srv, LOG_ERR, "control: cannot take a connection: %s",
                  strerror (errno));
            close (fd);
            continue;
        }
        c->fd = fd;
        c->sealed = sealed;
        if (sealed) {
            char host[64] = "?", port[16] = "?";
            (void)getnameinfo ((struct sockaddr *)&ss, sslen, host,
                               sizeof (host), port, sizeof (port),
                               NI_NUMERICHOST | NI_NUMERICSERV);
            snprintf (c->peer, sizeof (c->peer), "%s port %s", host, port);
            c->caller.uid = (uint32_t)-1; /* each request says */
            c->caller.rolemask = 0;
        }
        else {
            snprintf (c->peer, sizeof (c->peer), "uid %u", (unsigned)cred.uid);
            c->caller.uid = cred.uid;
            c->caller.rolemask = srv->cfg.rolemask_of (cred.uid,
                                                       srv->cfg.arg);
        }
        client_expect_request (srv, c);
        srv->clients[srv->nclients++] = c;
    }
}

/* Answers filed by rpc_done become responses. */
static void drain_mailbox (struct control_server *srv)
{
    struct pending *list, *p;
    char buf[64];

    while (read (srv->box->wake[0], buf, sizeof (buf)) > 0)
        ;
    pthread_mutex_lock (&srv->box->lock);
    list = srv->box->answered;
    srv->box->answered = NULL;
    srv->box->tail = &srv->box->answered;
    pthread_mutex_unlock (&srv->box->lock);
    while ((p = list)) {
        list = p->next;
        /* p->client is only cleared by this thread, so no lock to read */
        if (p->client) {
            struct client *c = p->client;
            c->pending = NULL;
            client_respond (srv, c, p->response, false);
            p->response = NULL;
        }
        pending_free (p);
    }
}

/* Deal with one connection after poll; false: close it. */
static bool client_service (struct control_server *srv,
                            struct client *c,
                            short revents,
                            int64_t now)
{
    if (c->state == CLIENT_READING && (revents & (POLLIN | POLLHUP | POLLERR)))
        if (!client_read (srv, c))
            return false;
    if (c->state == CLIENT_WRITING && (revents & (POLLOUT | POLLERR)))
        if (!client_write (srv, c))
            return false;
    if (c->state == CLIENT_WAITING && (revents & (POLLHUP | POLLERR)))
        return false; /* gone while its rpc waits */
    if (now < c->deadline_ms)
        return true;
    if (c->state != CLIENT_WAITING) {
        server_log (srv, LOG_DEBUG, "control: %s: no %s within %d ms, "
              "closing", c->peer,
              c->state == CLIENT_READING ? "request" : "read of the response",
              srv->cfg.io_timeout_ms);
        return false;
    }
    client_abandon_pending (srv, c);
    client_respond (srv, c,
                    control_response_error (ETIMEDOUT,
                                            "%s: no response within %d s",
                                            c->topic,
                                            srv->cfg.rpc_timeout_ms / 1000),
                    false);
    return true;
}

static void *server_thread (void *arg)
{
    struct control_server *srv = arg;

    while (!__atomic_load_n (&srv->stopping, __ATOMIC_ACQUIRE)) {
        int64_t now = now_ms (), wait = -1;
        int n = 0;

        srv->pfds[n++] = (struct pollfd){ srv->box->wake[0], POLLIN, 0 };
        short room = srv->nclients < srv->cfg.max_clients ? POLLIN : 0;
        srv->pfds[n++] = (struct pollfd){ srv->listen_fd, room, 0 };
        srv->pfds[n++] = (struct pollfd){ srv->tcp_fd, room, 0 };
        for (int i = 0; i < srv->nclients; i++) {
            struct client *c = srv->clients[i];
            short ev = c->state == CLIENT_READING   ? POLLIN
                       : c->state == CLIENT_WRITING ? POLLOUT
                                                    : 0;
            srv->pfds[n++] = (struct pollfd){ c->fd, ev, 0 };
            int64_t left = c->deadline_ms > now ? c->deadline_ms - now : 0;
            if (wait < 0 || left < wait)
                wait = left;
        }
        if (poll (srv->pfds, (nfds_t)n, (int)wait) < 0 && errno != EINTR) {
            server_log (srv, LOG_ERR, "control: poll: %s", strerror (errno));
            break;
        }
        if (__atomic_load_n (&srv->stopping, __ATOMIC_ACQUIRE))
            break;
        if (srv->pfds[0].revents)
            drain_mailbox (srv);
        now = now_ms ();
        /* the connections polled, then those accepted now */
        int polled = srv->nclients, kept = 0;
        for (int i = 0; i < polled; i++) {
            struct client *c = srv->clients[i];
            if (client_service (srv, c, srv->pfds[i + 3].revents, now))
                srv->clients[kept++] = c;
            else
                client_destroy (srv, c);
        }
        for (int i = polled; i < srv->nclients; i++)
            srv->clients[kept++] = srv->clients[i];
        srv->nclients = kept;
        if (srv->pfds[1].revents & POLLIN)
            accept_clients (srv, srv->listen_fd, false);
        if (srv->pfds[2].revents & POLLIN)
            accept_clients (srv, srv->tcp_fd, true);
    }
    return NULL;
}

/* --- start and stop ---------------------------------------------------- */

static void server_free (struct control_server *srv)
{
    if (srv->listen_fd >= 0)
        close (srv->listen_fd);
    if (srv->tcp_fd >= 0)
        close (srv->tcp_fd);
    control_munge_ctx_destroy (srv->munge);
    if (srv->box) {
        pthread_mutex_lock (&srv->box->lock);
        mailbox_unref_unlock (srv->box);
    }
    free (srv->clients);
    free (srv->pfds);
    free (srv->path);
    free (srv);
}

struct control_server *control_server_start (const struct control_config *cfg,
                                             jobtap_host_error_t *err)
{
    struct control_server *srv;
    int e;

    if (!cfg || !cfg->path || !*cfg->path || !cfg->rolemask_of) {
        errno = EINVAL;
        errprintf (err, "control socket: invalid configuration");
        return NULL;
    }
    if (!(srv = calloc (1, sizeof (*srv)))) {
        errno = ENOMEM;
        errprintf (err, "out of memory");
        return NULL;
    }
    srv->listen_fd = srv->tcp_fd = -1;
    srv->cfg = *cfg;
    if (srv->cfg.io_timeout_ms <= 0)
        srv->cfg.io_timeout_ms = CONTROL_IO_TIMEOUT_MS;
    if (srv->cfg.rpc_timeout_ms <= 0)
        srv->cfg.rpc_timeout_ms = CONTROL_RPC_TIMEOUT_MS;
    if (srv->cfg.max_clients <= 0)
        srv->cfg.max_clients = CONTROL_MAX_CLIENTS;
    /* the copy in srv->path is the one to use; the others serve start only */
    srv->cfg.path = srv->cfg.tcp_address = srv->cfg.munge_socket = NULL;
    if (!(srv->path = strdup (cfg->path))
        || !(srv->clients = calloc ((size_t)srv->cfg.max_clients,
                                    sizeof (*srv->clients)))
        || !(srv->pfds = calloc ((size_t)srv->cfg.max_clients + 3,
                                 sizeof (*srv->pfds)))
        || !(srv->box = mailbox_create ())) {
        e = errno;
        server_free (srv);
        errno = e;
        errprintf (err, "control socket: %s", strerror (e));
        return NULL;
    }
    /* the port first: failing, it must not have moved the socket file */
    if (cfg->tcp_port > 0) {
        if (!(srv->munge = control_munge_ctx_create (cfg->munge_socket)))
            errprintf (err, "control port: munge: %s", strerror (errno));
        else
            srv->tcp_fd = control_listen_tcp (cfg->tcp_address,
                                              cfg->tcp_port, err);
        if (srv->tcp_fd < 0) {
            e = errno;
            server_free (srv);
            errno = e;
            return NULL;
        }
    }
    bool taken_over;
    srv->listen_fd = control_listen_unix (srv->path, &srv->dev, &srv->ino,
                                          &taken_over, err);
    if (srv->listen_fd < 0) {
        e = errno;
        server_free (srv);
        errno = e;
        return NULL;
    }
    if (taken_over)
        server_log (srv, LOG_INFO,
                    "control: %s is served by another process (the "
                    "slurmctld this one replaces?); taking it over",
                    srv->path);
    if ((e = pthread_create (&srv->thread, NULL, server_thread, srv))) {
        unlink (srv->path);
        server_free (srv);
        errno = e;
        errprintf (err, "control socket: cannot start its thread: %s",
                   strerror (e));
        return NULL;
    }
    return srv;
}

void control_server_stop (struct control_server *srv)
{
    struct stat st;
    char c = 1;

    if (!srv)
        return;
    __atomic_store_n (&srv->stopping, 1, __ATOMIC_RELEASE);
    if (write (srv->box->wake[1], &c, 1) < 0) {
        /* full: the thread wakes anyway */
    }
    pthread_join (srv->thread, NULL);
    for (int i = 0; i < srv->nclients; i++)
        client_destroy (srv, srv->clients[i]);
    srv->nclients = 0;
    drain_mailbox (srv); /* answers nobody waits for */
    /* only our own socket: a successor may have bound the path already */
    if (stat (srv->path, &st) == 0 && st.st_dev == srv->dev
        && st.st_ino == srv->ino)
        unlink (srv->path);
    server_free (srv);
}
