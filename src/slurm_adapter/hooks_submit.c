/* job_submit/jobtap's entry points: job_submit (job.create, job.validate)
 * and job_modify (job.update.*), declared in adapter.h. They reach the
 * adapter through the process's one instance (instance.h): Slurm passes
 * them no context.
 *
 * Locks: slurmctld calls job_submit with at least the job read lock and
 * job_modify with the job write lock held, so neither takes a slurmctld
 * lock; the runtime's mutex and the leaf locks of conf and the queue are
 * taken inside, in that order. */
#include <config.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "src/common/slurm_xlator.h"
#include "src/common/log.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"
#include "src/common/assoc_mgr.h"

/* The Slurm plugins call these: the library's only exported symbols. */
#pragma GCC visibility push(default)
#include "adapter.h"
#pragma GCC visibility pop

#include "actions.h"
#include "array_record.h"
#include "bind.h"
#include "conf.h"
#include "het_job.h"
#include "host.h"
#include "instance.h"
#include "jobspec.h"
#include "jobspec_apply.h"
#include "jobspec_dependency.h"
#include "jobspec_update.h"
#include "keep.h"
#include "mark.h"
#include "write_scope.h"
#include "queue.h"
#include "slurm_compat.h"
#include "update_check.h"

static void mark_submission (struct adapter_ctx *ctx,
                             job_desc_msg_t *desc,
                             const struct mark *m)
{
    char *mark = xmalloc_nz (MARK_SIZE); /* mark_format writes it all */

    mark_format (mark, &ctx->boot, m);
    if (!desc->spank_job_env) {
        /* the usual request, with none: both slots are written below, so
         * not zeroed (xrealloc from nothing is a calloc) */
        desc->spank_job_env = xmalloc_nz (2 * sizeof (char *));
        desc->spank_job_env_size = 0;
    }
    else
        desc->spank_job_env = xrealloc (desc->spank_job_env,
                                        sizeof (char *)
                                            * (desc->spank_job_env_size + 2));
    desc->spank_job_env[desc->spank_job_env_size++] = mark;
    desc->spank_job_env[desc->spank_job_env_size] = NULL;
}

static bool plugin_takes_scheme (const char *scheme, void *arg)
{
    char topic[160];
    (void)arg;
    return snprintf (topic, sizeof (topic), "job.dependency.%s", scheme)
               < (int)sizeof (topic)
           && jobtap_host_topic_handled (topic);
}

/* -d/--dependency: the schemes a jobtap plugin takes leave the request,
 * which keeps Slurm's own; *taken gets them as RFC 26 entries for the
 * jobspec (their job.dependency.<scheme> runs, as for flux submit
 * --dependency), or NULL. */
static int take_jobtap_dependencies (job_desc_msg_t *desc,
                                     json_t **taken,
                                     char **err_msg)
{
    jobtap_host_error_t err;
    char *rest;

    *taken = NULL;
    if (!desc->dependency || !desc->dependency[0])
        return 0;
    if (jobspec_dependency_split (desc->dependency, plugin_takes_scheme, NULL,
                                  &rest, taken, &err)
        < 0) {
        *err_msg = xstrdup (err.text);
        return -1;
    }
    if (json_array_size (*taken) > 0) {
        xfree (desc->dependency);
        desc->dependency = rest ? xstrdup (rest) : NULL;
    }
    free (rest);
    return 0;
}

/* The taken entries after the ones the jobspec has from Slurm's schemes. */
static int add_dependencies (json_t *spec, json_t *taken)
{
    json_t *system = json_object_get (json_object_get (spec, "attributes"),
                                      "system");
    json_t *deps = json_object_get (system, "dependencies");

    if (!deps
        && json_object_set_new (system, "dependencies", deps = json_array ())
               < 0)
        return -1;
    return json_array_extend (deps, taken);
}

/* Flux's jobspec defaults ([policy] and [queues]), put in the request as
 * Flux's ingest puts them in the jobspec, before anything sees it: a
 * default queue for a job that names no partition, a default duration
 * (in Slurm's whole minutes, rounded up) for one that asks for no time
 * limit.  Slurm's own partition defaults apply where the config sets
 * none.  The partition read lock is held in job_submit. */
