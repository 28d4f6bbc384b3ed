/* Slurm job <-> Flux jobspec version 1: the Slurm half.
 *
 * A job_desc_msg_t at submit or a job_record_t later is read into one
 * normalized view (struct jobspec_fields), from which src/jobspec builds
 * the jobspec, so the same job yields the same jobspec either way and the
 * same as jobtap-run gives it offline.  Updates go back to a job_desc in
 * jobspec_apply.c.  docs/jobspec.md documents the mapping. */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "src/common/slurm_xlator.h"
#include "src/common/xmalloc.h"
#include "src/common/uid.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

#include "fence.h"
#include "holder.h"
#include "host.h"
#include "jobspec.h"
#include "jobspec_build.h"
#include "jobspec_fields.h"
#include "jobspec_setattr.h"
#include "slurm_compat.h"

#define URGENCY_HOLD 0
#define URGENCY_DEFAULT 16

static bool set32 (uint32_t v)
{
    return v != NO_VAL && v != INFINITE;
}

static bool set16 (uint16_t v)
{
    return v != NO_VAL16 && v != INFINITE16;
}

/* A partition request may be a list ("a,b"): defaults come from the
 * first.  The time limit slurmctld will give a job that asked for none:
 * the partition's DefaultTime, else its MaxTime; NO_VAL if unknown. */
static uint32_t default_time_limit (const char *list,
                                    const struct jobspec_partitions *parts)
{
    char name[256];
    size_t len;
    uint32_t def, max;

    if (list) {
        len = strcspn (list, ",");
        if (len >= sizeof (name))
            return NO_VAL;
        memcpy (name, list, len);
        name[len] = '\0';
    }
    if (!parts->time_limits (list ? name : NULL, &def, &max, parts->arg))
        return NO_VAL;
    return def != NO_VAL ? def : max;
}

/* Slurm's time limit (minutes, INFINITE or NO_VAL) as the builder's:
 * minutes, 0 for unlimited or unknown. */
static uint32_t minutes (uint32_t time_limit)
{
    return set32 (time_limit) ? time_limit : 0;
}

/* Slurm's nice (offset by NICE_OFFSET, NO_VAL unset) as a signed value. */
static int32_t signed_nice (uint32_t nice)
{
    return nice == NO_VAL ? 0 : (int32_t)((int64_t)nice - NICE_OFFSET);
}

/* --mem or --mem-per-cpu (pn_min_memory, NO_VAL64 unset) into f. */
static void memory (uint64_t mem, struct jobspec_fields *f)
{
    if (mem == NO_VAL64)
        return;
    /* --mem-per-cpu=0 is --mem=0, as slurmctld maps it */
    f->mem_per = mem & MEM_PER_CPU && mem != MEM_PER_CPU ? JOBSPEC_MEM_PER_CPU
                                                         : JOBSPEC_MEM_PER_NODE;
    f->mem_mb = mem & ~MEM_PER_CPU;
}

/* The mail address slurmctld gives a job that asks for mail without
 * --mail-user: its user's name, at MailDomain if set.  xmalloc'd. */
static char *default_mail_user (uint32_t uid)
{
    char *user = uid_to_string ((uid_t)uid);
    if (slurm_conf.mail_domain)
        xstrfmtcat (user, "@%s", slurm_conf.mail_domain);
    return user;
}

/* Every member is written, none twice: no memset of the whole struct on
 * the submit path (test_slurm_jobspec checks that none is left out). */
