/* The Slurm side of slurm-jobtap: feeds slurmctld's jobs into the jobtap
 * runtime and carries the runtime's decisions (holds, releases,
 * priorities, cancellations) back into the Slurm job records.
 *
 * This file holds the entry points all three plugins share (adapter.h):
 * init, fini and reconfigure, on the process's one adapter context
 * (instance.h). The work is in the modules docs/architecture.md draws
 * (Slurm's hooks, the agent thread that takes slurmctld's locks, binding,
 * the decisions' actions, arrays and hetjobs, the kept state, the control
 * socket, jobspecs), each named in its own header. */
#include <config.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "src/common/slurm_xlator.h"
#include "src/common/log.h"
#include "src/common/read_config.h"
#include "src/common/xmalloc.h"

/* The Slurm plugins call these: the library's only exported symbols. */
#pragma GCC visibility push(default)
#include "adapter.h"
#pragma GCC visibility pop

#include "actions.h"
#include "agent.h"
#include "array_dirty.h"
#include "conf.h"
#include "control.h"
#include "ctld_log.h"
#include "ctx.h"
#include "fence.h"
#include "hooks_prep.h"
#include "host.h"
#include "instance.h"
#include "jobspec.h"
#include "jobspec_apply.h"
#include "keep.h"
#include "post_update.h"
#include "queue.h"
#include "slurm_compat.h"

/* The one adapter context (instance.h) and its modules' state: static, as
 * Slurm's plugin API gives its entry points no context, and set up before
 * any of them runs. */
static struct conf instance_conf = CONF_INIT;
static struct queue instance_queue = QUEUE_INIT;
static struct agent instance_agent;
static struct control instance_control;
static struct keep instance_keep;
static struct fences instance_fences;
static struct apply_memo instance_apply_memo = APPLY_MEMO_INIT;
static struct array_dirty instance_array_dirty;
static struct array_dirty instance_array_unbound;

struct adapter_ctx adapter_instance = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .conf = &instance_conf,
    .queue = &instance_queue,
    .agent = &instance_agent,
    .control = &instance_control,
    .keep = &instance_keep,
    .fences = &instance_fences,
    .apply_memo = &instance_apply_memo,
    .array_dirty = &instance_array_dirty,
    .array_unbound = &instance_array_unbound,
};

static const struct jobtap_host_ops ops = {
    .log = ctld_log,
    .hold = actions_hold_cb,
    .release = actions_release_cb,
    .set_priority = actions_set_priority_cb,
    .urgency_hold = actions_urgency_hold_cb,
    .cancel = actions_cancel_cb,
    .jobspec_update = post_update_cb,
    .perilog_done = hooks_prep_perilog_done,
    .compact_later = true, /* the agent compacts outside slurmctld's locks */
    .jobspec_rebuild = jobspec_source_build,
    .jobspec_find = jobspec_source_find,
};

/* This process's mark on its submissions (mark.h): unique per process
 * start, even for 24.11's reconfigure, which starts slurmctld anew in
 * place (the same pid, often the same second): a process must never take
 * a job its predecessor marked for one of its own. */
static uint64_t new_boot (void)
{
    uint64_t boot = 0;
    struct timespec ts;

    if (getrandom (&boot, sizeof (boot), GRND_NONBLOCK) != sizeof (boot)) {
        clock_gettime (CLOCK_REALTIME, &ts);
        boot = ((uint64_t)ts.tv_sec << 30) ^ (uint64_t)ts.tv_nsec
               ^ ((uint64_t)getpid () << 44);
    }
    return boot ? boot : 1;
}

/* Whether job.new can run inside the submission, where slurmctld computes
 * a new job's first priority: site_factor_p_set, which only
 * priority/multifactor calls, and only with site_factor/jobtap. Else every
 * job is created held until the agent has run job.new (docs/admin.md). */
static bool job_new_fits_in_allocate (void)
{
    const char *prio = slurm_conf.priority_type;
    const char *site = slurm_conf.site_factor_plugin;

    if (prio && strstr (prio, "multifactor") && site
        && strstr (site, "jobtap"))
        return true;
    info ("jobtap: PriorityType=%s PrioritySiteFactorPlugin=%s: jobs are "
          "created held until jobtap has run job.new (a moment later); with "
          "priority/multifactor and site_factor/jobtap job.new runs inside "
          "the submission and jobs are not held (docs/admin.md)",
          prio ? prio : "(none)", site ? site : "(none)");
    return false;
}

/* Called from each plugin's init() in slurmctld's main thread, with no
 * slurmctld lock held. */
