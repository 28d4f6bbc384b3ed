/* site_factor/jobtap: feeds jobtap priorities (job.state.priority,
 * job.priority.get) into priority/multifactor's site factor, or makes them
 * the Slurm priority (priority-mode = "authoritative"). The work is in the
 * shared adapter (src/slurm_adapter). */
#include <config.h>

#include "src/common/slurm_xlator.h"
#include "src/common/log.h"
#include "src/slurmctld/slurmctld.h"

#include "adapter.h"
#include "host.h"

const char plugin_name[] = "jobtap site_factor plugin";
const char plugin_type[] = "site_factor/jobtap";
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
    jobtap_slurm_priority_fini ();
    jobtap_slurm_fini (plugin_type);
    return SLURM_SUCCESS;
}

/* After `scontrol reconfigure`, with no slurmctld locks held. */
extern void site_factor_p_reconfig (void)
{
    jobtap_slurm_reconfig ();
}

/* From set_job_prio(), job write lock held, just before slurmctld computes
 * the job's priority from its factors. */
extern void site_factor_p_set (job_record_t *job_ptr)
{
    jobtap_slurm_site_factor_set (job_ptr);
}

/* From the multifactor decay thread (only with slurmdbd in 22.05), job
 * write lock held. */
extern void site_factor_p_update (void)
{
    jobtap_slurm_site_factor_update ();
}
