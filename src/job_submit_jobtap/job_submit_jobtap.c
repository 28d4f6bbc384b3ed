/* job_submit/jobtap: runs jobtap plugins on Slurm job submissions and
 * modifications (job.create, job.validate, job.new, job.update.*). */
#include <config.h>

#include "src/common/slurm_xlator.h"
#include "src/common/log.h"
#include "src/slurmctld/slurmctld.h"

#include "host.h"

const char plugin_name[] = "jobtap job_submit plugin";
const char plugin_type[] = "job_submit/jobtap";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

extern int init (void)
{
    info ("loaded (slurm-jobtap runtime %s)",
          jobtap_runtime_version ());
    return SLURM_SUCCESS;
}

extern int fini (void)
{
    return SLURM_SUCCESS;
}

extern int job_submit (job_desc_msg_t *job_desc, uint32_t submit_uid,
                       char **err_msg)
{
    (void)job_desc;
    (void)submit_uid;
    (void)err_msg;
    return SLURM_SUCCESS;
}

extern int job_modify (job_desc_msg_t *job_desc, job_record_t *job_ptr,
                       uint32_t submit_uid)
{
    (void)job_desc;
    (void)job_ptr;
    (void)submit_uid;
    return SLURM_SUCCESS;
}
