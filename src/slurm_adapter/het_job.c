/* A hetjob's records (het_job.h). */
#include <config.h>

#include "src/common/slurm_xlator.h"
#include "src/common/list.h"
#include "src/slurmctld/slurmctld.h"

#include "het_job.h"

struct each {
    void (*fn) (job_record_t *job, void *arg);
    void *arg;
};

static int call_one (void *x, void *arg)
{
    struct each *e = arg;
    e->fn (x, e->arg);
    return 0;
}

void het_job_each (job_record_t *job,
                   void (*fn) (job_record_t *job, void *arg),
                   void *arg)
{
    if (!job->het_job_list || job->het_job_id != job->job_id) {
        fn (job, arg);
        return;
    }
    struct each e = {.fn = fn, .arg = arg};
    (void)list_for_each (job->het_job_list, call_one, &e);
}
