/* Bringing Slurm jobs into the runtime (bind.h).
 *
 * The job id is unknown in job_submit, and the first hook with a job
 * record is site_factor_p_set, inside job_allocate, before slurmctld
 * tests the job against the nodes and may start it: job.new runs there
 * (bind_in_allocate). A hold decided there would be overwritten by the
 * priority slurmctld computes next, so it goes to the agent, and a fence
 * keeps the job from starting meanwhile (fence.h). Where that hook is not
 * called (no site_factor/jobtap) job_submit creates the job held and the
 * agent runs job.new (bind_job), then holds or releases it. */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "src/common/slurm_xlator.h"
#include "src/common/list.h"
#include "src/common/log.h"
#include "src/slurmctld/slurmctld.h"

#include "actions.h"
#include "alloc.h"
#include "array_id.h"
#include "array_record.h"
#include "array_sync.h"
#include "bind.h"
#include "conf.h"
#include "ctx.h"
#include "fence.h"
#include "het_job.h"
#include "host.h"
#include "jobspec.h"
#include "keep.h"
#include "mark.h"
#include "queue.h"

static void bind_job (struct adapter_ctx *ctx,
                      struct write_scope *scope,
                      job_record_t *job);

bool bind_known (const job_record_t *job)
{
    return array_known (array_record_id (job));
}

static void log_record_jobspec (const job_record_t *job, json_t *spec)
{
    char *s = json_dumps (spec, JSON_COMPACT | JSON_SORT_KEYS);
    info ("jobtap: %pJ jobspec from record %s", job, s ? s : "?");
    free (s);
}

/* The record's mark: held by its empty environment array, or written in
 * its environment (mark.h). */
static bool
job_mark (struct adapter_ctx *ctx, const job_record_t *job, struct mark *m)
{
    char **env = job->spank_job_env;
    uint32_t n = job->spank_job_env_size;
    return (env && n == 0
            && mark_inline_find (env, n, xsize (env), &ctx->boot, m))
           || mark_find (env, n, &ctx->boot, m);
}

void bind_end (const job_record_t *job, bool requeued)
{
    int result = JOBTAP_RESULT_COMPLETED;
    const char *note = NULL;

    if (requeued) {
        result = JOBTAP_RESULT_CANCELED;
        note = "requeued by Slurm";
    }
    else if (IS_JOB_CANCELLED (job))
        result = JOBTAP_RESULT_CANCELED;
    else if (IS_JOB_TIMEOUT (job))
        result = JOBTAP_RESULT_TIMEOUT;
    else if (IS_JOB_FAILED (job) || IS_JOB_NODE_FAILED (job) || job->exit_code)
        result = JOBTAP_RESULT_FAILED;
    jobtap_host_job_finish (array_record_id (job), result, job->exit_code,
                            note);
}

void bind_finish (uint64_t id, const job_record_t *job)
{
    if (job)
        bind_end (job, false);
    else /* gone: purged, or a pending array task cancelled in its
          * array's record, which leaves no record of its own */
        jobtap_host_job_finish (id,
                                jobtap_host_job_state (id) < JOBTAP_STATE_RUN
                                    ? JOBTAP_RESULT_CANCELED
                                    : JOBTAP_RESULT_COMPLETED,
                                0, NULL);
    /* a plugin's epilog holds clean, as in Flux, though Slurm ran no
     * epilog hook (a job cancelled while pending): its end (A_EPILOG_DONE)
     * makes the job inactive */
    if (jobtap_host_job_perilog_wait (id) == 1)
        return;
    jobtap_host_job_inactive (id);
}

bool bind_ensure (struct adapter_ctx *ctx,
                  struct write_scope *scope,
                  job_record_t *job)
{
    if (!bind_known (job))
        (void)bind_discover (ctx, scope);
    return bind_known (job);
}

void bind_run (job_record_t *job)
{
    json_t *R = alloc_R (job);
    if (jobtap_host_job_run (array_record_id (job), R) < 0)
        debug ("jobtap: %pJ: job.state.run: %m", job);
    json_decref (R);
}

void bind_requeued (struct adapter_ctx *ctx,
                    struct write_scope *scope,
                    uint64_t id)
{
    job_record_t *job = array_record_of (id);

    if (!job || !IS_JOB_PENDING (job)
        || jobtap_host_job_state (id) != JOBTAP_STATE_INACTIVE)
        return;
    (void)jobtap_host_job_purge (id);
    info ("jobtap: %pJ was requeued: it starts anew in jobtap", job);
    bind_job (ctx, scope, job);
}