static void apply_policy_defaults (struct adapter_ctx *ctx,
                                   job_desc_msg_t *desc)
{
    const char *queue;
    double duration;

    if (!conf_policy_defaults (ctx->conf))
        return;
    if (!desc->partition) {
        char *q = jobtap_host_policy_default_queue ();
        if (q)
            desc->partition = xstrdup (q);
        free (q);
    }
    if (desc->time_limit != NO_VAL)
        return;
    queue = desc->partition ? desc->partition
            : default_part_loc ? default_part_loc->name
                               : NULL;
    duration = jobtap_host_policy_default_duration (queue);
    if (duration == 0. || isinf (duration))
        desc->time_limit = INFINITE;
    else if (duration > 0.)
        desc->time_limit = jobspec_duration_minutes (duration);
}

/* [slurm-jobtap] log-jobspec: the jobspec of a submission, as the tree
 * the hook built or made from its fields for the log. */
static void log_jobspec (const job_desc_msg_t *desc,
                         json_t *spec,
                         const void *source,
                         size_t source_len)
{
    json_t *shown = spec ? json_incref (spec)
                         : jobspec_source_build (source, source_len, NULL);
    char *s = shown ? json_dumps (shown, JSON_COMPACT | JSON_SORT_KEYS) : NULL;

    info ("jobtap: jobspec of a submission by uid %u: %s", desc->user_id,
          s ? s : "?");
    free (s);
    json_decref (shown);
}

/* The token of the hetjob leader this RPC thread submitted last: slurmctld
 * passes a hetjob's components to job_submit one after the other, leader
 * first, in one thread. */
static __thread uint64_t het_leader_token;

