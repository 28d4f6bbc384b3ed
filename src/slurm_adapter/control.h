/* control: the adapter's side of the jobtap control socket. Starts the
 * Slurm-free server (src/control/control_server.h) at the path of the
 * control-socket setting (conf.h), on the control-port if one is set
 * (with the munged of Slurm's AuthInfo), and gives it slurmctld's policy:
 * root and SlurmUser are the instance owner (JOBTAP_ROLE_OWNER), every
 * other uid a user (JOBTAP_ROLE_USER).
 *
 * The server's thread calls only jobtap_host_* and never a slurmctld
 * lock. Callers: the entry points (lifecycle.c), with no slurmctld lock
 * held, after the config is loaded (init, reconfigure) and at fini; and
 * the agent, once, for a backup controller that took control. */
#ifndef SLURM_JOBTAP_ADAPTER_CONTROL_H
#define SLURM_JOBTAP_ADAPTER_CONTROL_H

#include <stdbool.h>
#include <stdint.h>

struct adapter_ctx;
struct control_server;

struct control {
    struct control_server *server; /* NULL when not serving */
    char *path;                    /* where it serves */
    int port;                      /* and on which TCP port (0: none) */
    char *address;                 /* at which address (NULL: every) */
    uint32_t slurm_user;           /* SlurmUser's uid, read at start */
    bool deferred; /* a backup's, until it takes control */
};

/* Serve at the configured path and port; if it serves elsewhere already
 * (they changed on reconfigure), move. A port that cannot be had is
 * logged, and the socket is served without it. A failure is logged and slurmctld runs
 * on without the socket: returns 0, or -1 with errno set. */
int control_start (struct adapter_ctx *ctx);

/* At init: control_start, or, in a backup controller in standby, only a
 * note to start once it is in control (control_start_deferred): the
 * default path is under the StateSaveLocation it shares with the primary,
 * whose socket it would otherwise take over with a runtime that has no
 * jobs. */
void control_start_at_init (struct adapter_ctx *ctx, bool in_standby);

/* From the agent once slurmctld is in control: start the socket if init
 * left it to now. */
void control_start_deferred (struct adapter_ctx *ctx);

/* From the agent when slurmctld is no longer in control (a backup back
 * in standby): stop serving, and start again with control_start_deferred.
 * The socket is removed only if it is still this server's (the primary
 * that took control has bound its own there). */
void control_defer (struct adapter_ctx *ctx);

/* Stop serving and remove the socket; a no-op if not serving. */
void control_stop (struct adapter_ctx *ctx);

#endif
