/* Acting on Slurm job records (actions.h). */
#include <config.h>

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "src/common/slurm_xlator.h"
#include "src/common/log.h"
#include "src/common/read_config.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/job_scheduler.h"
#include "src/slurmctld/slurmctld.h"

#include "actions.h"
#include "array_dirty.h"
#include "array_id.h"
#include "array_record.h"
#include "array_sync.h"
#include "post_update.h"
#include "conf.h"
#include "ctx.h"
#include "fence.h"
#include "het_job.h"
#include "host.h"
#include "mark.h"
#include "queue.h"
#include "update_check.h"
#include "urgency_hold.h"
#include "write_scope.h"

/* What a jobtap-held job's reason adds for its Slurm dependency, which
 * Slurm's own reason would have shown were jobtap not holding it. */
#define SLURM_DEPENDENCY_WAITS "; also waits on its Slurm dependency"
#define SLURM_DEPENDENCY_FAILED "; its Slurm dependency can never be satisfied"

/* Slurm's priority for the job: priority/multifactor's, with our site
 * factor (site_factor_p_set); false when it is not set. Not once
 * slurmctld is shutting down: it unloads both then, and a pass of the
 * agent may still be running (site_factor/jobtap's fini waits for it,
 * jobtap_slurm_priority_fini; 22.05 would load them again under the
 * pass's lock). The restore at the next start sets it anew. */
static bool slurm_priority_set (job_record_t *job)
{
    if (slurmctld_config.shutdown_time)
        return false;
    set_job_prio (job);
    return true;
}

static const char *slurm_dependency_note (job_record_t *job)
{
    if (!job->details || !job->details->depend_list
        || list_count (job->details->depend_list) == 0)
        return "";
    /* Slurm's own test, as its scheduler makes it (job write lock held) */
    switch (test_job_dependency (job, NULL)) {
    case LOCAL_DEPEND:
    case REMOTE_DEPEND:
        return SLURM_DEPENDENCY_WAITS;
    case FAIL_DEPEND:
        return SLURM_DEPENDENCY_FAILED;
    default:
        return "";
    }
}

/* The length of desc without the Slurm dependency note at its end. */
static size_t without_dependency_note (const char *desc)
{
    static const char *const notes[] = {SLURM_DEPENDENCY_WAITS,
                                        SLURM_DEPENDENCY_FAILED};
    size_t n = strlen (desc);

    for (size_t i = 0; i < sizeof (notes) / sizeof (notes[0]); i++) {
        size_t k = strlen (notes[i]);
        if (n >= k && !strcmp (desc + n - k, notes[i]))
            return n - k;
    }
    return n;
}

struct hold_arg {
    const char *reason;
    bool test_dependency;
};

static void hold_one (job_record_t *job, void *arg)
{
    const struct hold_arg *h = arg;
    time_t now = time (NULL);

    if (!IS_JOB_PENDING (job))
        return;
    job->priority = 0;
    job->direct_set_prio = 1;
    job->state_reason = WAIT_HELD;
    xfree (job->state_desc);
    job->state_desc = xstrdup_printf (
        "%s%s", h->reason,
        h->test_dependency ? slurm_dependency_note (job) : "");
    if (job->details && job->details->begin_time < now)
        job->details->begin_time = 0;
    last_job_update = now;
}

void actions_hold (job_record_t *job, const char *reason, bool test_dependency)
{
    struct hold_arg h = {.reason = reason, .test_dependency = test_dependency};
    het_job_each (job, hold_one, &h);
}

void actions_hold_refresh (job_record_t *job)
{
    if (!IS_JOB_PENDING (job) || !holder_is_shim (job)
        || job->state_reason != WAIT_HELD)
        return;
    size_t base = without_dependency_note (job->state_desc);
    const char *note = slurm_dependency_note (job);
    if (!strcmp (job->state_desc + base, note))
        return;
    char *desc = xstrdup_printf ("%.*s%s", (int)base, job->state_desc, note);
    xfree (job->state_desc);
    job->state_desc = desc;
    last_job_update = time (NULL);
}