/* After job.new: make the Slurm job agree with the runtime's decision:
 * held (jobtap's reason) while in DEPEND or PRIORITY, else released, or
 * held by its user at urgency 0. After a restart this also lifts holds the
 * plugins no longer want. */
static void settle_job (struct adapter_ctx *ctx,
                        struct write_scope *scope,
                        job_record_t *job,
                        bool creation_hold,
                        bool restored,
                        int urgency)
{
    uint64_t id = array_record_id (job);

    /* (a requeued job is pending and may still be completing) */
    if (IS_JOB_FINISHED (job)
        || (IS_JOB_COMPLETING (job) && !IS_JOB_PENDING (job))) {
        /* Started and ended between two passes (array tasks split off
         * and run by the scheduler): it still gets its whole lifecycle. */
        jobtap_host_job_run (id, NULL);
        bind_finish (id, job);
        return;
    }
    if (IS_JOB_RUNNING (job) || IS_JOB_SUSPENDED (job)) {
        bind_run (job); /* a no-op for a job jobtap knows running */
        return;
    }
    if (!IS_JOB_PENDING (job))
        return;
    int state = jobtap_host_job_state (id);
    if (state >= JOBTAP_STATE_RUN && !creation_hold) {
        /* kept as started, but Slurm requeued it before the kill: as a
         * requeue seen live, it ends in jobtap and starts anew */
        bind_end (job, true);
        jobtap_host_job_inactive (id);
        bind_requeued (ctx, scope, id);
        return;
    }
    if (state == JOBTAP_STATE_SCHED) {
        /* a plugin may have changed it (urgency 0: flux-core's
         * submit-hold) */
        urgency = jobtap_host_job_urgency_get (id);
        if (urgency == 0) {
            /* an operator's hold stays the operator's */
            if ((job->state_reason != WAIT_HELD_USER
                 && job->state_reason != WAIT_HELD)
                || job->priority != 0 || holder_is_shim (job))
                actions_user_hold (job);
        } else if (creation_hold || holder_is_shim (job))
            actions_release (ctx, job);
        else if (restored && job->priority == 0
                 && (job->state_reason == WAIT_HELD_USER
                     || job->state_reason == WAIT_HELD)
                 && jobtap_host_job_event_posted (id, "urgency") == 1) {
            /* released by its user or an operator (jobtap kept it), but
             * Slurm had not saved the release when it was killed */
            info ("jobtap: %pJ: released again after the restart, as "
                  "jobtap kept it", job);
            actions_release (ctx, job);
        }
    } else if (state == JOBTAP_STATE_DEPEND || state == JOBTAP_STATE_PRIORITY) {
        if (!holder_is_shim (job)) /* the runtime's hold normally did */
            actions_hold (job, HOLD_PREFIX "waiting for a jobtap decision",
                          !scope->computing);
    }
}

/* job.new with the job's real id: bound to the provisional job of its
 * submission (token != 0), or replayed from the record when there is none
 * (a restart, or a job from before jobtap). 0, or -1 logged. */
static int job_new (struct adapter_ctx *ctx,
                    job_record_t *job,
                    uint64_t token,
                    int urgency)
{
    double t_submit =
        job->details ? (double)job->details->submit_time : (double)time (NULL);
    jobtap_host_error_t err;
    bool log_spec = conf_log_jobspec (ctx->conf);
    uint64_t id = array_record_id (job);
    json_t *spec = NULL;
    void *source = NULL;
    size_t source_len = 0;
    err.text[0] = '\0'; /* not all 512 bytes: read only as a string */
    int rc;

    if (log_spec || token == 0)
        spec = jobspec_from_record (job, &source, &source_len);
    if (spec && log_spec)
        log_record_jobspec (job, spec);
    rc = jobtap_host_job_new (token, id, job->user_id, urgency, t_submit,
                              token ? NULL : spec, &err);
    if (rc < 0 && token != 0 && errno == ENOENT) {
        /* No provisional job (expired, or an array task split off): the
         * runtime replays job.create and job.new from the record. */
        if (!spec)
            spec = jobspec_from_record (job, &source, &source_len);
        rc = jobtap_host_job_new (0, id, job->user_id, urgency, t_submit,
                                  spec, &err);
        token = 0;
    }
    /* a job made from the record keeps the record's fields at rest (one
     * bound to its submission has the submission's already) */
    if (rc == 0 && token == 0 && source)
        jobtap_host_job_source (id, source, source_len);
    else
        free (source);
    json_decref (spec);
    if (rc < 0)
        error ("jobtap: %pJ: job.new failed: %s; leaving it to Slurm", job,
               err.text);
    return rc;
}

