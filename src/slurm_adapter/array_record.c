/* Records and the jobtap jobs they hold (array_record.h). */
#include <config.h>

#include "src/common/slurm_xlator.h"
#include "src/common/bitstring.h"
#include "src/slurmctld/slurmctld.h"

#include "array_id.h"
#include "array_record.h"
#include "het_job.h"
#include "host.h"

bool array_known (uint64_t id)
{
    return jobtap_host_job_state (id) > 0;
}

bool array_is_pending_meta (const job_record_t *job)
{
    return job->array_task_id == NO_VAL && job->array_recs
           && job->array_recs->task_id_bitmap
           && bit_ffs (job->array_recs->task_id_bitmap) >= 0;
}

uint64_t array_record_id (const job_record_t *job)
{
    uint64_t task_id;

    if (het_job_is_component (job))
        return job->het_job_id;

    if (array_is_pending_meta (job))
        task_id = array_task_jobid (
            job->job_id, (uint32_t)bit_ffs (job->array_recs->task_id_bitmap));
    else if (job->array_task_id != NO_VAL && job->array_job_id != 0)
        task_id = array_task_jobid (job->array_job_id, job->array_task_id);
    else
        return job->job_id;
    /* an array from before its tasks were jobs keeps the record's id */
    if (!array_known (task_id) && array_known (job->job_id))
        return job->job_id;
    return task_id;
}

job_record_t *array_record_of (uint64_t id)
{
    if (array_id_is_task (id))
        return find_job_array_rec (array_id_array (id), array_id_task (id));
    return id <= UINT32_MAX ? find_job_record ((uint32_t)id) : NULL;
}

int array_for_each_id (const job_record_t *job,
                       int (*fn) (uint64_t id, void *arg),
                       void *arg)
{
    uint64_t first = array_record_id (job);
    int rc;

    if (!array_id_is_task (first) || !array_is_pending_meta (job))
        return fn (first, arg);
    bitstr_t *tasks = job->array_recs->task_id_bitmap;
    for (int64_t t = bit_ffs (tasks); t >= 0 && t < bit_size (tasks); t++) {
        if (!bit_test (tasks, t))
            continue;
        if ((rc = fn (array_task_jobid (job->job_id, (uint32_t)t), arg)))
            return rc;
    }
    return 0;
}