static void user_hold_one (job_record_t *job, void *arg)
{
    (void)arg;
    job->priority = 0;
    job->direct_set_prio = 1;
    job->state_reason = WAIT_HELD_USER;
    xfree (job->state_desc);
    last_job_update = time (NULL);
}

void actions_user_hold (job_record_t *job)
{
    het_job_each (job, user_hold_one, NULL);
}

static void release_one (job_record_t *job, void *arg)
{
    struct adapter_ctx *ctx = arg;
    time_t now = time (NULL);
    struct mark m = {.op_priority = 0};

    if (!IS_JOB_PENDING (job))
        return;
    (void)mark_find (job->spank_job_env, job->spank_job_env_size, &ctx->boot,
                     &m);
    uint32_t op_priority = m.op_priority;
    xfree (job->state_desc);
    job->state_reason = WAIT_NO_REASON;
    if (job->details && job->details->begin_time < now)
        job->details->begin_time = 0;
    if (op_priority) {
        job->priority = op_priority;
        job->direct_set_prio = 1;
    } else {
        job->direct_set_prio = 0;
        /* else the lowest that is no hold, which Slurm may save */
        if (!slurm_priority_set (job))
            job->priority = 1;
    }
    last_job_update = now;
}

void actions_release (struct adapter_ctx *ctx, job_record_t *job)
{
    het_job_each (job, release_one, ctx);
}

static void queue_action (struct adapter_ctx *ctx,
                          enum action_kind kind,
                          uint64_t id,
                          int64_t priority,
                          const char *text,
                          size_t len)
{
    if (queue_push (ctx->queue, kind, id, priority, text, len) < 0)
        error ("jobtap: out of memory queueing an action for job %ju",
               (uintmax_t)id);
}

/* The length of an action's text: one string, or two (a cancel's type
 * and note, an update's plugin and updates). */
static size_t action_text_len (const struct action *a)
{
    if (!a->text)
        return 0;
    size_t len = strlen (a->text) + 1;
    if (a->kind == A_CANCEL || a->kind == A_JOBSPEC_UPDATE)
        len += strlen (a->text + len) + 1;
    return len;
}

/* A hold or cancel decided inside site_factor_p_set: the agent applies it
 * in its next pass; until then the job is fenced. */
static void defer_behind_fence (struct adapter_ctx *ctx,
                                enum action_kind kind,
                                uint64_t id,
                                int64_t priority,
                                const char *text,
                                size_t len)
{
    job_record_t *job = array_record_of (id);
    if (job && IS_JOB_PENDING (job))
        fence_job (ctx->fences, job);
    queue_action (ctx, kind, id, priority, text, len);
}