static int submit_hook (job_desc_msg_t *desc,
                        uint32_t submit_uid,
                        char **err_msg)
{
    struct adapter_ctx *ctx = &adapter_instance;
    jobtap_host_error_t err;
    json_t *taken;
    err.text[0] = '\0'; /* not all 512 bytes: read only as a string */
    if (take_jobtap_dependencies (desc, &taken, err_msg) < 0)
        return SLURM_ERROR;
    apply_policy_defaults (ctx, desc);
    /* the fields the jobspec is made of, for the runtime to make it only
     * if a reader needs the tree; the tree itself when jobtap's own
     * dependencies are added to it */
    void *source = NULL;
    size_t source_len = 0;
    json_t *spec = jobspec_from_desc (
        desc, json_array_size (taken) == 0 ? &source : NULL, &source_len);
    json_t *updates = NULL;
    uint64_t token = 0;
    int urgency = jobspec_urgency_from_desc (desc);
    int rc;
    (void)submit_uid;

    if ((!spec && !source) || (json_array_size (taken) > 0
                               && add_dependencies (spec, taken) < 0)) {
        json_decref (spec);
        json_decref (taken);
        *err_msg = xstrdup ("jobtap: out of memory");
        return SLURM_ERROR;
    }
    json_decref (taken);
    keep_before_submit (ctx);
    if (conf_log_jobspec (ctx->conf))
        log_jobspec (desc, spec, source, source_len);
    /* the runtime takes spec or source: a policy's update then edits the
     * tree in place, or is listed until the tree is made */
    if (source)
        rc = jobtap_host_submit_from_source (source, source_len,
                                             desc->user_id, urgency,
                                             (double)time (NULL), 0, &updates,
                                             &token, &err);
    else
        rc = jobtap_host_submit (spec, desc->user_id, urgency,
                                 (double)time (NULL),
                                 JOBTAP_SUBMIT_TAKE_JOBSPEC, &updates, &token,
                                 &err);
    if (rc < 0) {
        info ("jobtap: rejected a job of user %u: %s", desc->user_id, err.text);
        *err_msg = xstrdup (err.text);
        return SLURM_ERROR;
    }
    if (updates && json_object_size (updates) > 0
        && jobspec_apply_updates (desc, NULL, updates, ctx->apply_memo, &err)
               < 0) {
        json_decref (updates);
        jobtap_host_submit_abort (token);
        info ("jobtap: rejected a job of user %u: %s", desc->user_id, err.text);
        *err_msg = xstrdup (err.text);
        return SLURM_ERROR;
    }
    json_decref (updates);
    if (het_job_desc_is_component (desc)) {
        /* validated as a part of its leader's job, which it joins */
        jobtap_host_submit_abort (token);
        token = het_leader_token;
    }
    struct mark m = {
        .token = token,
        .urgency = urgency,
        .op_priority = desc->priority != 0 && desc->priority != NO_VAL
                           ? desc->priority
                           : 0,
        .flags = (desc->script ? MARK_BATCH : 0)
                 | (desc->array_inx && desc->array_inx[0] ? MARK_ARRAY : 0)
                 | (het_job_desc_is_leader (desc) ? MARK_HET_LEADER : 0)
                 | (het_job_desc_is_component (desc) ? MARK_HET_COMPONENT : 0),
    };
    if (het_job_desc_is_leader (desc))
        het_leader_token = token;
    /* job.new runs in site_factor_p_set, where slurmctld computes the
     * job's first priority (bind.h), unless slurmctld will not compute
     * one: a job held by its user waits for the agent, and one an
     * operator gave a priority is created held, as is every job where
     * site_factor/jobtap is not in use. A hetjob's other components are
     * not: the leader's hold (and release) is theirs (het_job.h). */
    if (desc->priority != 0 && !het_job_desc_is_component (desc)
        && (!ctx->new_in_allocate || m.op_priority != 0)) {
        m.flags |= MARK_CREATED_HELD;
        desc->priority = 0; /* the agent releases it once jobtap decided */
    }
    if (!desc->spank_job_env && desc->priority == NO_VAL
        && !(m.flags & (MARK_CREATED_HELD | MARK_ARRAY | MARK_HET_LEADER
                        | MARK_HET_COMPONENT))) {
        /* bound in this RPC by site_factor_p_set, which finds the mark in
         * the record's empty environment array, moved from the request
         * (mark.h) */
        struct mark_inline *a = xmalloc_nz (MARK_INLINE_SIZE);
        mark_inline_write (a, &ctx->boot, &m);
        desc->spank_job_env = (char **)a;
        desc->spank_job_env_size = 0;
    }
    else
        mark_submission (ctx, desc, &m);
    if (m.flags & MARK_CREATED_HELD)
        queue_submitted (ctx->queue);
    return SLURM_SUCCESS;
}

/* The urgency of every jobtap job the record stands for (an array's
 * pending tasks, when its record still holds several). */
static int set_urgency (uint64_t id, void *arg)
{
    int urgency = *(int *)arg;
    if (jobtap_host_job_urgency (id, urgency) < 0 && errno != ENOENT)
        error ("jobtap: job %ju: cannot set urgency %d: %m", (uintmax_t)id,
               urgency);
    return 0;
}

/* Urgency follows Slurm's user holds: `scontrol hold` is urgency 0 and
 * `scontrol release` the default 16. */
static void follow_user_hold (job_desc_msg_t *desc, job_record_t *job)
{
    int urgency;

    if (desc->priority == 0)
        urgency = 0;
    else if (desc->priority == INFINITE && job->priority == 0 &&
             !holder_is_shim (job))
        urgency = 16;
    else
        return;
    struct write_scope scope = {.computing = NULL};
    write_scope_enter (&scope);
    /* Right after sbatch the agent may not have bound the job yet: bind
     * it first, or its creation hold, lifted at the bind, would undo
     * this hold. */
    (void)bind_ensure (&adapter_instance, &scope, job);
    (void)array_for_each_id (job, set_urgency, &urgency);
    write_scope_leave (&scope);
}

/* The values in 'final' that the request did not already carry: what
 * job.update.<key> handlers added. New reference. */
