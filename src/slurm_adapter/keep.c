/* The jobs' jobtap state under StateSaveLocation (keep.h). */
#include <config.h>

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "src/common/slurm_xlator.h"
#include "src/common/log.h"
#include "src/slurmctld/slurmctld.h"

#include "array_record.h"
#include "conf.h"
#include "ctx.h"
#include "host.h"
#include "keep.h"

void keep_open (struct adapter_ctx *ctx)
{
    jobtap_host_error_t err = {{0}};
    char *dir;

    if (ctx->keep->tried)
        return;
    ctx->keep->tried = true;
    if (!(dir = conf_state_dir (ctx->conf, &ctx->keep->sync))) {
        info ("jobtap: state-dir is empty: jobs' jobtap state is not kept "
              "across restarts");
        return;
    }
    if (jobtap_host_store_open (dir, &err) < 0)
        error ("jobtap: cannot keep jobs' state in %s: %s; jobs are "
               "restored from Slurm's records alone", dir, err.text);
    else {
        ctx->keep->open = true;
        info ("jobtap: jobs' state is kept in %s", dir);
    }
    free (dir);
}

static bool slurm_has (uint64_t id, void *arg)
{
    (void)arg;
    return array_record_of (id) != NULL; /* an array task's too */
}

void keep_before_submit (struct adapter_ctx *ctx)
{
    static pthread_mutex_t once = PTHREAD_MUTEX_INITIALIZER;
    int n;

    if (ctx->keep->tried)
        return;
    pthread_mutex_lock (&once);
    if (!ctx->keep->tried) {
        keep_open (ctx);
        if (ctx->keep->open
            && (n = jobtap_host_store_drop_missing (slurm_has, NULL)) > 0) {
            info ("jobtap: forgot the kept state of %d jobs slurmctld no "
                  "longer has", n);
            (void)jobtap_host_store_flush (ctx->keep->sync);
        }
    }
    pthread_mutex_unlock (&once);
}

void keep_restored (struct adapter_ctx *ctx)
{
    int n;
    if (!ctx->keep->open)
        return;
    if ((n = jobtap_host_store_drop_kept ()) > 0)
        info ("jobtap: forgot the kept state of %d jobs slurmctld no longer "
              "has or that ended", n);
}

void keep_write (struct adapter_ctx *ctx)
{
    if (ctx->keep->open)
        (void)jobtap_host_store_flush (false);
}

void keep_settle (struct adapter_ctx *ctx)
{
    if (!ctx->keep->open)
        return;
    (void)jobtap_host_store_flush (ctx->keep->sync);
    (void)jobtap_host_store_maintain ();
}