void jobspec_fields_from_desc (const job_desc_msg_t *restrict d,
                               const struct jobspec_partitions *parts,
                               struct jobspec_fields *restrict f,
                               char **mail_user)
{
    f->nodes = set32 (d->min_nodes) ? d->min_nodes : 0;
    f->max_nodes = set32 (d->max_nodes) ? d->max_nodes : 0;
    f->ntasks = set32 (d->num_tasks) ? d->num_tasks : 0;
    f->cpus_per_task = set16 (d->cpus_per_task) ? d->cpus_per_task : 0;
    f->tasks_per_node = set16 (d->ntasks_per_node) ? d->ntasks_per_node : 0;
    f->exclusive = jobtap_compat_exclusive_of (d->shared);
    f->mem_per = JOBSPEC_MEM_UNSET;
    f->mem_mb = 0;
    memory (d->pn_min_memory, f);
    f->tres_per_job = d->tres_per_job;
    f->tres_per_node = d->tres_per_node;
    f->tres_per_socket = d->tres_per_socket;
    f->tres_per_task = jobtap_compat_tres_per_task (d->tres_per_task);
    f->cpus_per_tres = d->cpus_per_tres;
    f->mem_per_tres = d->mem_per_tres;
    /* slurmctld fills these in when the job is created; do the same so a
     * policy sees the values the job will really get. */
    f->partition = NULL;
    f->time_limit = 0;
    if (parts) {
        f->partition =
            d->partition ? d->partition : parts->default_name (parts->arg);
        f->time_limit = minutes (d->time_limit == NO_VAL
                                     ? default_time_limit (d->partition, parts)
                                     : d->time_limit);
    }
    f->time_min = minutes (d->time_min);
    f->account = d->account;
    f->wckey = d->wckey;
    f->work_dir = d->work_dir;
    f->name = d->name;
    f->dependency = d->dependency;
    f->features = d->features;
    f->comment = d->comment;
    f->admin_comment = d->admin_comment;
    f->qos = d->qos;
    f->reservation = d->reservation;
    f->licenses = d->licenses;
    f->std_out = d->std_out;
    f->std_err = d->std_err;
    f->mail_type = 0;
    f->mail_user = NULL;
    *mail_user = NULL;
    if (d->mail_type != NO_VAL16 && d->mail_type != 0) {
        f->mail_type = d->mail_type;
        f->mail_user = d->mail_user && d->mail_user[0]
                           ? d->mail_user
                           : (*mail_user = default_mail_user (d->user_id));
    }
    f->begin_time = d->begin_time;
    f->nice = signed_nice (d->nice);
    f->argv = d->argv;
    f->argc = d->argc;
    f->array = d->array_inx;
    f->array_job_id = 0; /* a submission is the array, not a task */
    f->array_task_id = 0;
}

void jobspec_fields_from_record (const job_record_t *j,
                                 struct jobspec_fields *f)
{
    const jobtap_job_details_t *det = j->details;