bool bind_in_allocate (struct adapter_ctx *ctx,
                       struct write_scope *scope,
                       job_record_t *job)
{
    struct mark m;

    if (job->priority != NO_VAL || !job_mark (ctx, job, &m) || !m.token
        || (m.flags & MARK_CREATED_HELD)
        || ((m.flags & MARK_BATCH) && !job->batch_flag))
        return false;
    if (m.flags & MARK_HET_COMPONENT)
        return false; /* its leader's job: bind_het_leader_of_new */
    if (m.flags & MARK_ARRAY) {
        /* Its tasks do not exist yet (job_allocate makes them after this
         * hook): the agent binds them (array_sync.h), fenced till then. */
        fence_job (ctx->fences, job);
        return false;
    }
    /* The jobs slurmctld recovered first, as Flux replays its jobs before
     * it takes new ones: a release job's job.new must meet the job it
     * releases (a submission may come before the agent's first pass). */
    if (ctx->scan_next == 0)
        (void)bind_discover (ctx, scope);
    /* what jobtap decides reaches the record through its ops (actions.c):
     * no settling afterwards */
    if (job_new (ctx, job, m.token, m.urgency) < 0)
        return false;
    /* the next id bound here: the agent's scan need not look it up */
    if (job->job_id == ctx->scan_next)
        ctx->scan_next++;
    if (m.flags & MARK_HET_LEADER) {
        ctx->het_leader_token = m.token;
        ctx->het_leader_id = job->job_id;
    }
    return true;
}

uint64_t bind_het_leader_of_new (struct adapter_ctx *ctx,
                                 const job_record_t *job)
{
    struct mark m;

    if (job->priority != NO_VAL || job->het_job_id != 0
        || !ctx->het_leader_token || !job_mark (ctx, job, &m)
        || !(m.flags & MARK_HET_COMPONENT)
        || m.token != ctx->het_leader_token)
        return 0;
    return ctx->het_leader_id;
}

/* job.new for a job the runtime has not seen (binding the provisional job
 * of its submission when there is one), then settle it. */
static void bind_job (struct adapter_ctx *ctx,
                      struct write_scope *scope,
                      job_record_t *job)
{
    struct mark m = {.token = 0};
    int urgency = jobspec_urgency_from_record (job);

    if (het_job_is_component (job))
        return; /* its leader's job, bound with it (and released with it) */

    /* A job in this process's creation hold takes the urgency it was
     * submitted with; otherwise the record's hold state tells. */
    (void)job_mark (ctx, job, &m);
    if (m.token && (m.flags & MARK_CREATED_HELD))
        queue_bound (ctx->queue);
    bool creation_hold = m.token != 0 && (m.flags & MARK_CREATED_HELD)
                         && job->priority == 0 && !holder_is_shim (job);
    if (creation_hold)
        urgency = m.urgency;
    if (array_is_pending_meta (job)) {
        /* a new array: each task a job of its own */
        if (array_sync_bind (ctx, job, m.token, urgency) > 0)
            settle_job (ctx, scope, job, creation_hold, false, urgency);
        else if (creation_hold)
            actions_release (ctx, job);
        return;
    }
    if (job_new (ctx, job, m.token, urgency) < 0) {
        if (creation_hold || holder_is_shim (job))
            actions_release (ctx, job);
        return;
    }
    settle_job (ctx, scope, job, creation_hold, false, urgency);
}

struct job_vec {
    struct adapter_ctx *ctx;
    job_record_t **jobs;
    size_t n, size;
};

static int collect_unknown (void *x, void *arg)
{
    job_record_t *job = x;
    struct job_vec *v = arg;
    if (IS_JOB_FINISHED (job) || het_job_is_component (job))
        return 0; /* a hetjob is its leader's job */
    if (array_sync_partly_bound (job)) {
        /* cut short by a restart while its tasks were made jobs */
        fence_clear_leftover (job);
        array_sync_resume (v->ctx, job);
        return 0;
    }
    if (bind_known (job))
        return 0;
    if (v->n == v->size) {
        size_t size = v->size ? v->size * 2 : 256;
        job_record_t **jobs = realloc (v->jobs, size * sizeof (*jobs));
        if (!jobs)
            return -1;
        v->jobs = jobs;
        v->size = size;
    }
    v->jobs[v->n++] = job;
    return 0;
}

