/* site_factor/jobtap's entry points: site_factor_p_set and
 * site_factor_p_update, declared in adapter.h. They reach the adapter
 * through the process's one instance (instance.h): Slurm passes them no
 * context.
 *
 * Locks: slurmctld calls both with the job write lock held (set from
 * set_job_prio's callers, update from the multifactor decay thread), so
 * neither takes a slurmctld lock; they mark the lock held for the actions
 * the runtime takes meanwhile (actions.h). */
#include <config.h>

#include "src/common/slurm_xlator.h"
#include "src/slurmctld/slurmctld.h"

/* The Slurm plugins call these: the library's only exported symbols. */
#pragma GCC visibility push(default)
#include "adapter.h"
#pragma GCC visibility pop

#include "actions.h"
#include "host.h"
#include "instance.h"
#include "queue.h"

void jobtap_slurm_site_factor_set (job_record_t *job)
{
    struct adapter_ctx *ctx = &adapter_instance;
    int64_t priority;

    if (jobtap_host_job_priority (job->job_id, &priority) < 0) {
        queue_wake (&ctx->queue, true, false);
        return;
    }
    bool had = actions_write_begin ();
    if (priority >= 0)
        actions_site_factor_priority (ctx, job, priority);
    actions_write_end (had);
}

void jobtap_slurm_site_factor_update (void)
{
    bool had = actions_write_begin ();
    jobtap_host_reprioritize_all ();
    actions_write_end (had);
}
