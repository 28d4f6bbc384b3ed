/* What the runtime has told the host of one job (host.h): read back, and
 * told again. A host that keeps several jobs in one record of its own (a
 * job array's pending tasks in Slurm's array record) compares the tasks'
 * decisions, and tells a task's decision again once the task has a record
 * of its own. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <flux/core.h>
#include <flux/jobtap.h>

#include "event.h"
#include "host.h"
#include "job.h"
#include "log.h"
#include "runtime.h"

int jobtap_host_job_decision (uint64_t id, struct jobtap_host_decision *d)
{
    struct job *job;
    int rc = -1;

    runtime_lock ();
    if (!d)
        errno = EINVAL;
    else if ((job = table_find_bound (host_runtime (), id))) {
        snprintf (d->hold_reason, sizeof (d->hold_reason), "%s",
                  job->hold_reason ? job->hold_reason : "");
        d->urgency_hold = job->reported_urgency_hold;
        d->priority = job->state == FLUX_JOB_STATE_SCHED
                          ? job->reported_priority
                          : JOBTAP_PRIORITY_UNAVAIL;
        d->state = job->state;
        rc = 0;
    }
    else
        errno = ENOENT;
    runtime_unlock ();
    return rc;
}

bool jobtap_host_decision_equal (const struct jobtap_host_decision *a,
                                 const struct jobtap_host_decision *b)
{
    return a->state == b->state && a->urgency_hold == b->urgency_hold
           && a->priority == b->priority
           && !strcmp (a->hold_reason, b->hold_reason);
}

int jobtap_host_job_resync (uint64_t id)
{
    struct job *job;
    int rc = -1;

    runtime_lock ();
    if ((job = table_find_bound (host_runtime (), id))) {
        /* forget what was told, so that everything is told: the hold or
         * its release, the urgency hold or its lifting, the priority */
        if (job->hold_reason) {
            free (job->hold_reason);
            job->hold_reason = NULL;
        }
        else
            job->hold_reason = strdup ("");
        job->reported_urgency_hold = !job->reported_urgency_hold;
        job->reported_priority = JOBTAP_PRIORITY_UNAVAIL - 1;
        job_sync_host (job);
        rc = 0;
    }
    else
        errno = ENOENT;
    runtime_unlock ();
    return rc;
}
