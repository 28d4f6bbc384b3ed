/* Jobspec updates <-> Slurm job fields: checked updates applied to a
 * job_desc (at submit, after it, and what job.update.<key> handlers add
 * to a job_modify), and a job_modify request read as updates.  The keys
 * are src/jobspec's table; this file knows which job_desc member each is.
 * docs/jobspec.md documents the mapping. */
#include <config.h>

#include <sched.h>
#include <string.h>
#include <time.h>

#include "src/common/slurm_xlator.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

#include "jobspec.h"
#include "jobspec_apply.h"
#include "jobspec_build.h"
#include "jobspec_mail.h"
#include "jobspec_resize.h"
#include "jobspec_update.h"
#include "slurm_compat.h"

/* jobspec_mail.h writes Slurm's mail bits without Slurm's headers. */
_Static_assert(JOBSPEC_MAIL_BEGIN == MAIL_JOB_BEGIN &&
                   JOBSPEC_MAIL_END == MAIL_JOB_END &&
                   JOBSPEC_MAIL_FAIL == MAIL_JOB_FAIL &&
                   JOBSPEC_MAIL_REQUEUE == MAIL_JOB_REQUEUE &&
                   JOBSPEC_MAIL_TIME100 == MAIL_JOB_TIME100 &&
                   JOBSPEC_MAIL_TIME90 == MAIL_JOB_TIME90 &&
                   JOBSPEC_MAIL_TIME80 == MAIL_JOB_TIME80 &&
                   JOBSPEC_MAIL_TIME50 == MAIL_JOB_TIME50 &&
                   JOBSPEC_MAIL_STAGE_OUT == MAIL_JOB_STAGE_OUT &&
                   JOBSPEC_MAIL_ARRAY_TASKS == MAIL_ARRAY_TASKS &&
                   JOBSPEC_MAIL_INVALID_DEPEND == MAIL_INVALID_DEPEND,
               "jobspec_mail.h has Slurm's mail bits");

static bool set32 (uint32_t v)
{
    return v != NO_VAL && v != INFINITE;
}

static bool set16 (uint16_t v)
{
    return v != NO_VAL16 && v != INFINITE16;
}

/* The job_desc member behind each string field of src/jobspec's key
 * table, both ways. */
static const size_t desc_offset[JOBSPEC_FIELD_FIRST_NUMBER] = {
    [JOBSPEC_FIELD_TIME_LIMIT] = 0, /* not a string: unused */
    [JOBSPEC_FIELD_PARTITION] = offsetof (job_desc_msg_t, partition),
    [JOBSPEC_FIELD_ACCOUNT] = offsetof (job_desc_msg_t, account),
    [JOBSPEC_FIELD_WCKEY] = offsetof (job_desc_msg_t, wckey),
    [JOBSPEC_FIELD_NAME] = offsetof (job_desc_msg_t, name),
    [JOBSPEC_FIELD_WORK_DIR] = offsetof (job_desc_msg_t, work_dir),
    [JOBSPEC_FIELD_FEATURES] = offsetof (job_desc_msg_t, features),
    [JOBSPEC_FIELD_COMMENT] = offsetof (job_desc_msg_t, comment),
    [JOBSPEC_FIELD_DEPENDENCY] = offsetof (job_desc_msg_t, dependency),
    [JOBSPEC_FIELD_QOS] = offsetof (job_desc_msg_t, qos),
    [JOBSPEC_FIELD_RESERVATION] = offsetof (job_desc_msg_t, reservation),
    [JOBSPEC_FIELD_LICENSES] = offsetof (job_desc_msg_t, licenses),
    [JOBSPEC_FIELD_ADMIN_COMMENT] = offsetof (job_desc_msg_t, admin_comment),
    [JOBSPEC_FIELD_TRES_PER_JOB] = offsetof (job_desc_msg_t, tres_per_job),
    [JOBSPEC_FIELD_TRES_PER_NODE] = offsetof (job_desc_msg_t, tres_per_node),
    [JOBSPEC_FIELD_TRES_PER_SOCKET] =
        offsetof (job_desc_msg_t, tres_per_socket),
    [JOBSPEC_FIELD_TRES_PER_TASK] = offsetof (job_desc_msg_t, tres_per_task),
    [JOBSPEC_FIELD_CPUS_PER_TRES] = offsetof (job_desc_msg_t, cpus_per_tres),
    [JOBSPEC_FIELD_MEM_PER_TRES] = offsetof (job_desc_msg_t, mem_per_tres),
    [JOBSPEC_FIELD_MAIL_USER] = offsetof (job_desc_msg_t, mail_user),
    [JOBSPEC_FIELD_STD_OUT] = offsetof (job_desc_msg_t, std_out),
    [JOBSPEC_FIELD_STD_ERR] = offsetof (job_desc_msg_t, std_err),
};