/* Where a recovered job stands in the jobtap lifecycle, by what Slurm
 * kept: a jobtap hold is DEPEND or PRIORITY, other pending jobs SCHED. */
static int replay_rank (const job_record_t *job)
{
    if (IS_JOB_PENDING (job) && holder_is_shim (job))
        return strstr (job->state_desc, "priority") ? JOBTAP_STATE_PRIORITY
                                                    : JOBTAP_STATE_DEPEND;
    if (IS_JOB_PENDING (job))
        return JOBTAP_STATE_SCHED;
    return JOBTAP_STATE_RUN;
}

static int by_state_then_id (const void *a, const void *b)
{
    const job_record_t *x = *(job_record_t *const *)a;
    const job_record_t *y = *(job_record_t *const *)b;
    int rx = replay_rank (x), ry = replay_rank (y);
    if (rx != ry)
        return rx < ry ? -1 : 1;
    return x->job_id < y->job_id ? -1 : x->job_id > y->job_id;
}

/* The fields each restored job's jobspec was made from, for the runtime
 * once it has the jobs (jobtap_host_job_source). */
struct restore_sources {
    struct restore_source {
        uint64_t id;
        void *data;
        size_t len;
    } *v;
    size_t n, cap;
};

static void restore_sources_add (struct restore_sources *s,
                                 uint64_t id,
                                 void *data,
                                 size_t len)
{
    if (!data)
        return;
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        void *v = realloc (s->v, cap * sizeof (*s->v));
        if (!v) {
            free (data); /* that job rests as text */
            return;
        }
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = (struct restore_source){id, data, len};
}

/* Given to the runtime (restored true), or let go. */
static void restore_sources_finish (struct restore_sources *s, bool restored)
{
    for (size_t i = 0; i < s->n; i++) {
        if (restored)
            jobtap_host_job_source (s->v[i].id, s->v[i].data, s->v[i].len);
        else
            free (s->v[i].data);
    }
    free (s->v);
}

/* jobs_restore's entry for one jobtap job of a record being restored. */
struct restore_batch {
    struct adapter_ctx *ctx;
    json_t *batch;
    struct restore_sources *sources;
    const job_record_t *job;
    int urgency;
    bool kept_only; /* only the tasks with a kept history */
    size_t n;
};

static int restore_entry (uint64_t id, void *arg)
{
    struct restore_batch *r = arg;
    const job_record_t *job = r->job;
    void *source = NULL;
    size_t source_len = 0;
    if (r->kept_only && !jobtap_host_store_kept (id))
        return 0;
    json_t *spec = array_id_is_task (id) && array_is_pending_meta (job)
                       ? jobspec_from_array_task (job, array_id_task (id),
                                                  &source, &source_len)
                       : jobspec_from_record (job, &source, &source_len);

    restore_sources_add (r->sources, id, source, source_len);

    if (conf_log_jobspec (r->ctx->conf))
        log_record_jobspec (job, spec);
    json_t *entry = json_pack (
        "{s:I s:I s:i s:f s:o s:i}", "id", (json_int_t)id, "userid",
        (json_int_t)job->user_id, "urgency", r->urgency, "t_submit",
        job->details ? (double)job->details->submit_time : (double)time (NULL),
        "jobspec", spec, "state", replay_rank (job));
    if (entry && !IS_JOB_PENDING (job))
        json_object_set_new (entry, "R", alloc_R ((job_record_t *)job));
    json_array_append_new (r->batch, entry);
    r->n++;
    return 0;
}

/* All jobs the runtime does not know: at start-up, everything slurmctld
 * recovered. They are restored in one batch, so each plugin gets them in
 * its own load sort order; then jobs from this process's own submissions
 * bind to their provisional jobs. In that order, as Flux replays its jobs
 * before it takes new ones: a submission slurmctld took before the
 * agent's first pass (24.11's reconfigure restarts it under load) must
 * meet the restored jobs, as a release job meets the jobs it releases. */
