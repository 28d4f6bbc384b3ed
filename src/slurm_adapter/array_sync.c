/* Array tasks as jobtap jobs (array_sync.h). */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "src/common/slurm_xlator.h"
#include "src/common/bitstring.h"
#include "src/common/log.h"
#include "src/slurmctld/slurmctld.h"

#include "array_dirty.h"
#include "array_id.h"
#include "array_record.h"
#include "array_sync.h"
#include "conf.h"
#include "fence.h"
#include "host.h"
#include "jobspec.h"
#include "slurm_compat.h"

/* The most tasks made jobs in one of the agent's passes: a pass holds the
 * job write lock (about 35 us a task), and the jobspecs it builds are
 * compacted after it. */
#define ARRAY_BIND_CHUNK 2000

/* job.new for one task; 0, or -1 logged. */
static int task_new (struct adapter_ctx *ctx,
                     job_record_t *meta,
                     uint32_t task,
                     uint64_t token,
                     int urgency)
{
    uint64_t id = array_task_jobid (meta->job_id, task);
    double t_submit = meta->details ? (double)meta->details->submit_time
                                    : (double)time (NULL);
    jobtap_host_error_t err = {{0}};
    void *source = NULL;
    size_t source_len = 0;
    json_t *spec = jobspec_from_array_task (meta, task, &source, &source_len);
    if (conf_log_jobspec (ctx->conf)) {
        char *s = json_dumps (spec, JSON_COMPACT | JSON_SORT_KEYS);
        info ("jobtap: %pJ task %u jobspec from record %s", meta, task,
              s ? s : "?");
        free (s);
    }
    int rc = jobtap_host_job_new (token, id, meta->user_id, urgency, t_submit,
                                  spec, &err);
    if (rc < 0 && token != 0 && errno == ENOENT) /* expired: replayed */
        rc = jobtap_host_job_new (0, id, meta->user_id, urgency, t_submit,
                                  spec, &err);
    /* the task's jobspec was given whole: at rest it keeps these fields */
    if (rc == 0 && source)
        jobtap_host_job_source (id, source, source_len);
    else
        free (source);
    json_decref (spec);
    if (rc < 0)
        error ("jobtap: %pJ task %u: job.new failed: %s; leaving it to Slurm",
               meta, task, err.text);
    return rc;
}

int array_sync_bind (struct adapter_ctx *ctx,
                     job_record_t *meta,
                     uint64_t token,
                     int urgency)
{
    uint32_t array_job_id = meta->job_id;
    int bound = 0;

    if (!array_is_pending_meta (meta)) {
        if (token)
            jobtap_host_submit_abort (token);
        fence_lift (ctx->fences, array_job_id, meta);
        return 0;
    }
    /* A task's job.new may split it off (a cancel, an update: actions.c),
     * leaving the rest in a new record with the array's id: walk a copy
     * of the tasks, and find the record again each time. */
    bitstr_t *tasks = bit_copy (meta->array_recs->task_id_bitmap);
    int64_t t;
    for (t = bit_ffs (tasks); t >= 0 && t < bit_size (tasks); t++) {
        if (!bit_test (tasks, t)
            || array_known (array_task_jobid (array_job_id, t)))
            continue;
        if (bound == ARRAY_BIND_CHUNK
            || !(meta = find_job_record (array_job_id)))
            break;
        if (task_new (ctx, meta, (uint32_t)t, token, urgency) == 0)
            bound++;
        token = 0; /* the provisional job is the first task's */
    }
    bool more = t >= 0 && t < bit_size (tasks) && meta;
    FREE_NULL_BITMAP (tasks);
    if (more) {
        /* fenced until every task is a job: the next pass goes on */
        if (array_dirty_mark (ctx->array_unbound, array_job_id) < 0)
            error ("jobtap: JobId=%u: out of memory", array_job_id);
        return bound;
    }
    fence_lift (ctx->fences, array_job_id, find_job_record (array_job_id));
    if (array_dirty_mark (ctx->array_dirty, array_job_id) < 0)
        error ("jobtap: JobId=%u: out of memory", array_job_id);
    return bound;
}

void array_sync_continue (struct adapter_ctx *ctx)
{
    struct array_dirty d = array_dirty_take (ctx->array_unbound);
    for (size_t i = 0; i < d.n; i++) {
        job_record_t *meta = find_job_record (d.ids[i]);
        if (meta)
            (void)array_sync_bind (ctx, meta, 0,
                                   jobspec_urgency_from_record (meta));
    }
    array_dirty_free (&d);
}

