/* control: the adapter's side of the jobtap control socket. Starts the
 * Slurm-free server (src/control/control_server.h) at the path of the
 * control-socket setting (conf.h), and gives it slurmctld's policy:
 * root and SlurmUser are the instance owner (JOBTAP_ROLE_OWNER), every
 * other uid a user (JOBTAP_ROLE_USER).
 *
 * The server's thread calls only jobtap_host_* and never a slurmctld
 * lock. Callers: the entry points (adapter.c), with no slurmctld lock
 * held, after the config is loaded (init, reconfigure) and at fini. */
#ifndef SLURM_JOBTAP_ADAPTER_CONTROL_H
#define SLURM_JOBTAP_ADAPTER_CONTROL_H

#include <stdint.h>

struct adapter_ctx;
struct control_server;

struct control {
    struct control_server *server; /* NULL when not serving */
    char *path;                    /* where it serves */
    uint32_t slurm_user;           /* SlurmUser's uid, read at start */
};

/* Serve at the configured path; if it serves elsewhere already (the path
 * changed on reconfigure), move. A failure is logged and slurmctld runs
 * on without the socket: returns 0, or -1 with errno set. */
int control_start (struct adapter_ctx *ctx);

/* Stop serving and remove the socket; a no-op if not serving. */
void control_stop (struct adapter_ctx *ctx);

#endif