static int bind_all_unknown (struct adapter_ctx *ctx,
                             struct write_scope *scope)
{
    struct job_vec v = {.ctx = ctx};
    json_t *batch = json_array ();
    struct restore_sources sources = {0};
    jobtap_host_error_t err = {{0}};
    size_t restored = 0;
    bool *creation = NULL, *resume = NULL;
    job_record_t **own = NULL;
    size_t n_own = 0;

    /* in control: slurmctld has read its state (a backup only once it
     * took over; slurmctld_primary stays false in one that did) */
    keep_open (ctx);
    list_for_each (job_list, collect_unknown, &v);
    qsort (v.jobs, v.n, sizeof (*v.jobs), by_state_then_id);
    if (v.n && (!(creation = calloc (v.n, sizeof (*creation)))
                || !(resume = calloc (v.n, sizeof (*resume)))
                || !(own = calloc (v.n, sizeof (*own))))) {
        free (creation);
        free (resume);
        free (v.jobs);
        json_decref (batch);
        return 0;
    }
    for (size_t i = 0; i < v.n; i++) {
        job_record_t *job = v.jobs[i];
        struct mark m = {.token = 0, .urgency = -1};
        fence_clear_leftover (job);
        if (job_mark (ctx, job, &m) && m.token) {
            own[n_own++] = job; /* bound after the restore */
            v.jobs[i] = NULL;
            continue;
        }
        /* Saved by Slurm in the hold a submission was created with
         * (before the old process released it): with the jobs' state
         * kept, a user's own hold is in jobtap's history, so this one is
         * the creation hold, and the submission's urgency holds. */
        int record_urgency = jobspec_urgency_from_record (job);
        int urgency = m.urgency;
        creation[i] = ctx->keep->open && (m.flags & MARK_CREATED_HELD)
                      && record_urgency == 0 && urgency > 0
                      && IS_JOB_PENDING (job) && !holder_is_shim (job);
        if (!creation[i])
            urgency = record_urgency;
        /* the job, or each task of an array whose record holds several;
         * of an array whose tasks the agent was making jobs when
         * slurmctld stopped, those it made (the rest: below) */
        resume[i] = ctx->keep->open && array_sync_partly_kept (job);
        struct restore_batch r = {.ctx = ctx, .batch = batch,
                                  .sources = &sources, .job = job,
                                  .urgency = urgency,
                                  .kept_only = resume[i]};
        (void)array_for_each_id (job, restore_entry, &r);
        restored += r.n;
    }
    if (restored > 0) {
        bool ok = jobtap_host_jobs_restore (batch, &err) >= 0;
        if (!ok)
            error ("jobtap: restoring %zu jobs failed: %s", restored, err.text);
        else
            info ("jobtap: restored %zu jobs", restored);
        restore_sources_finish (&sources, ok);
        for (size_t i = 0; i < v.n; i++)
            if (v.jobs[i])
                settle_job (ctx, scope, v.jobs[i], creation[i], true,
                            jobspec_urgency_from_record (v.jobs[i]));
    }
    for (size_t i = 0; i < v.n; i++)
        if (v.jobs[i] && resume[i]) {
            info ("jobtap: %pJ: slurmctld stopped while its tasks were made "
                  "jobs: the rest are made jobs now", v.jobs[i]);
            array_sync_resume (ctx, v.jobs[i]);
        }
    for (size_t i = 0; i < n_own; i++)
        if (own[i]->priority != NO_VAL) /* else bind_in_allocate's own */
            bind_job (ctx, scope, own[i]);
    keep_restored (ctx);
    json_decref (batch);
    free (creation);
    free (resume);
    free (own);
    free (v.jobs);
    return (int)v.n;
}

/* Job ids come from one sequence, so only the new range is looked at and
 * the cost does not grow with the number of jobs in the system. */
int bind_discover (struct adapter_ctx *ctx, struct write_scope *scope)
{
    uint32_t next;
    int found = 0;

    if (!job_list)
        return 0; /* slurmctld has not read its state yet */
    next = get_next_job_id (true);
    if (next == ctx->scan_next)
        return 0;
    if (ctx->scan_next == 0 || next < ctx->scan_next ||
        next - ctx->scan_next > 100000) {
        found = bind_all_unknown (ctx, scope);
    } else {
        for (uint32_t id = ctx->scan_next; id < next; id++) {
            job_record_t *job = find_job_record (id);
            if (job && !bind_known (job)) {
                bind_job (ctx, scope, job);
                found++;
            }
        }
    }
    ctx->scan_next = next;
    return found;
}
