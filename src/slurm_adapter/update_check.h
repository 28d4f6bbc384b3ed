/* update_check: whether Slurm made a user's update that the plugins
 * accepted. job_modify runs before slurmctld's own checks of an update,
 * which may still refuse it (a user's longer time limit, a partition
 * Slurm will not move the job to): the runtime has then taken a value the
 * job does not have. The agent's next pass, which takes the job write
 * lock after the update's RPC let it go, compares the job record with
 * what was accepted and gives the runtime Slurm's values back for what
 * Slurm did not change, so the two agree and a restart does not make the
 * refused values in Slurm.
 *
 * Callers: hooks_submit (queues the check), actions (the agent applies
 * it, with the job write lock), post_update (what Slurm refused of a
 * plugin's update). */
#ifndef SLURM_JOBTAP_ADAPTER_UPDATE_CHECK_H
#define SLURM_JOBTAP_ADAPTER_UPDATE_CHECK_H

#include <stdint.h>
#include <jansson.h>

#include "src/slurmctld/slurmctld.h"

struct adapter_ctx;
struct action;

/* Check in the agent's next pass that the record of job 'slurm_id' has
 * 'accepted' (jobspec keys and values); a copy is queued. */
void update_check_queue (struct adapter_ctx *ctx,
                         uint32_t slurm_id,
                         json_t *accepted);

/* The record's values (its jobspec's, null where it has none) of the
 * keys of 'updates' whose value it does not have: what Slurm did not make
 * of them. New reference, an empty object when it made them all. Needs
 * the job read lock. */
json_t *update_check_record_values (const job_record_t *job, json_t *updates);

/* The check (an A_UPDATE_CHECK action), under the job write lock. */
void update_check_apply (const struct action *a);

#endif
