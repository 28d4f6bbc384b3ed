/* site_factor/jobtap's entry points: site_factor_p_set and
 * site_factor_p_update, declared in adapter.h. They reach the adapter
 * through the process's one instance (instance.h): Slurm passes them no
 * context.
 *
 * site_factor_p_set is where a new job meets jobtap: slurmctld calls it
 * inside the submission, with the job's record and real id, before it
 * tests the job against the nodes or starts it (bind_in_allocate).
 *
 * Locks: slurmctld calls both with the job write lock held (set from
 * set_job_prio's callers, update from the multifactor decay thread), so
 * neither takes a slurmctld lock; their write_scope lets the actions the
 * runtime takes meanwhile touch job records (actions.h). */
#include <config.h>

#include "src/common/slurm_xlator.h"
#include "src/slurmctld/slurmctld.h"

/* The Slurm plugins call these: the library's only exported symbols. */
#pragma GCC visibility push(default)
#include "adapter.h"
#pragma GCC visibility pop

#include "actions.h"
#include "array_record.h"
#include "bind.h"
#include "host.h"
#include "instance.h"
#include "keep.h"
#include "queue.h"
#include "write_scope.h"

void jobtap_slurm_site_factor_set (job_record_t *job)
{
    struct adapter_ctx *ctx = &adapter_instance;
    int64_t priority;
    struct write_scope scope = {.computing = job};
    uint64_t id = array_record_id (job); /* the same once bound */

    write_scope_enter (&scope);
    if (jobtap_host_job_priority (id, &priority) < 0) {
        uint64_t leader;
        if (ctx->new_in_allocate && bind_in_allocate (ctx, &scope, job)) {
            /* before Slurm may save the job (keep.h) */
            keep_write (ctx);
            /* job.new's events have given the record its priority, or a
             * hold, through the runtime's ops (actions.h): once */
            priority = -1;
        } else if ((leader = bind_het_leader_of_new (ctx, job))) {
            /* a hetjob's component: its leader's priority (and hold,
             * which the agent makes on every component) */
            if (jobtap_host_job_priority (leader, &priority) < 0)
                priority = -1;
        } else {
            queue_wake (ctx->queue, true, false);
            priority = -1;
        }
    }
    if (priority >= 0)
        actions_site_factor_priority (ctx, &scope, priority);
    write_scope_leave (&scope);
}

void jobtap_slurm_site_factor_update (void)
{
    struct write_scope scope = {.computing = NULL};

    write_scope_enter (&scope);
    jobtap_host_reprioritize_all ();
    write_scope_leave (&scope);
}
