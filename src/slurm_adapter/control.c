/* The control socket in slurmctld (control.h). */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "src/common/slurm_xlator.h"
#include "src/common/log.h"
#include "src/common/read_config.h"

#include "conf.h"
#include "control.h"
#include "control_server.h"
#include "ctld_log.h"
#include "ctx.h"
#include "host.h"

/* The server's role policy: called from its thread, reads only what
 * control_start copied. */
static uint32_t rolemask_of (uint32_t uid, void *arg)
{
    struct control *control = arg;
    return uid == 0 || uid == control->slurm_user ? JOBTAP_ROLE_OWNER
                                                  : JOBTAP_ROLE_USER;
}

int control_start (struct adapter_ctx *ctx)
{
    struct control *control = &ctx->control;
    jobtap_host_error_t err = {{0}};
    char *path = conf_control_socket (&ctx->conf);

    if (!path) {
        error ("jobtap: control socket: out of memory");
        return -1;
    }
    if (control->server && !strcmp (path, control->path)) {
        free (path);
        return 0; /* serving there already */
    }
    control_stop (ctx);
    control->slurm_user = slurm_conf.slurm_user_id;
    struct control_config cfg = {
        .path = path,
        .rolemask_of = rolemask_of,
        .log = ctld_log,
        .arg = control,
    };
    /* ctld_log ignores its arg, so the policy's arg can be shared */
    if (!(control->server = control_server_start (&cfg, &err))) {
        int e = errno;
        error ("jobtap: control socket not available (the jobtap command "
               "will not work): %s",
               err.text);
        free (path);
        errno = e;
        return -1;
    }
    control->path = path;
    info ("jobtap: control socket %s", path);
    return 0;
}

void control_stop (struct adapter_ctx *ctx)
{
    struct control *control = &ctx->control;

    control_server_stop (control->server);
    control->server = NULL;
    free (control->path);
    control->path = NULL;
}