static json_t *added_updates (json_t *request, json_t *final)
{
    json_t *added = json_object ();
    const char *key;
    json_t *v;

    json_object_foreach (final, key, v)
    {
        if (!json_equal (json_object_get (request, key), v))
            json_object_set (added, key, v);
    }
    return added;
}

/* scontrol update: job.update.<key> for each changed field, then
 * job.validate on the updated jobspec (unless a handler validated it),
 * then job.update. Keys no plugin handles follow Slurm's own rules. */
/* A rejected update's reason: in slurmctld's log always, and to the user
 * where the release lets it through (err_msg not NULL). */
static int reject_update (job_record_t *job,
                          uint32_t submit_uid,
                          const char *why,
                          char **err_msg)
{
    info ("jobtap: update of %pJ by uid %u rejected: %s", job, submit_uid,
          why);
    if (err_msg) {
        xfree (*err_msg);
        *err_msg = xstrdup (why);
    }
    return ESLURM_ACCESS_DENIED;
}

/* One jobtap job's part of a job_modify request: all of an array's
 * pending tasks take it, the first one's result is the request's. With
 * several tasks each is asked first (check_only), so that a task refusing
 * it leaves the others unchanged too. */
struct task_update {
    json_t *request;
    uint32_t uid, role;
    jobtap_host_error_t *err;
    bool check_only;
    json_t *final; /* the first task's */
};

static int update_one (uint64_t id, void *arg)
{
    struct task_update *u = arg;
    json_t *final = NULL;
    int flags = JOBTAP_UPDATE_UNHANDLED_OK
                | (u->check_only ? JOBTAP_UPDATE_CHECK_ONLY : 0);

    if (jobtap_host_job_update_ex (id, u->request, u->uid, u->role, flags,
                                   u->check_only ? NULL : &final, u->err)
        < 0)
        return -1;
    if (u->check_only)
        return 0;
    if (!u->final)
        u->final = final;
    else
        json_decref (final);
    return 0;
}

static int update_from_modify (job_desc_msg_t *desc,
                               job_record_t *job,
                               uint32_t submit_uid,
                               char **err_msg)
{
    json_t *request = jobspec_updates_from_desc (desc, job);
    json_t *final = NULL, *added = NULL;
    jobtap_host_error_t err = {{0}};
    uint32_t role =
        validate_operator (submit_uid) ? JOBTAP_ROLE_OWNER : JOBTAP_ROLE_USER;
    int rc = SLURM_SUCCESS;
    struct write_scope scope = {.computing = NULL};

    if (!request || json_object_size (request) == 0)
        goto out;
    write_scope_enter (&scope);
    /* Right after sbatch the agent may not have bound the job yet: bind
     * it now (job write lock held), so the plugins see the update. */
    if (!bind_ensure (&adapter_instance, &scope, job))
        goto out_restore;
    struct task_update u = {.request = request, .uid = submit_uid,
                            .role = role, .err = &err,
                            .check_only = array_is_pending_meta (job)};
    if (u.check_only && array_for_each_id (job, update_one, &u) != 0) {
        rc = reject_update (job, submit_uid, err.text, err_msg);
        goto out_restore;
    }
    u.check_only = false;
    if (array_for_each_id (job, update_one, &u) != 0) {
        rc = reject_update (job, submit_uid, err.text, err_msg);
        json_decref (u.final);
        goto out_restore;
    }
    final = u.final;
    added = added_updates (request, final);
    if (json_object_size (added) > 0 &&
        jobspec_apply_updates (desc, job, added, NULL, &err) < 0)
        rc = reject_update (job, submit_uid, err.text, err_msg);
    /* the runtime took the update: Slurm may still refuse it */
    if (final)
        update_check_queue (&adapter_instance, job->job_id, final);
out_restore:
    write_scope_leave (&scope);
out:
    json_decref (request);
    json_decref (final);
    json_decref (added);
    return rc;
}

/* Whether Slurm lets uid update the job at all: its owner, an operator,
 * or a coordinator of its account (and of the account it would move to).
 * 22.05 calls job_modify before it checks, so a stranger's request must
 * not reach the runtime. */