static uint32_t site_factor_for (int64_t priority)
{
    int64_t v = (int64_t)NICE_OFFSET + priority;
    return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

/* Put the jobtap priority into the job record. Inside site_factor_p_set
 * slurmctld is computing the priority (possibly while releasing a hold:
 * it resets the reason only afterwards), so the value is always set there;
 * elsewhere a held job is left alone. */
static void apply_priority (struct adapter_ctx *ctx,
                            const struct write_scope *scope,
                            job_record_t *job,
                            int64_t priority)
{
    bool computing = job == scope->computing;

    if (!IS_JOB_PENDING (job) || priority < 0)
        return;
    if (!computing && job->priority == 0)
        return;
    if (conf_priority_mode (ctx->conf) == PRIORITY_AUTHORITATIVE) {
        /* urgency 0's priority 0 is the user's hold (urgency_hold), made
         * by the agent too when the job is new */
        if (priority == 0 && computing
            && jobtap_host_job_urgency_get (array_record_id (job)) == 0)
            return;
        if (priority == 0) {
            /* slurmctld overwrites a hold made in site_factor_p_set:
             * let the agent make it. */
            if (computing)
                defer_behind_fence (ctx, A_HOLD, array_record_id (job), 0,
                                    HOLD_PREFIX "priority 0",
                                    sizeof (HOLD_PREFIX "priority 0"));
            else
                hold_one (job, &(struct hold_arg){HOLD_PREFIX "priority 0",
                                                  !scope->computing});
            return;
        }
        job->priority = priority > UINT32_MAX ? UINT32_MAX : priority;
        job->direct_set_prio = 1;
    } else {
        /* Where no plugin gives priorities, Slurm's own stands, as without
         * jobtap (the builtin's priority = urgency would add 16 to all) */
        job->site_factor = jobtap_host_priority_from_plugins ()
                               ? site_factor_for (priority)
                               : NICE_OFFSET;
        if (!computing)
            slurm_priority_set (job);
    }
    last_job_update = time (NULL);
}

void actions_site_factor_priority (struct adapter_ctx *ctx,
                                   const struct write_scope *scope,
                                   int64_t priority)
{
    apply_priority (ctx, scope, scope->computing, priority);
}

static void cancel_job (job_record_t *job, const char *type, const char *note)
{
    char *desc = xstrdup_printf (HOLD_PREFIX "exception %s%s%s", type,
                                 note && note[0] ? ": " : "", note ? note : "");
    info ("jobtap: cancelling %pJ: %s", job, desc);
    if (IS_JOB_FINISHED (job))
        goto out;
    job_signal (job, SIGKILL, 0, slurm_conf.slurm_user_id, false);
    xfree (job->state_desc);
    job->state_desc = desc;
    desc = NULL;
out:
    xfree (desc);
}

/* Urgency 0 is Flux's hold, which the job's owner may lift: Slurm's user
 * hold is the same (scontrol release, by the user or an admin, raises the
 * urgency again: hooks_submit.c). An operator's hold is left alone. */
static void urgency_hold (struct adapter_ctx *ctx, job_record_t *job, bool held)
{
    if (!IS_JOB_PENDING (job))
        return;
    switch (urgency_hold_step (holder_of (job), held)) {
    case URGENCY_USER_HOLD:
        user_hold_one (job, NULL);
        break;
    case URGENCY_RELEASE:
        release_one (job, ctx);
        break;
    case URGENCY_KEEP:
        break;
    }
}

/* An action for a task still pending in its array's record with other
 * tasks. Outside the agent's pass only a hold of the record's first task
 * is made at once (it holds the others too, until the agent splits them
 * off); the rest waits for the agent, which may split records. There, a
 * cancel or an update is the task's alone (split off first); the first
 * task's decision is the record's; and the record is looked at again
 * before the pass ends (array_sync.h). Returns the record to apply the
 * action to, or NULL. */
static job_record_t *task_in_array (struct adapter_ctx *ctx,
                                    struct write_scope *scope,
                                    const struct action *a,
                                    job_record_t *meta)
{
    bool first = a->id == array_record_id (meta);

    if (!scope->agent_pass) {
        if (first && (a->kind == A_HOLD
                      || (a->kind == A_URGENCY_HOLD && a->priority != 0))) {
            if (array_dirty_mark (ctx->array_dirty, meta->job_id) < 0)
                error ("jobtap: %pJ: out of memory", meta);
            return meta;
        }
        queue_action (ctx, a->kind, a->id, a->priority, a->text,
                      action_text_len (a));
        return NULL;
    }
    if (a->kind == A_CANCEL || a->kind == A_JOBSPEC_UPDATE)
        return array_sync_split (ctx, meta, array_id_task (a->id));
    if (array_dirty_mark (ctx->array_dirty, meta->job_id) < 0)
        error ("jobtap: %pJ: out of memory", meta);
    return first ? meta : NULL;
}

struct apply_arg {
    struct adapter_ctx *ctx;
    struct write_scope *scope;
    const struct action *a;
};

/* The action done to one record (of a hetjob: to each of its components). */
static void apply_one (job_record_t *job, void *arg)
{
    struct apply_arg *x = arg;
    const struct action *a = x->a;

    switch (a->kind) {
    case A_HOLD:
        /* Slurm's dependency test takes assoc_mgr locks that a caller of
         * site_factor_p_set may hold: the agent's sweep adds it then. */
        hold_one (job, &(struct hold_arg){a->text, !x->scope->computing});
        break;
    case A_RELEASE:
        if (holder_is_shim (job))
            release_one (job, x->ctx);
        break;
    case A_PRIORITY:
        apply_priority (x->ctx, x->scope, job, a->priority);
        break;
    case A_CANCEL:
        cancel_job (job, a->text, a->text + strlen (a->text) + 1);
        break;
    case A_URGENCY_HOLD:
        urgency_hold (x->ctx, job, a->priority != 0);
        break;
    default: /* the PrEp hooks' own (hooks_prep.h) */
        break;
    }
}

void actions_apply (struct adapter_ctx *ctx,
                    struct write_scope *scope,
                    const struct action *a)
{
    if (a->kind == A_UPDATE_CHECK) {
        update_check_apply (a);
        return;
    }
    job_record_t *job = array_record_of (a->id);
    if (a->id <= UINT32_MAX)
        fence_lift (ctx->fences, (uint32_t)a->id, job);
    if (job && array_id_is_task (a->id) && array_is_pending_meta (job))
        job = task_in_array (ctx, scope, a, job);
    if (!job)
        return;
    scope->applied++;
    if (a->kind == A_JOBSPEC_UPDATE)
        post_update_apply (ctx, scope, a, job);
    else
        het_job_each (job, apply_one,
                      &(struct apply_arg){.ctx = ctx, .scope = scope, .a = a});
}

/* An action from the runtime: applied now if this thread holds the job
 * write lock in one of our entry points (it has a scope), else queued
 * for the agent. */
static void submit_action (struct adapter_ctx *ctx,
                           enum action_kind kind,
                           uint64_t id,
                           int64_t priority,
                           const char *text,
                           size_t len)
{
    /* Provisional (not yet created) jobs have no Slurm record. */
    if (!array_id_is_slurm (id))
        return;
    struct write_scope *scope = write_scope_current ();
    if (!scope) {
        queue_action (ctx, kind, id, priority, text, len);
        return;
    }
    if (scope->computing && id == array_record_id (scope->computing)
        && (kind == A_HOLD || kind == A_CANCEL
            || (kind == A_URGENCY_HOLD && priority != 0))) {
        defer_behind_fence (ctx, kind, id, priority, text, len);
        return;
    }
    /* behind a deferred one: in order (a release after the hold) */
    if (id <= UINT32_MAX && fence_has (ctx->fences, (uint32_t)id)) {
        queue_action (ctx, kind, id, priority, text, len);
        return;
    }
    struct action a = {.kind = kind,
                       .id = id,
                       .priority = priority,
                       .text = (char *)text,
                       .len = len};
    actions_apply (ctx, scope, &a);
}

void actions_hold_cb (uint64_t id, const char *reason, void *arg)
{
    submit_action (arg, A_HOLD, id, 0, reason, strlen (reason) + 1);
}

void actions_release_cb (uint64_t id, void *arg)
{
    submit_action (arg, A_RELEASE, id, 0, NULL, 0);
}

void actions_set_priority_cb (uint64_t id, int64_t priority, void *arg)
{
    submit_action (arg, A_PRIORITY, id, priority, NULL, 0);
}

void actions_urgency_hold_cb (uint64_t id, bool held, void *arg)
{
    submit_action (arg, A_URGENCY_HOLD, id, held, NULL, 0);
}

void actions_cancel_cb (uint64_t id,
                        const char *type,
                        const char *note,
                        void *arg)
{
    /* type and note travel as two strings in one buffer */
    size_t tl = strlen (type) + 1, nl = strlen (note ? note : "") + 1;
    char buf[tl + nl];
    memcpy (buf, type, tl);
    memcpy (buf + tl, note ? note : "", nl);
    submit_action (arg, A_CANCEL, id, 0, buf, tl + nl);
}
