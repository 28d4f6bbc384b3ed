/* job_submit/jobtap: runs jobtap plugins on Slurm job submissions and
 * modifications (job.create, job.validate, job.dependency.*, job.update.*).
 * The work is in the shared adapter (src/slurm_adapter). */
#include <config.h>

#include "src/common/slurm_xlator.h"
#include "src/common/log.h"
#include "src/slurmctld/slurmctld.h"

#include "adapter.h"
#include "host.h"
#include "slurm_compat.h"

const char plugin_name[] = "jobtap job_submit plugin";
const char plugin_type[] = "job_submit/jobtap";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

extern int init (void)
{
    if (jobtap_slurm_init (plugin_type) != SLURM_SUCCESS)
        return SLURM_ERROR;
    info ("loaded (slurm-jobtap runtime %s)", jobtap_runtime_version ());
    return SLURM_SUCCESS;
}

extern int fini (void)
{
    jobtap_slurm_fini (plugin_type);
    return SLURM_SUCCESS;
}

extern int job_submit (job_desc_msg_t *job_desc, uint32_t submit_uid,
                       char **err_msg)
{
    return jobtap_slurm_job_submit (job_desc, submit_uid, err_msg);
}

#if JOBTAP_JOB_MODIFY_HAS_ERR_MSG
extern int job_modify (job_desc_msg_t *job_desc, job_record_t *job_ptr,
                       uint32_t submit_uid, char **err_msg)
{
    return jobtap_slurm_job_modify (job_desc, job_ptr, submit_uid, err_msg);
}
#else
extern int job_modify (job_desc_msg_t *job_desc, job_record_t *job_ptr,
                       uint32_t submit_uid)
{
    return jobtap_slurm_job_modify (job_desc, job_ptr, submit_uid, NULL);
}
#endif