static char **desc_string (job_desc_msg_t *d, enum jobspec_update_field f)
{
    return (char **)((char *)d + desc_offset[f]);
}

static bool is_string (enum jobspec_update_field f)
{
    return f != JOBSPEC_FIELD_TIME_LIMIT && f < JOBSPEC_FIELD_FIRST_NUMBER;
}

/* --- the job's resources, now and as a request changes them ------------ */

/* The node count, task count and cpus per task a job_modify request for
 * job asks for, over the record's, read back as fields_from_record reads
 * a record (a node count only with a max_nodes). */
static void fields_with_changes (const job_desc_msg_t *d,
                                 const job_record_t *job,
                                 struct jobspec_fields *f)
{
    const jobtap_job_details_t *det = job->details;
    uint32_t min = det ? det->min_nodes : NO_VAL;
    uint32_t max = jobtap_compat_record_max_nodes (job);

    jobspec_fields_from_record (job, f);
    if (set32 (d->min_nodes))
        min = d->min_nodes;
    if (d->max_nodes != NO_VAL)
        max = d->max_nodes;
    if (set32 (d->min_nodes) || d->max_nodes != NO_VAL) {
        f->nodes = max && set32 (min) ? min : 0;
        f->max_nodes = set32 (max) ? max : 0;
    }
    if (set32 (d->num_tasks))
        f->ntasks = d->num_tasks;
    if (set16 (d->cpus_per_task))
        f->cpus_per_task = d->cpus_per_task;
    if (set16 (d->ntasks_per_node))
        f->tasks_per_node = d->ntasks_per_node;
}

static bool resizes (const job_desc_msg_t *d)
{
    return set32 (d->min_nodes) || d->max_nodes != NO_VAL ||
           set32 (d->num_tasks) || set16 (d->cpus_per_task) ||
           set16 (d->ntasks_per_node);
}

/* A job_modify's node count, tasks or cpus per task as the job's new
 * resources and tasks, where they change. */
static void
shape_updates (json_t *u, const job_desc_msg_t *d, const job_record_t *job)
{
    struct jobspec_fields now, next;
    json_t *a, *b;

    jobspec_fields_from_record (job, &now);
    fields_with_changes (d, job, &next);
    a = jobspec_build (&now);
    b = jobspec_build (&next);
    for (int i = 0; i < 2 && a && b; i++) {
        const char *key = i == 0 ? "resources" : "tasks";
        json_t *v = json_object_get (b, key);
        if (!json_equal (json_object_get (a, key), v))
            json_object_set (u, key, v);
    }
    if (d->max_nodes != NO_VAL && next.max_nodes > next.nodes)
        json_object_set_new (u, "attributes.system.slurm.max_nodes",
                             json_integer (next.max_nodes));
    json_decref (a);
    json_decref (b);
}

/* --- a job_modify request as updates ----------------------------------- */

static json_t *seconds (uint32_t minutes)
{
    return json_real (minutes == INFINITE ? 0. : minutes * 60.);
}

/* The value of a non-string key in a job_modify request, or NULL when
 * the request leaves it alone. */
static json_t *desc_number (const job_desc_msg_t *d,
                            const struct jobspec_update_key *m)
{
    char buf[128];
    uint64_t mem = d->pn_min_memory;
    bool per_cpu = mem != NO_VAL64 && mem & MEM_PER_CPU && mem != MEM_PER_CPU;

    switch (m->field) {
    case JOBSPEC_FIELD_TIME_LIMIT:
        return d->time_limit == NO_VAL ? NULL : seconds (d->time_limit);
    case JOBSPEC_FIELD_TIME_MIN:
        return d->time_min == NO_VAL ? NULL : seconds (d->time_min);
    case JOBSPEC_FIELD_MEM_PER_NODE:
        return mem == NO_VAL64 || per_cpu
                   ? NULL
                   : json_integer ((json_int_t)(mem & ~MEM_PER_CPU));
    case JOBSPEC_FIELD_MEM_PER_CPU:
        return per_cpu ? json_integer ((json_int_t)(mem & ~MEM_PER_CPU)) : NULL;
    case JOBSPEC_FIELD_BEGIN_TIME:
        return d->begin_time ? json_integer ((json_int_t)d->begin_time) : NULL;
    case JOBSPEC_FIELD_NICE:
        return d->nice == NO_VAL
                   ? NULL
                   : json_integer ((json_int_t)d->nice - NICE_OFFSET);
    case JOBSPEC_FIELD_MAIL_TYPE:
        return d->mail_type == NO_VAL16 ? NULL
                                        : json_string (jobspec_mail_type_text (
                                              d->mail_type, buf, sizeof (buf)));
    default:
        /* max_nodes, resources and tasks: shape_updates; OverSubscribe
         * is no jobspec key (Slurm changes sharing, not whole nodes) */
        return NULL;
    }
}

