/* Keeping a job jobtap holds from starting until the hold is applied
 * (fence.h). */
#include <config.h>

#include <stdlib.h>

#include "src/common/slurm_xlator.h"
#include "src/common/log.h"
#include "src/slurmctld/slurmctld.h"

#include "fence.h"

void fence_job (struct fences *f, job_record_t *job)
{
    if (!job->details)
        return;
    for (size_t i = 0; i < f->n; i++)
        if (f->v[i].id == job->job_id)
            return;
    if (f->n == f->size) {
        size_t size = f->size ? f->size * 2 : 16;
        struct fence_entry *v = realloc (f->v, size * sizeof (*v));
        if (!v) {
            error ("jobtap: %pJ: out of memory fencing it until its hold",
                   job);
            return;
        }
        f->v = v;
        f->size = size;
    }
    f->v[f->n++] = (struct fence_entry){.id = job->job_id,
                                        .begin_time = job->details->begin_time,
                                        .deadline = job->deadline};
    job->details->begin_time = FENCE_BEGIN_TIME;
    if (!job->deadline)
        job->deadline = NO_VAL;
}

bool fence_has (const struct fences *f, uint32_t id)
{
    for (size_t i = 0; i < f->n; i++)
        if (f->v[i].id == id)
            return true;
    return false;
}

void fence_lift (struct fences *f, uint32_t id, job_record_t *job)
{
    for (size_t i = 0; i < f->n; i++) {
        if (f->v[i].id != id)
            continue;
        if (job && job->details) {
            if (job->details->begin_time == FENCE_BEGIN_TIME)
                job->details->begin_time = f->v[i].begin_time;
            if (job->deadline == NO_VAL)
                job->deadline = f->v[i].deadline;
        }
        f->v[i] = f->v[--f->n];
        return;
    }
}

void fence_clear_leftover (job_record_t *job)
{
    if (!job->details || job->details->begin_time != FENCE_BEGIN_TIME)
        return;
    job->details->begin_time = 0; /* Slurm sets it when the job is eligible */
    if (job->deadline == NO_VAL)
        job->deadline = 0;
    info ("jobtap: %pJ: cleared the eligible time it was given while "
          "jobtap decided at submit (slurmctld stopped in between)", job);
}

void fence_free (struct fences *f)
{
    free (f->v);
    *f = (struct fences){0};
}
