/* write_scope: what one of our entry points is doing while it holds the
 * slurmctld job write lock (a hook slurmctld calls under it, or the
 * agent's pass). The entry point makes one on its stack and hands it down
 * to the modules it calls (actions.h, bind.h, post_update.h).
 *
 * Two kinds of callers get no parameter of ours and look the scope up
 * instead: the runtime's host ops (actions.h), which the runtime calls
 * from any thread, and job_modify, which update_job calls from inside a
 * plugin update the agent is making. The lookup is this thread's: a
 * thread without a scope does not hold the job write lock for us, and
 * queues what it decides for the agent. Scopes are entered only with the
 * job write lock held, so by one thread at a time.
 *
 * Scopes nest (a release inside one recomputes a priority: another
 * site_factor_p_set); leave restores the outer one. */
#ifndef SLURM_JOBTAP_ADAPTER_WRITE_SCOPE_H
#define SLURM_JOBTAP_ADAPTER_WRITE_SCOPE_H

#include <stdbool.h>
#include <stdint.h>

#include "src/slurmctld/slurmctld.h"

struct write_scope {
    /* The job whose priority site_factor_p_set is computing, or NULL:
     * slurmctld sets that priority itself right after, so a hold or
     * cancel of it goes to the agent (fence.h), and Slurm's dependency
     * test (assoc_mgr locks the caller may hold) is left to the sweep. */
    job_record_t *computing;
    /* The agent is making a plugin's update through update_job
     * (post_update.c): job_modify lets it through, for every record
     * update_job changes (an array's tasks too). */
    bool plugin_update;
    /* The agent's own pass: no Slurm code is walking the job list, so an
     * array's task may be split off into a record of its own
     * (array_sync.h); elsewhere that waits for the agent. */
    bool agent_pass;
    /* Actions applied to job records in this scope: the agent asks for a
     * scheduler pass after any. */
    unsigned applied;
    struct write_scope *outer;
};

void write_scope_enter (struct write_scope *s);
void write_scope_leave (struct write_scope *s);

/* This thread's innermost scope, or NULL. */
struct write_scope *write_scope_current (void);

#endif