json_t *jobspec_updates_from_desc (const job_desc_msg_t *d,
                                   const job_record_t *job)
{
    json_t *u = json_object ();

    for (size_t i = 0; i < jobspec_update_nkeys; i++) {
        const struct jobspec_update_key *m = &jobspec_update_keys[i];
        json_t *v = NULL;
        if (m->kind == JOBSPEC_UPDATE_CONSTRAINTS)
            continue; /* features come as slurm.features */
        if (is_string (m->field)) {
            const char *s = *desc_string ((job_desc_msg_t *)d, m->field);
            if (s)
                v = m->kind == JOBSPEC_UPDATE_LOWER ? jobspec_lowercase (s)
                                                    : json_string (s);
        } else
            v = desc_number (d, m);
        if (v)
            json_object_set_new (u, m->key, v);
    }
    if (job && resizes (d))
        shape_updates (u, d, job);
    return u;
}

/* --- updates applied to a job_desc -------------------------------------- */

/* Why Slurm cannot make this update here, or NULL. */
static const char *
refusal (const job_record_t *job, const struct jobspec_update_key *m, json_t *v)
{
    switch (m->field) {
    case JOBSPEC_FIELD_EXCLUSIVE:
        if (job)
            return "Slurm sets it only at submit";
        if (jobtap_compat_shared_of (
                jobspec_exclusive_parse (json_string_value (v))) == NO_VAL16)
            return "this Slurm release has no such exclusive";
        break;
    case JOBSPEC_FIELD_STD_ERR:
        if (job && !JOBTAP_UPDATE_JOB_HAS_STD_ERR)
            return "this Slurm release sets it only at submit";
        break;
    case JOBSPEC_FIELD_RESOURCES:
    case JOBSPEC_FIELD_TASKS:
        if (job && !IS_JOB_PENDING (job))
            return "Slurm resizes only a pending job";
        break;
    default:
        break;
    }
    return NULL;
}

/* The job's fields before the update: the submission's, or the record's
 * with what a job_modify request already changes. */
static void current_fields (const job_desc_msg_t *d,
                            const job_record_t *job,
                            struct jobspec_fields *f,
                            char **mail_user)
{
    *mail_user = NULL;
    if (job)
        fields_with_changes (d, job, f);
    else
        jobspec_fields_from_desc (d, NULL, f, mail_user);
}

static void set_cpus_per_task (job_desc_msg_t *d, uint16_t cpus)
{
    d->cpus_per_task = cpus;
    if (cpus == NO_VAL16) {
        d->bitflags &= ~JOB_CPUS_SET;
        return;
    }
    d->bitflags |= JOB_CPUS_SET;
    if (d->tres_per_task) {
        /* 24.11 sends -c as "cpu=N" in tres_per_task too */
        char *s = jobtap_compat_tres_per_task_write (
            d->tres_per_task, jobtap_compat_tres_per_task (d->tres_per_task),
            cpus);
        xfree (d->tres_per_task);
        d->tres_per_task = s;
    }
}

/* The resized request (jobspec_resize's out) into the job_desc: a whole
 * submission, or only what changes for an update_job. */
