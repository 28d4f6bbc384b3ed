/* The control socket in slurmctld (control.h). */
#include <config.h>

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "src/common/slurm_xlator.h"
#include "src/common/log.h"
#include "src/common/read_config.h"

#include "conf.h"
#include "control.h"
#include "control_munge.h"
#include "control_server.h"
#include "ctld_log.h"
#include "ctx.h"
#include "host.h"

/* Starts and stops come from slurmctld's main thread (init, reconfigure,
 * fini) and, once, from the agent (control_start_deferred). */
static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;

static void stop_locked (struct adapter_ctx *ctx);

/* The server's role policy: called from its thread, reads only what
 * control_start copied. */
static uint32_t rolemask_of (uint32_t uid, void *arg)
{
    struct control *control = arg;
    return uid == 0 || uid == control->slurm_user ? JOBTAP_ROLE_OWNER
                                                  : JOBTAP_ROLE_USER;
}

static bool same_address (const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp (a, b));
}

static int start_locked (struct adapter_ctx *ctx)
{
    struct control *control = ctx->control;
    jobtap_host_error_t err = {{0}};
    char *path = conf_control_socket (ctx->conf);
    char *address = NULL;
    int port = conf_control_port (ctx->conf, &address);

    if (!path) {
        free (address);
        error ("jobtap: control socket: out of memory");
        return -1;
    }
    if (control->server && !strcmp (path, control->path)
        && port == control->port && same_address (address, control->address)) {
        free (path);
        free (address);
        return 0; /* serving there already */
    }
    stop_locked (ctx);
    control->slurm_user = slurm_conf.slurm_user_id;
    char *munge_socket = control_munge_socket_of_authinfo (
        slurm_conf.authinfo);
    struct control_config cfg = {
        .path = path,
        .rolemask_of = rolemask_of,
        .log = ctld_log,
        .arg = control,
        .tcp_port = port,
        .tcp_address = address,
        .munge_socket = munge_socket,
    };
    /* ctld_log ignores its arg, so the policy's arg can be shared */
    control->server = control_server_start (&cfg, &err);
    if (!control->server && port > 0) {
        /* the local socket is worth having without the port */
        error ("jobtap: control port not available (jobtap --host will not "
               "work): %s",
               err.text);
        cfg.tcp_port = port = 0;
        control->server = control_server_start (&cfg, &err);
    }
    free (munge_socket);
    if (!control->server) {
        int e = errno;
        error ("jobtap: control socket not available (the jobtap command "
               "will not work): %s",
               err.text);
        free (path);
        free (address);
        errno = e;
        return -1;
    }
    control->path = path;
    control->port = port;
    control->address = address;
    info ("jobtap: control socket %s", path);
    if (port > 0)
        info ("jobtap: control port %s:%d (requests sealed with munge)",
              address ? address : "*", port);
    return 0;
}

static void stop_locked (struct adapter_ctx *ctx)
{
    struct control *control = ctx->control;

    control_server_stop (control->server);
    control->server = NULL;
    free (control->path);
    control->path = NULL;
    free (control->address);
    control->address = NULL;
    control->port = 0;
}

int control_start (struct adapter_ctx *ctx)
{
    pthread_mutex_lock (&start_lock);
    ctx->control->deferred = false;
    int rc = start_locked (ctx);
    pthread_mutex_unlock (&start_lock);
    return rc;
}

void control_start_at_init (struct adapter_ctx *ctx, bool in_standby)
{
    if (!in_standby) {
        (void)control_start (ctx);
        return;
    }
    pthread_mutex_lock (&start_lock);
    ctx->control->deferred = true;
    pthread_mutex_unlock (&start_lock);
    info ("jobtap: a backup controller in standby: the control socket "
          "opens when it takes control");
}

void control_start_deferred (struct adapter_ctx *ctx)
{
    pthread_mutex_lock (&start_lock);
    if (ctx->control->deferred) {
        ctx->control->deferred = false;
        (void)start_locked (ctx);
    }
    pthread_mutex_unlock (&start_lock);
}

void control_defer (struct adapter_ctx *ctx)
{
    pthread_mutex_lock (&start_lock);
    bool serving = ctx->control->server != NULL;
    stop_locked (ctx);
    ctx->control->deferred = true;
    pthread_mutex_unlock (&start_lock);
    if (serving)
        info ("jobtap: no longer in control: the control socket opens "
              "again if this slurmctld takes control again");
}

void control_stop (struct adapter_ctx *ctx)
{
    pthread_mutex_lock (&start_lock);
    ctx->control->deferred = false;
    stop_locked (ctx);
    pthread_mutex_unlock (&start_lock);
}