    memset (f, 0, sizeof (*f));
    if (det) {
        /* slurmctld fills in min_nodes itself; max_nodes stays 0 unless
         * the user asked for a node count. */
        uint32_t max_nodes = jobtap_compat_record_max_nodes (j);
        f->nodes = max_nodes && set32 (det->min_nodes) ? det->min_nodes : 0;
        f->max_nodes = set32 (max_nodes) ? max_nodes : 0;
        f->ntasks = set32 (det->num_tasks) ? det->num_tasks : 0;
        f->cpus_per_task =
            set16 (det->orig_cpus_per_task) ? det->orig_cpus_per_task : 0;
        f->tasks_per_node =
            set16 (det->ntasks_per_node) ? det->ntasks_per_node : 0;
        f->exclusive = jobtap_compat_record_exclusive (det);
        /* slurmctld fills in DefMemPerCPU; JOB_MEM_SET marks a request */
        if (j->bit_flags & JOB_MEM_SET)
            memory (det->orig_pn_min_memory, f);
        f->work_dir = det->work_dir;
        f->dependency = det->dependency;
        f->features = det->features;
        f->std_out = det->std_out;
        f->std_err = det->std_err;
        /* Slurm sets a begin time once the job is eligible, in the
         * submission itself when nothing holds it, which may be the next
         * second: only a later one (or none) is the user's; a fence's is
         * jobtap's (fence.h) */
        f->begin_time = det->begin_time > det->submit_time + 1
                                && det->begin_time != FENCE_BEGIN_TIME
                            ? det->begin_time
                            : 0;
        f->nice = signed_nice (det->nice);
        f->argv = det->argv;
        f->argc = det->argc;
    }
    f->tres_per_job = j->tres_per_job;
    f->tres_per_node = j->tres_per_node;
    f->tres_per_socket = j->tres_per_socket;
    f->tres_per_task = jobtap_compat_tres_per_task (j->tres_per_task);
    f->cpus_per_tres = j->cpus_per_tres;
    f->mem_per_tres = j->mem_per_tres;
    f->partition = j->partition;
    f->time_limit = minutes (j->time_limit);
    f->time_min = minutes (j->time_min);
    f->account = j->account;
    /* A wckey Slurm filled in from the user's default is marked '*'. */
    f->wckey = j->wckey && j->wckey[0] == '*' ? NULL : j->wckey;
    f->name = j->name;
    f->comment = j->comment;
    f->admin_comment = j->admin_comment;
    f->qos = j->qos_ptr ? ((slurmdb_qos_rec_t *)j->qos_ptr)->name : NULL;
    f->reservation = j->resv_name;
    f->licenses = jobtap_compat_record_licenses (j);
    /* slurmctld gives every job a mail_user: shown with a mail type only */
    if (j->mail_type != NO_VAL16 && j->mail_type != 0) {
        f->mail_type = j->mail_type;
        f->mail_user = j->mail_user;
    }
    /* A task split off its array, or the last task (the array's own
     * record); the array's record while it holds tasks is the array
     * (its pending tasks: jobspec_from_record). */
    if (j->array_task_id != NO_VAL && j->array_job_id != 0) {
        f->array_job_id = j->array_job_id;
        f->array_task_id = j->array_task_id;
    }
}

/* An array's record with tasks still pending in it: those tasks, as
 * Slurm formats them ("1-3,5"), and its throttle ("%2"). NULL for any
 * other record. */
static const char *array_tasks (const job_record_t *j, char *buf, size_t size)
{
    enum { THROTTLE_ROOM = 12 }; /* '%', up to 10 digits, the NUL */
    const job_array_struct_t *a = j->array_recs;
    if (j->array_task_id != NO_VAL || !a || !a->task_id_bitmap
        || size <= THROTTLE_ROOM)
        return NULL;
    bit_fmt (buf, (int)(size - THROTTLE_ROOM), a->task_id_bitmap);
    if (a->max_run_tasks)
        snprintf (buf + strlen (buf), THROTTLE_ROOM, "%%%u", a->max_run_tasks);
    return buf;
}

/* The user's --setattr attributes (spank_jobtap.so puts them in the
 * job's SPANK environment), merged into the jobspec.  Bad input only
 * costs the user those attributes: it is logged, never a rejection (the
 * client checks each option; this is a crafted request or a mismatch). */
static void merge_setattr (json_t *spec,
                           const char *text,
                           jobtap_host_error_t *ignored)
{
    if (spec)
        (void)jobspec_setattr_merge (spec, text, ignored);
}

/* At submit, the build only makes a tree: its blocks may come from the
 * runtime's pool (the fields are saved outside it: the runtime keeps them
 * for the job's life).  Not for records: a restart replays every job at once,
 * and the pool would keep that peak for good. */
json_t *jobspec_from_desc_parts (const job_desc_msg_t *desc,
                                 const struct jobspec_partitions *parts,
                                 void **source,
                                 size_t *source_len)
{
    struct jobspec_fields f;
    /* most requests carry no SPANK environment at all */
    const char *setattr = desc->spank_job_env_size
                              ? jobspec_setattr_find (desc->spank_job_env,
                                                      desc->spank_job_env_size)
                              : NULL;
    jobtap_host_error_t ignored;
    char *mail_user;

    json_t *spec = NULL;

    ignored.text[0] = '\0';
    jobspec_fields_from_desc (desc, parts, &f, &mail_user);
    if (source)
        *source = !setattr ? jobspec_fields_save (&f, source_len) : NULL;
    if (!source || !*source) {
        jobtap_host_json_pool_begin ();
        spec = jobspec_build (&f);
        if (setattr)
            merge_setattr (spec, setattr, &ignored);
        jobtap_host_json_pool_end ();
    }
    if (__builtin_expect (ignored.text[0] != '\0', 0))
        error ("jobtap: --setattr of a submission by uid %u: %s", desc->user_id,
               ignored.text);
    if (mail_user)
        xfree (mail_user);
    return spec;
}

