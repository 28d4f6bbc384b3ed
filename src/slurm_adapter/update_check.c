/* Whether Slurm made an accepted update (update_check.h). */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "src/common/slurm_xlator.h"
#include "src/common/log.h"
#include "src/slurmctld/slurmctld.h"

#include "array_record.h"
#include "ctx.h"
#include "host.h"
#include "jobspec.h"
#include "queue.h"
#include "superseded.h"
#include "update_check.h"

void update_check_queue (struct adapter_ctx *ctx,
                         uint32_t slurm_id,
                         json_t *accepted)
{
    char *json = json_dumps (accepted, JSON_COMPACT);

    if (!json || queue_push (ctx->queue, A_UPDATE_CHECK, slurm_id, 0, json,
                             strlen (json) + 1)
                     < 0)
        error ("jobtap: JobId=%u: out of memory queueing an update's check",
               slurm_id);
    free (json);
}

/* The same value: numbers by value (a duration may be an integer in one
 * and a real in the other). */
static bool same (json_t *a, json_t *b)
{
    if (json_is_number (a) && json_is_number (b))
        return json_number_value (a) == json_number_value (b);
    return json_equal (a, b);
}

static int sync_one (uint64_t id, void *arg)
{
    if (jobtap_host_job_jobspec_sync (id, arg) < 0)
        error ("jobtap: job %ju: cannot set Slurm's values again: %m",
               (uintmax_t)id);
    return 0;
}

json_t *update_check_record_values (const job_record_t *job, json_t *updates)
{
    json_t *spec = jobspec_from_record (job, NULL, NULL);
    json_t *values = json_object ();
    const char *key;
    json_t *v;

    json_object_foreach (updates, key, v)
    {
        json_t *now = spec_dotted_get (spec, key);
        if (!now)
            now = json_null ();
        if (!same (now, v))
            json_object_set (values, key, now);
    }
    json_decref (spec);
    return values;
}

void update_check_apply (const struct action *a)
{
    job_record_t *job = find_job_record ((uint32_t)a->id);
    json_t *accepted = a->text ? json_loads (a->text, 0, NULL) : NULL;
    json_t *slurms;

    if (!job || !accepted) {
        json_decref (accepted);
        return;
    }
    slurms = update_check_record_values (job, accepted);
    if (json_object_size (slurms) > 0) {
        char *s = json_dumps (slurms, JSON_COMPACT | JSON_SORT_KEYS);
        info ("jobtap: %pJ: Slurm did not make the update the plugins "
              "accepted; jobtap takes Slurm's values back: %s",
              job, s ? s : "?");
        free (s);
        (void)array_for_each_id (job, sync_one, slurms);
    }
    json_decref (slurms);
    json_decref (accepted);
}
