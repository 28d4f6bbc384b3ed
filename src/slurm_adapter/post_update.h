/* post_update: jobspec updates a plugin makes after submit (in job.new, a
 * job.state.* callback, a service, a timer, jobspec_update_id_pack) made
 * to the Slurm job too, with the update map of submit time
 * (jobspec_apply_updates) and Slurm's own update path (update_job, as
 * `scontrol update` by SlurmUser). What Slurm refuses is logged with the
 * job and the plugin, and the runtime's jobspec is set back to what the
 * job record says, so the two agree.
 *
 * The host op queues every update for the agent (never applied inside a
 * hook, where slurmctld is in the middle of its own work on the job); the
 * agent applies it under the job write lock. While it does, the
 * job_modify hook stands aside (the scope's plugin_update): the plugins
 * already made the change. */
#ifndef SLURM_JOBTAP_ADAPTER_POST_UPDATE_H
#define SLURM_JOBTAP_ADAPTER_POST_UPDATE_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

#include "queue.h"
#include "write_scope.h"

struct adapter_ctx;

/* Host op (struct jobtap_host_ops.jobspec_update), arg = the context. */
void post_update_cb (uint64_t id,
                     json_t *updates,
                     const char *plugin,
                     void *arg);

/* The agent, job write lock held: apply an A_JOBSPEC_UPDATE to job, the
 * record that holds the job alone. */
void post_update_apply (struct adapter_ctx *ctx,
                        struct write_scope *scope,
                        const struct action *a,
                        job_record_t *job);

#endif