static bool slurm_allows_update (const job_desc_msg_t *desc,
                                 const job_record_t *job,
                                 uint32_t uid)
{
    if (job->user_id == uid || validate_operator (uid))
        return true;
    if (!JOBTAP_IS_ACCT_COORD (uid, job->account))
        return false;
    return !desc->account || JOBTAP_IS_ACCT_COORD (uid, desc->account);
}

/* The urgency as a hold or release asks it, for a job jobtap holds: the
 * user's part of the hold is the urgency, jobtap's hold stays (its reason
 * names both, event.c). Slurm is then told nothing of it; only an
 * operator's release still lifts jobtap's hold too. Returns an error for
 * a user's release with no hold of theirs to lift. */
static int hold_under_shim (job_desc_msg_t *desc,
                            job_record_t *job,
                            uint32_t submit_uid,
                            char **err_msg)
{
    bool operator = validate_operator (submit_uid);
    int urgency = jobtap_host_job_urgency_get (array_record_id (job));
    int want;

    if (desc->priority == 0)
        want = 0;
    else if (desc->priority == INFINITE && urgency == 0)
        want = 16;
    else if (operator)
        return SLURM_SUCCESS; /* Slurm's own: an operator overrides jobtap */
    else {
        info ("jobtap: refusing to release %pJ for uid %u: %s", job, submit_uid,
              job->state_desc);
        if (err_msg) {
            xfree (*err_msg);
            *err_msg = xstrdup (job->state_desc);
        }
        return ESLURM_ACCESS_DENIED;
    }
    if (urgency != want) {
        struct write_scope scope = {.computing = NULL};
        write_scope_enter (&scope);
        (void)array_for_each_id (job, set_urgency, &want);
        write_scope_leave (&scope);
        info ("jobtap: %pJ: urgency %d by uid %u; %s", job, want, submit_uid,
              job->state_desc);
    }
    if (!(operator && desc->priority == INFINITE))
        desc->priority = NO_VAL; /* jobtap's hold stays as it is */
    return SLURM_SUCCESS;
}

static int modify_hook (job_desc_msg_t *desc,
                        job_record_t *job,
                        uint32_t submit_uid,
                        char **err_msg)
{
    struct write_scope *outer = write_scope_current ();
    if (outer && outer->plugin_update)
        return SLURM_SUCCESS; /* a plugin's own update, made in Slurm */
    if (!slurm_allows_update (desc, job, submit_uid))
        return SLURM_SUCCESS; /* Slurm refuses it next, with its error */
    if (desc->priority != NO_VAL && IS_JOB_PENDING (job)
        && holder_is_shim (job)) {
        int rc = hold_under_shim (desc, job, submit_uid, err_msg);
        if (rc != SLURM_SUCCESS)
            return rc;
    }
    if (desc->priority != NO_VAL && IS_JOB_PENDING (job))
        follow_user_hold (desc, job);
    /* a hetjob's jobspec is its leader's: another component's fields
     * follow Slurm's rules alone */
    int rc = het_job_is_component (job)
                 ? SLURM_SUCCESS
                 : update_from_modify (desc, job, submit_uid, err_msg);
    keep_write (&adapter_instance);
    return rc;
}

/* The entry points leave errno as slurmctld had it: 26.05's update of a
 * partition takes errno for its error code when it finds no association
 * (no accounting), so what the plugins' calls left in it (ENOENT of a
 * lookup) failed the update where Slurm alone may not. */
int jobtap_slurm_job_submit (job_desc_msg_t *desc,
                             uint32_t submit_uid,
                             char **err_msg)
{
    int saved_errno = errno;
    int rc = submit_hook (desc, submit_uid, err_msg);
    errno = saved_errno;
    return rc;
}

int jobtap_slurm_job_modify (job_desc_msg_t *desc,
                             job_record_t *job,
                             uint32_t submit_uid,
                             char **err_msg)
{
    int saved_errno = errno;
    int rc = modify_hook (desc, job, submit_uid, err_msg);
    errno = saved_errno;
    return rc;
}