bool array_sync_unbound_left (const struct adapter_ctx *ctx)
{
    return ctx->array_unbound->n > 0;
}

void array_sync_resume (struct adapter_ctx *ctx, job_record_t *meta)
{
    fence_job (ctx->fences, meta);
    if (array_dirty_mark (ctx->array_unbound, meta->job_id) < 0)
        error ("jobtap: %pJ: out of memory", meta);
}

/* Whether has() holds for the record's first pending task and not its
 * last: the agent made some of its tasks jobs, in task order, not all. */
static bool first_not_last (const job_record_t *meta,
                            bool (*has) (uint64_t id))
{
    if (!array_is_pending_meta (meta))
        return false;
    bitstr_t *tasks = meta->array_recs->task_id_bitmap;
    uint64_t first = array_task_jobid (meta->job_id, bit_ffs (tasks));
    uint64_t last = array_task_jobid (meta->job_id, bit_fls (tasks));
    return has (first) && !has (last);
}

bool array_sync_partly_bound (const job_record_t *meta)
{
    return first_not_last (meta, array_known);
}

bool array_sync_partly_kept (const job_record_t *meta)
{
    return first_not_last (meta, jobtap_host_store_kept);
}

job_record_t *array_sync_split (struct adapter_ctx *ctx,
                                job_record_t *meta,
                                uint32_t task)
{
    /* the task must not take the record's fence along; the rest keeps
     * it while some of its tasks are not jobs yet */
    bool fenced = fence_has (ctx->fences, meta->job_id);
    fence_lift (ctx->fences, meta->job_id, meta);
    meta->array_task_id = task;
    job_record_t *rest = JOBTAP_JOB_ARRAY_SPLIT (meta);
    if (!rest) {
        meta->array_task_id = NO_VAL;
        error ("jobtap: %pJ: cannot split task %u off its array", meta, task);
        if (fenced)
            fence_job (ctx->fences, meta);
        return NULL;
    }
    if (fenced)
        fence_job (ctx->fences, rest);
    last_job_update = time (NULL);
    /* the old record is the task's now, with an id of its own */
    return meta;
}

/* Tasks of one record that disagree with its first task, split off. */
static void sync_record (struct adapter_ctx *ctx,
                         job_record_t *meta,
                         struct write_scope *scope)
{
    uint64_t first = array_record_id (meta);
    struct jobtap_host_decision want, d;
    uint32_t *split = NULL;
    size_t n = 0, room = 0;

    if (!array_id_is_task (first) || jobtap_host_job_decision (first, &want) < 0)
        return;
    bitstr_t *tasks = meta->array_recs->task_id_bitmap;
    int64_t size = bit_size (tasks);
    for (int64_t t = array_id_task (first) + 1; t < size; t++) {
        if (!bit_test (tasks, t)
            || jobtap_host_job_decision (array_task_jobid (meta->job_id, t),
                                         &d) < 0
            || jobtap_host_decision_equal (&want, &d))
            continue;
        if (n == room) {
            room = room ? room * 2 : 16;
            uint32_t *more = realloc (split, room * sizeof (*split));
            if (!more)
                break;
            split = more;
        }
        split[n++] = (uint32_t)t;
    }
    uint32_t array_job_id = meta->job_id;
    for (size_t i = 0; i < n && meta && array_is_pending_meta (meta); i++) {
        job_record_t *task = array_sync_split (ctx, meta, split[i]);
        if (!task)
            break;
        meta = find_job_record (array_job_id);
        info ("jobtap: %pJ split off its array: its jobtap decision differs "
              "from its array's", task);
        scope->applied++;
        (void)jobtap_host_job_resync (array_task_jobid (array_job_id,
                                                        split[i]));
    }
    free (split);
}

void array_sync_dirty (struct adapter_ctx *ctx, struct write_scope *scope)
{
    /* a resync may mark records again: a few rounds settle it */
    for (int round = 0; round < 3 && ctx->array_dirty->n; round++) {
        struct array_dirty d = array_dirty_take (ctx->array_dirty);
        for (size_t i = 0; i < d.n; i++) {
            job_record_t *meta = find_job_record (d.ids[i]);
            if (meta && array_is_pending_meta (meta))
                sync_record (ctx, meta, scope);
        }
        array_dirty_free (&d);
    }
}
