/* Plugins' post-submit jobspec updates into the Slurm job (post_update.h). */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "src/common/slurm_xlator.h"
#include "src/common/log.h"
#include "src/common/slurm_protocol_defs.h"
#include "src/common/xmalloc.h"
#include "src/slurmctld/slurmctld.h"

#include "array_id.h"
#include "array_record.h"
#include "ctx.h"
#include "host.h"
#include "jobspec_apply.h"
#include "jobspec_update.h"
#include "post_update.h"
#include "queue.h"
#include "slurm_compat.h"
#include "superseded.h"
#include "update_check.h"

/* The most of a refused update the log shows. */
#define POST_UPDATE_TEXT_MAX 256
/* While slurmctld waits for slurmdbd to give a new job its database
 * index, update_job refuses every update of it: its own update RPC
 * tries again outside the lock every second. So does the agent, for
 * this many seconds (slurmdbd may be slow to answer, or down). */
#define POST_UPDATE_DB_INDEX_TRIES 60
#define POST_UPDATE_RETRY_MS 1000

void post_update_cb (uint64_t id,
                     json_t *updates,
                     const char *plugin,
                     void *arg)
{
    struct adapter_ctx *ctx = arg;
    const char *name = plugin ? plugin : "a plugin";
    char *json = json_dumps (updates, JSON_COMPACT);
    size_t nl = strlen (name) + 1, jl = json ? strlen (json) + 1 : 0;
    char *buf = json ? malloc (nl + jl) : NULL;

    /* the plugin's name, a NUL, then the updates as JSON text */
    if (buf && array_id_is_slurm (id)) {
        memcpy (buf, name, nl);
        memcpy (buf + nl, json, jl);
        if (queue_push (ctx->queue, A_JOBSPEC_UPDATE, id, 0, buf,
                        nl + jl) < 0)
            buf[0] = '\0';
    }
    if (!buf || !buf[0])
        error ("jobtap: JobId=%ju: out of memory queueing %s's update",
               (uintmax_t)id, name);
    free (buf);
    free (json);
}

/* Keys jobtap has set again since the plugin's update was queued (a
 * newer `scontrol update`, made in Slurm already) are left out: made now,
 * the older value would undo the newer one in Slurm alone. */
static void drop_superseded (job_record_t *job, json_t *updates,
                             const char *plugin)
{
    json_t *info = jobtap_host_job_info (array_record_id (job));
    char *dropped = NULL;

    if (!info)
        return;
    if (updates_drop_superseded (updates, json_object_get (info, "jobspec"),
                                 &dropped) > 0)
        debug ("jobtap: %pJ: %s's update of %s left out: changed since",
               job, plugin, dropped ? dropped : "?");
    free (dropped);
    json_decref (info);
}

/* Slurm refused: the runtime takes the record's values for those keys. */
static void agree_with_record (job_record_t *job, json_t *updates)
{
    json_t *values = update_check_record_values (job, updates);

    if (json_object_size (values) > 0
        && jobtap_host_job_jobspec_sync (array_record_id (job), values) < 0)
        error ("jobtap: %pJ: cannot set the jobspec back: %m", job);
    json_decref (values);
}

/* Try the update again in a later pass: Slurm cannot make it yet. */
static bool try_later (struct adapter_ctx *ctx,
                       const struct action *a,
                       job_record_t *job)
{
    if (a->tries >= POST_UPDATE_DB_INDEX_TRIES
        || queue_push_later (ctx->queue, a, POST_UPDATE_RETRY_MS) < 0)
        return false;
    if (a->tries == 0)
        debug ("jobtap: %pJ: %s's update waits for the job's database "
               "index", job, a->text);
    return true;
}

void post_update_apply (struct adapter_ctx *ctx,
                        struct write_scope *scope,
                        const struct action *a,
                        job_record_t *job)
{
    const char *plugin = a->text;
    json_t *updates = json_loads (a->text + strlen (a->text) + 1, 0, NULL);
    uint32_t job_id = job ? job->job_id : 0;
    job_desc_msg_t *desc = xmalloc (sizeof (*desc));
    slurm_msg_t msg;
    jobtap_host_error_t why;
    int rc;

    if (!updates || !job || IS_JOB_FINISHED (job))
        goto out;
    /* in order behind an earlier update still waiting to be made */
    if (a->tries == 0 && queue_has_later (ctx->queue, a->id)
        && try_later (ctx, a, job))
        goto out;
    drop_superseded (job, updates, plugin);
    if (json_object_size (updates) == 0)
        goto out;
    slurm_init_job_desc_msg (desc);
    JOBTAP_DESC_JOB_ID (desc) = job_id;
    if (jobspec_apply_updates (desc, job, updates, NULL, &why) < 0) {
        error ("jobtap: %pJ: %s's update cannot be made in Slurm: %s", job,
               plugin, why.text);
        agree_with_record (job, updates);
        goto out;
    }
    slurm_msg_t_init (&msg);
    msg.msg_type = REQUEST_UPDATE_JOB;
    msg.data = desc;
    scope->plugin_update = true;
    rc = update_job (&msg, slurm_conf.slurm_user_id, false);
    scope->plugin_update = false;
    if (JOBTAP_UPDATE_TRY_LATER (rc) && try_later (ctx, a, job))
        goto out;
    if (rc != SLURM_SUCCESS) {
        /* cut: a plugin's huge value must not flood the log */
        char *text = jobspec_update_value_text (updates,
                                                POST_UPDATE_TEXT_MAX);
        error ("jobtap: %pJ: Slurm refused %s's update %s: %s", job, plugin,
               text ? text : "?", slurm_strerror (rc));
        free (text);
        if ((job = find_job_record (job_id)))
            agree_with_record (job, updates);
    }
    else
        debug ("jobtap: %pJ: %s's update made in Slurm", job, plugin);
out:
    slurm_free_job_desc_msg (desc);
    json_decref (updates);
}