static void apply_shape (job_desc_msg_t *d,
                         const job_record_t *job,
                         const struct jobspec_fields *now,
                         const struct jobspec_fields *out)
{
    uint32_t max = out->max_nodes > out->nodes ? out->max_nodes : out->nodes;

    if (!job) {
        d->min_nodes = out->nodes ? out->nodes : NO_VAL;
        d->max_nodes = out->nodes ? max : NO_VAL;
        d->num_tasks = out->ntasks ? out->ntasks : NO_VAL;
        d->ntasks_per_node =
            out->tasks_per_node ? out->tasks_per_node : NO_VAL16;
        if (out->cpus_per_task != now->cpus_per_task)
            set_cpus_per_task (d, out->cpus_per_task ? out->cpus_per_task
                                                     : NO_VAL16);
        if (out->exclusive != now->exclusive)
            d->shared = jobtap_compat_shared_of (out->exclusive);
        return;
    }
    if (out->nodes != now->nodes || out->max_nodes != now->max_nodes) {
        /* no node count: slurmctld's own minimum, no maximum */
        d->min_nodes = out->nodes ? out->nodes : 1;
        d->max_nodes = out->nodes ? max : 0;
    }
    if (out->ntasks && out->ntasks != now->ntasks)
        d->num_tasks = out->ntasks;
    if (out->tasks_per_node && out->tasks_per_node != now->tasks_per_node)
        d->ntasks_per_node = out->tasks_per_node;
    if (out->cpus_per_task && out->cpus_per_task != now->cpus_per_task)
        d->cpus_per_task = out->cpus_per_task;
}

/* xstrdup without the zeroing of xmalloc (then overwritten): the copy of
 * an update's string, for a field slurmctld will xfree. */
static char *desc_strdup (const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen (s) + 1;
    return memcpy (xmalloc_nz (n), s, n);
}

static void set_string (job_desc_msg_t *d,
                        const job_record_t *job,
                        const struct jobspec_update_key *m,
                        json_t *v)
{
    char **field = desc_string (d, m->field);
    char *s = NULL;

    if (m->kind == JOBSPEC_UPDATE_CONSTRAINTS) {
        char *features = jobspec_constraints_features (v);
        s = desc_strdup (features);
        free (features);
    } else if (m->field == JOBSPEC_FIELD_TRES_PER_TASK)
        s = jobtap_compat_tres_per_task_write (
            job ? job->tres_per_task : d->tres_per_task, json_string_value (v),
            d->cpus_per_task);
    else
        s = desc_strdup (json_string_value (v));
    xfree (*field);
    *field = s;
}

/* One checked update into the job_desc. */
static void apply_one (job_desc_msg_t *d,
                       const job_record_t *job,
                       const struct jobspec_update_key *m,
                       json_t *v)
{
    uint32_t min;
    uint16_t bits = 0;

    if (is_string (m->field)) {
        set_string (d, job, m, v);
        return;
    }
    switch (m->field) {
    case JOBSPEC_FIELD_TIME_LIMIT:
        min = jobspec_duration_minutes (json_number_value (v));
        d->time_limit = min == 0 ? INFINITE : min;
        break;
    case JOBSPEC_FIELD_TIME_MIN:
        d->time_min = jobspec_duration_minutes (json_number_value (v));
        break;
    case JOBSPEC_FIELD_MEM_PER_NODE:
    case JOBSPEC_FIELD_MEM_PER_CPU:
        if (json_is_integer (v))
            d->pn_min_memory =
                (uint64_t)json_integer_value (v) |
                (m->field == JOBSPEC_FIELD_MEM_PER_CPU ? MEM_PER_CPU : 0);
        break;
    case JOBSPEC_FIELD_MAX_NODES:
        d->max_nodes = (uint32_t)json_integer_value (v);
        break;
    case JOBSPEC_FIELD_BEGIN_TIME:
        /* update_job takes 0 as "unchanged": now is "no delay" */
        d->begin_time = json_integer_value (v) || !job
                            ? (time_t)json_integer_value (v)
                            : time (NULL);
        break;
    case JOBSPEC_FIELD_NICE:
        d->nice = (uint32_t)(NICE_OFFSET + json_integer_value (v));
        break;
    case JOBSPEC_FIELD_MAIL_TYPE:
        (void)jobspec_mail_type_parse (json_string_value (v), &bits);
        d->mail_type = bits;
        break;
    case JOBSPEC_FIELD_EXCLUSIVE:
        d->shared = jobtap_compat_shared_of (
            jobspec_exclusive_parse (json_string_value (v)));
        break;
    default:
        break; /* output type: nothing to set; resources, tasks: below */
    }
}

static int refuse (jobtap_host_error_t *err, const char *key, const char *why)
{
    return errprintf (err, "jobtap: jobspec update of %s: %s", key, why);
}

/* The updates few jobs get, on the stack; more take the heap. */
#define CHECKED_ON_STACK APPLY_MEMO_KEYS

/* What jobspec_apply_updates keeps of the keys as they are checked. */
struct pass {
    const job_record_t *job;
    struct jobspec_checked stack[CHECKED_ON_STACK], *all;
    size_t n, size;
    bool shape;
};

