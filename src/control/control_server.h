/* control_server: the jobtap control socket, served from its own thread.
 *
 * A Unix stream socket (mode 0666: every user may connect; authorization
 * is per request, control_ops.h), and optionally a TCP port. A Unix
 * connection's peer is identified with SO_PEERCRED; a TCP request names
 * its sender in the munge credential it is sealed in (control_munge.h).
 * The uid is given a rolemask by the caller's policy. Requests
 * and responses are framed JSON (control_proto.h); a connection may send
 * several requests, one after the other.
 *
 * The thread polls non-blocking sockets, so a slow or silent client never
 * holds up the others; it never holds the runtime's mutex while it waits
 * (the host calls take and drop it), and takes no scheduler lock. Limits:
 * a request over CONTROL_MAX_MESSAGE gets EMSGSIZE and the connection is
 * closed; a connection that does not send a whole request, or does not
 * read its response, within io_timeout_ms is closed; a service that does
 * not answer an rpc within rpc_timeout_ms gets ETIMEDOUT.
 *
 * Knows nothing of Slurm: the adapter (src/slurm_adapter/control.c) gives
 * the path, the role policy and the log. Start and stop from one thread. */
#ifndef SLURM_JOBTAP_CONTROL_SERVER_H
#define SLURM_JOBTAP_CONTROL_SERVER_H

#include <stdint.h>

#include "host.h"

struct control_config {
    const char *path; /* the socket; a socket there already is replaced */
    /* The caller's rolemask: JOBTAP_ROLE_OWNER or JOBTAP_ROLE_USER. */
    uint32_t (*rolemask_of) (uint32_t uid, void *arg);
    /* Optional: connections refused, plugins loaded or removed (syslog
     * levels). Called from the server's thread. */
    void (*log) (int level, const char *msg, void *arg);
    void *arg;
    int io_timeout_ms;  /* 0: CONTROL_IO_TIMEOUT_MS */
    int rpc_timeout_ms; /* 0: CONTROL_RPC_TIMEOUT_MS */
    int max_clients;    /* 0: CONTROL_MAX_CLIENTS */
    /* Optional: a TCP port (0: none) at tcp_address (NULL: every address)
     * whose requests are sealed in munge credentials, checked by the
     * munged at munge_socket (NULL: munge's default). */
    int tcp_port;
    const char *tcp_address;
    const char *munge_socket;
};

#define CONTROL_IO_TIMEOUT_MS 5000
#define CONTROL_RPC_TIMEOUT_MS 60000
#define CONTROL_MAX_CLIENTS 256

struct control_server;

/* Bind the socket (and the TCP port) and start the thread. NULL with
 * errno and err set (e.g. "/run/jobtap.sock: path is longer than 107
 * bytes", "...: exists and is not a socket", "control port *:6825:
 * Address already in use"). A socket file already at the path is removed,
 * also one another process still serves (a slurmctld being replaced);
 * stop removes the file only while it is still this server's. */
struct control_server *control_server_start (const struct control_config *cfg,
                                             jobtap_host_error_t *err);

/* Stop the thread, close every connection and remove the socket file.
 * A service that answers an rpc later finds nobody waiting: its answer is
 * dropped. NULL is a no-op. */
void control_server_stop (struct control_server *srv);

#endif