/* A record's jobspec from its fields, with its user's --setattr
 * attributes; ignored->text says what of them was bad ('' if nothing).
 * With 'source', the fields saved (jobspec_from_desc_parts says how). */
static json_t *record_spec (const job_record_t *job,
                            const struct jobspec_fields *f,
                            jobtap_host_error_t *ignored,
                            void **source,
                            size_t *source_len)
{
    const char *setattr =
        jobspec_setattr_find (job->spank_job_env, job->spank_job_env_size);
    json_t *spec = jobspec_build (f);

    ignored->text[0] = '\0';
    if (setattr)
        merge_setattr (spec, setattr, ignored);
    if (source)
        *source = spec && !setattr ? jobspec_fields_save (f, source_len)
                                   : NULL;
    return spec;
}

json_t *jobspec_from_record (const job_record_t *job,
                             void **source,
                             size_t *source_len)
{
    struct jobspec_fields f;
    char tasks[4096];
    jobtap_host_error_t ignored;

    jobspec_fields_from_record (job, &f);
    f.array = array_tasks (job, tasks, sizeof (tasks));
    json_t *spec = record_spec (job, &f, &ignored, source, source_len);
    if (ignored.text[0])
        error ("jobtap: JobId=%u --setattr: %s", job->job_id, ignored.text);
    return spec;
}

json_t *jobspec_from_array_task (const job_record_t *meta,
                                 uint32_t task,
                                 void **source,
                                 size_t *source_len)
{
    struct jobspec_fields f;
    jobtap_host_error_t ignored; /* the submission's were logged at submit */

    jobspec_fields_from_record (meta, &f);
    f.array = NULL;
    f.array_job_id = meta->job_id;
    f.array_task_id = task;
    return record_spec (meta, &f, &ignored, source, source_len);
}

int jobspec_urgency_from_desc (const job_desc_msg_t *desc)
{
    return desc->priority == 0 ? URGENCY_HOLD : URGENCY_DEFAULT;
}

int jobspec_urgency_from_record (const job_record_t *job)
{
    /* An operator's hold (JobHeldAdmin) is urgency 0 too, as when it is
     * made live (job_modify); the shim's own holds are not. */
    enum held_by by = holder_of (job);
    return by == HELD_BY_USER || by == HELD_BY_OPERATOR ? URGENCY_HOLD
                                                        : URGENCY_DEFAULT;
}

json_t *jobspec_source_build (const void *source, size_t len, void *arg)
{
    (void)arg;
    return jobspec_fields_build (source, len);
}

int jobspec_source_find (const void *source,
                         size_t len,
                         const char *const *path,
                         int depth,
                         json_t **value,
                         struct jobtap_spec_scalar *scalar,
                         void *arg)
{
    struct jobspec_scalar told;
    (void)arg;
    switch (jobspec_fields_find (source, len, path, depth, value,
                                 scalar ? &told : NULL)) {
    case JOBSPEC_MEMBER_ABSENT:
        return JOBTAP_SPEC_ABSENT;
    case JOBSPEC_MEMBER_OBJECT:
        return JOBTAP_SPEC_OBJECT;
    case JOBSPEC_MEMBER_VALUE:
        return JOBTAP_SPEC_VALUE;
    case JOBSPEC_MEMBER_SCALAR:
        *scalar = (struct jobtap_spec_scalar){
            .type = told.type,
            .string = told.string,
            .integer = told.integer,
            .real = told.real,
        };
        return JOBTAP_SPEC_SCALAR;
    case JOBSPEC_MEMBER_UNKNOWN:
        break;
    }
    return JOBTAP_SPEC_UNKNOWN;
}