static const char *
keep (const struct jobspec_update_key *m, json_t *v, void *arg)
{
    struct pass *p = arg;
    const char *why = refusal (p->job, m, v);

    if (why)
        return why;
    if (p->n == p->size) {
        size_t size = p->size * 2;
        struct jobspec_checked *all = xcalloc (size, sizeof (*all));
        memcpy (all, p->all, p->n * sizeof (*all));
        if (p->all != p->stack)
            xfree (p->all);
        p->all = all;
        p->size = size;
    }
    p->all[p->n++] = (struct jobspec_checked){m, v};
    p->shape |= m->kind == JOBSPEC_UPDATE_SHAPE;
    return NULL;
}

/* The memo's lock: a spin, as what it guards is a few copies (a mutex
 * would cost a submission more than the check it saves). */
static void memo_lock (struct apply_memo *memo)
{
    while (
        atomic_flag_test_and_set_explicit (&memo->busy, memory_order_acquire))
        sched_yield ();
}

static void memo_unlock (struct apply_memo *memo)
{
    atomic_flag_clear_explicit (&memo->busy, memory_order_release);
}

/* What memo holds, let go under its lock: the two references. */
static void memo_drop (struct apply_memo *memo, json_t **updates, json_t **flat)
{
    *updates = memo->updates;
    *flat = memo->flat;
    memo->updates = memo->flat = NULL;
    memo->n = 0;
}

void apply_memo_clear (struct apply_memo *memo)
{
    json_t *updates, *flat;

    memo_lock (memo);
    memo_drop (memo, &updates, &flat);
    memo_unlock (memo);
    json_decref (updates);
    json_decref (flat);
}

/* The check of updates memo keeps, into p; the flattened updates (a new
 * reference: the checked values are borrowed from it), or NULL when memo
 * keeps another object's. */
static json_t *
memo_find (struct apply_memo *memo, json_t *updates, struct pass *p)
{
    json_t *flat = NULL;

    if (!memo)
        return NULL;
    memo_lock (memo);
    if (memo->updates && memo->updates == updates) {
        memcpy (p->all, memo->checked, memo->n * sizeof (*p->all));
        p->n = memo->n;
        p->shape = memo->shape;
        flat = json_incref (memo->flat);
    }
    memo_unlock (memo);
    return flat;
}

/* Keep the check just made of updates in memo (when it fits). */
static void memo_keep (struct apply_memo *memo,
                       json_t *updates,
                       json_t *flat,
                       const struct pass *p)
{
    json_t *old_updates, *old_flat;

    if (!memo || p->n > APPLY_MEMO_KEYS)
        return;
    memo_lock (memo);
    memo_drop (memo, &old_updates, &old_flat);
    memo->updates = json_incref (updates);
    memo->flat = json_incref (flat);
    memo->n = p->n;
    memo->shape = p->shape;
    memcpy (memo->checked, p->all, p->n * sizeof (*p->all));
    memo_unlock (memo);
    json_decref (old_updates);
    json_decref (old_flat);
}

int jobspec_apply_updates (job_desc_msg_t *desc,
                           const job_record_t *job,
                           json_t *updates,
                           struct apply_memo *memo,
                           jobtap_host_error_t *err)
{
    struct pass p = {.job = job, .size = CHECKED_ON_STACK};
    char *mail_user = NULL;
    struct jobspec_fields now, out;
    json_t *flat;
    int rc = -1;

    /* Everything is checked first, so a bad key leaves the job as is. */
    p.all = p.stack;
    if (job)
        memo = NULL; /* a record's check depends on the record */
    if (!(flat = memo_find (memo, updates, &p))) {
        if (!(flat = jobspec_updates_check_each (updates, keep, &p, err)))
            goto out;
        memo_keep (memo, updates, flat, &p);
    }
    if (p.shape) {
        current_fields (desc, job, &now, &mail_user);
        if (jobspec_resize (&now, flat, &out, err) < 0)
            goto out;
        if (job && out.exclusive != now.exclusive) {
            refuse (err, "resources",
                    "Slurm sets an exclusive node only at submit");
            goto out;
        }
    }
    for (size_t i = 0; i < p.n; i++)
        apply_one (desc, job, p.all[i].m, p.all[i].v);
    if (p.shape)
        apply_shape (desc, job, &now, &out);
    rc = 0;
out:
    if (mail_user)
        xfree (mail_user);
    if (p.all != p.stack)
        xfree (p.all);
    json_decref (flat);
    return rc;
}