int jobtap_slurm_init (const char *plugin_type)
{
    struct adapter_ctx *ctx = &adapter_instance;
    jobtap_host_error_t err = {{0}};
    char *path = NULL;
    int rc = SLURM_ERROR;

    pthread_mutex_lock (&ctx->lock);
    if (ctx->refcount++ > 0) {
        pthread_mutex_unlock (&ctx->lock);
        info ("jobtap: %s shares the runtime already loaded", plugin_type);
        /* site_factor/jobtap loaded again after its fini stopped the agent
         * (a backup taking control once more) */
        if (!ctx->agent->started && agent_start (ctx) < 0)
            error ("jobtap: cannot start the agent thread again: %m");
        return SLURM_SUCCESS;
    }
    pthread_mutex_unlock (&ctx->lock);

    mark_boot_init (&ctx->boot, new_boot ());
    if (jobtap_host_init (&ops, ctx) < 0) {
        error ("jobtap: cannot start the jobtap runtime: %m");
        goto fail;
    }
    path = get_extra_conf_path ("jobtap.conf");
    if (access (path, F_OK) < 0) {
        info ("jobtap: no %s; only the builtin plugins are loaded", path);
        xfree (path);
    }
    if (jobtap_host_load_config (path, &err) < 0) {
        if (JOBTAP_RECONFIGURING ())
            error ("jobtap: reconfigure failed: %s", err.text);
        else
            error ("jobtap: %s", err.text);
        jobtap_host_fini ();
        goto fail;
    }
    if (JOBTAP_RECONFIGURING ())
        info ("jobtap: configuration reloaded");
    conf_load (ctx->conf);
    ctx->new_in_allocate = job_new_fits_in_allocate ();
    json_t *names = jobtap_host_plugin_list (false);
    char *list = json_dumps (names, JSON_COMPACT);
    info ("jobtap: loaded %s: plugins %s", path ? path : "(no config)",
          list ? list : "[]");
    free (list);
    json_decref (names);

    if (agent_start (ctx) < 0) {
        error ("jobtap: cannot start the agent thread: %m");
        jobtap_host_fini ();
        goto fail;
    }
    agent_check_queues (ctx);
    /* without it slurmctld still works: only the jobtap command does not.
     * Slurm loads this plugin in a backup controller in standby too
     * (slurmctld_primary is set before plugins load). */
    control_start_at_init (ctx, !slurmctld_primary);
    rc = SLURM_SUCCESS;
    goto out;
fail:
    pthread_mutex_lock (&ctx->lock);
    ctx->refcount--;
    pthread_mutex_unlock (&ctx->lock);
out:
    xfree (path);
    return rc;
}

/* Called from each plugin's fini(), with no slurmctld lock held. */
void jobtap_slurm_fini (const char *plugin_type)
{
    struct adapter_ctx *ctx = &adapter_instance;
    (void)plugin_type;

    pthread_mutex_lock (&ctx->lock);
    if (--ctx->refcount > 0) {
        pthread_mutex_unlock (&ctx->lock);
        return;
    }
    pthread_mutex_unlock (&ctx->lock);
    control_stop (ctx); /* first: its requests call into the runtime */
    agent_stop (ctx);
    fence_free (ctx->fences);
    array_dirty_free (ctx->array_dirty);
    array_dirty_free (ctx->array_unbound);
    apply_memo_clear (ctx->apply_memo);
    jobtap_host_fini ();
    conf_clear (ctx->conf);
}

void jobtap_slurm_priority_fini (void)
{
    struct adapter_ctx *ctx = &adapter_instance;

    agent_stop (ctx);
    /* A backup giving control back stays loaded, in standby: the control
     * socket is the primary's again (the agent, which would have seen it,
     * has stopped). */
    if (!slurmctld_primary)
        control_defer (ctx);
}

/* site_factor_p_reconfig: with no slurmctld lock held, or with the conf
 * write lock held (scontrol setdebugflags), so it takes none. */
void jobtap_slurm_reconfig (void)
{
    struct adapter_ctx *ctx = &adapter_instance;
    jobtap_host_error_t err = {{0}};

    if (jobtap_host_reload (&err) < 0)
        error ("jobtap: reconfigure failed, keeping the previous "
               "configuration: %s",
               err.text);
    else
        info ("jobtap: configuration reloaded");
    conf_load (ctx->conf);
    agent_check_queues (ctx);
    (void)control_start (ctx); /* moves if control-socket changed */
    queue_wake (ctx->queue, false, true);
}
