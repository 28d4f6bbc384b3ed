/* Slurm job <-> Flux jobspec version 1: the Slurm half.
 *
 * A job_desc_msg_t at submit or a job_record_t later is read into one
 * normalized view (struct jobspec_fields), from which src/jobspec builds
 * the jobspec, so the same job yields the same jobspec either way and the
 * same as jobtap-run gives it offline.  Updates go back to a job_desc
 * through src/jobspec's key table.  docs/jobspec.md documents the
 * mapping. */
#include <config.h>

#include <string.h>

#include "src/common/slurm_xlator.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

#include "host.h"
#include "jobspec.h"
#include "jobspec_build.h"
#include "jobspec_setattr.h"
#include "jobspec_update.h"
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

/* GPUs in a TRES request string such as "gres:gpu:2" or
 * "gres:gpu:a100:1,gres:nic:1" (a bare "gres:gpu" means 1). */
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

static void fields_from_desc (const job_desc_msg_t *d,
                              const struct jobspec_partitions *parts,
                              struct jobspec_fields *f)
{
    memset (f, 0, sizeof (*f));
    f->nodes = set32 (d->min_nodes) ? d->min_nodes : 0;
    f->ntasks = set32 (d->num_tasks) ? d->num_tasks : 0;
    f->cpus_per_task = set16 (d->cpus_per_task) ? d->cpus_per_task : 0;
    f->tasks_per_node = set16 (d->ntasks_per_node) ? d->ntasks_per_node : 0;
    f->exclusive = d->shared == JOB_SHARED_NONE;
    f->tres_per_job = d->tres_per_job;
    f->tres_per_node = d->tres_per_node;
    f->tres_per_task = jobtap_compat_tres_per_task (d->tres_per_task);
    /* slurmctld fills these in when the job is created; do the same so a
     * policy sees the values the job will really get. */
    f->partition =
        d->partition ? d->partition : parts->default_name (parts->arg);
    f->time_limit = minutes (d->time_limit == NO_VAL
                                 ? default_time_limit (d->partition, parts)
                                 : d->time_limit);
    f->account = d->account;
    f->wckey = d->wckey;
    f->work_dir = d->work_dir;
    f->name = d->name;
    f->dependency = d->dependency;
    f->features = d->features;
    f->comment = d->comment;
    f->qos = d->qos;
    f->reservation = d->reservation;
    f->licenses = d->licenses;
    f->begin_time = d->begin_time;
    f->nice = signed_nice (d->nice);
    f->argv = d->argv;
    f->argc = d->argc;
}

static void fields_from_record (const job_record_t *j, struct jobspec_fields *f)
{
    const jobtap_job_details_t *det = j->details;

    memset (f, 0, sizeof (*f));
    if (det) {
        /* slurmctld fills in min_nodes itself; max_nodes stays 0 unless
         * the user asked for a node count. */
        f->nodes =
            det->max_nodes && set32 (det->min_nodes) ? det->min_nodes : 0;
        f->ntasks = set32 (det->num_tasks) ? det->num_tasks : 0;
        f->cpus_per_task =
            set16 (det->orig_cpus_per_task) ? det->orig_cpus_per_task : 0;
        f->tasks_per_node =
            set16 (det->ntasks_per_node) ? det->ntasks_per_node : 0;
        f->exclusive =
            det->share_res == 0 && (det->whole_node & WHOLE_NODE_REQUIRED);
        f->work_dir = det->work_dir;
        f->dependency = det->dependency;
        f->features = det->features;
        f->begin_time = det->begin_time;
        f->nice = signed_nice (det->nice);
        f->argv = det->argv;
        f->argc = det->argc;
    }
    f->tres_per_job = j->tres_per_job;
    f->tres_per_node = j->tres_per_node;
    f->tres_per_task = jobtap_compat_tres_per_task (j->tres_per_task);
    f->partition = j->partition;
    f->time_limit = minutes (j->time_limit);
    f->account = j->account;
    /* A wckey Slurm filled in from the user's default is marked '*'. */
    f->wckey = j->wckey && j->wckey[0] == '*' ? NULL : j->wckey;
    f->name = j->name;
    f->comment = j->comment;
    f->qos = j->qos_ptr ? ((slurmdb_qos_rec_t *)j->qos_ptr)->name : NULL;
    f->reservation = j->resv_name;
    f->licenses = j->licenses;
}

/* The user's --setattr attributes (spank_jobtap.so puts them in the
 * job's SPANK environment), merged into the jobspec.  Bad input only
 * costs the user those attributes: it is logged, never a rejection (the
 * client checks each option; this is a crafted request or a mismatch). */
static void merge_setattr (json_t *spec, const char *text, char **errmsg)
{
    if (spec && jobspec_setattr_merge (spec, text, errmsg) < 0 && !*errmsg)
        *errmsg = strdup ("out of memory");
}

/* At submit, the build only makes a tree: its blocks may come from the
 * runtime's pool.  Not for records: a restart replays every job at once,
 * and the pool would keep that peak for good. */
json_t *jobspec_from_desc_parts (const job_desc_msg_t *desc,
                                 const struct jobspec_partitions *parts)
{
    struct jobspec_fields f;
    /* most requests carry no SPANK environment at all */
    const char *setattr = desc->spank_job_env_size
                              ? jobspec_setattr_find (desc->spank_job_env,
                                                      desc->spank_job_env_size)
                              : NULL;
    char *errmsg = NULL;

    fields_from_desc (desc, parts, &f);
    jobtap_host_json_pool_begin ();
    json_t *spec = jobspec_build (&f);
    if (setattr)
        merge_setattr (spec, setattr, &errmsg);
    jobtap_host_json_pool_end ();
    if (__builtin_expect (errmsg != NULL, 0)) {
        error ("jobtap: --setattr of a submission by uid %u: %s", desc->user_id,
               errmsg);
        free (errmsg);
    }
    return spec;
}

json_t *jobspec_from_record (const job_record_t *job)
{
    struct jobspec_fields f;
    const char *setattr =
        jobspec_setattr_find (job->spank_job_env, job->spank_job_env_size);
    char *errmsg = NULL;

    fields_from_record (job, &f);
    json_t *spec = jobspec_build (&f);
    if (setattr) {
        merge_setattr (spec, setattr, &errmsg);
        if (errmsg) {
            error ("jobtap: JobId=%u --setattr: %s", job->job_id, errmsg);
            free (errmsg);
        }
    }
    return spec;
}

int jobspec_urgency_from_desc (const job_desc_msg_t *desc)
{
    return desc->priority == 0 ? URGENCY_HOLD : URGENCY_DEFAULT;
}

int jobspec_urgency_from_record (const job_record_t *job)
{
    return job->priority == 0 && job->state_reason == WAIT_HELD_USER
               ? URGENCY_HOLD
               : URGENCY_DEFAULT;
}

/* The job_desc member behind each field of src/jobspec's key table, both
 * ways: a job_modify request becomes those keys, and updates to them are
 * applied back.  The time limit is not a string (offset unused). */
static const size_t desc_offset[JOBSPEC_FIELD_COUNT] = {
    [JOBSPEC_FIELD_TIME_LIMIT] = 0,
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
};

static char **desc_string (job_desc_msg_t *d, enum jobspec_update_field f)
{
    return (char **)((char *)d + desc_offset[f]);
}

json_t *jobspec_updates_from_desc (const job_desc_msg_t *d)
{
    json_t *u = json_object ();

    for (size_t i = 0; i < jobspec_update_nkeys; i++) {
        const struct jobspec_update_key *m = &jobspec_update_keys[i];
        if (m->kind == JOBSPEC_UPDATE_DURATION) {
            if (d->time_limit != NO_VAL)
                json_object_set_new (u, m->key,
                                     json_real (d->time_limit == INFINITE
                                                    ? 0.
                                                    : d->time_limit * 60.));
        } else if (m->kind != JOBSPEC_UPDATE_CONSTRAINTS) {
            const char *v = *desc_string ((job_desc_msg_t *)d, m->field);
            if (v)
                json_object_set_new (u, m->key,
                                     m->kind == JOBSPEC_UPDATE_LOWER
                                         ? jobspec_lowercase (v)
                                         : json_string (v));
        }
    }
    return u;
}

int jobspec_apply_updates (job_desc_msg_t *desc, json_t *updates, char **errmsg)
{
    char *msg = NULL;
    json_t *flat = jobspec_updates_check (updates, &msg);
    const char *key;
    json_t *v;

    /* Checked first, so a bad key leaves the job untouched. */
    if (!flat) {
        *errmsg = xstrdup (msg ? msg : "jobtap: out of memory");
        free (msg);
        return -1;
    }
    json_object_foreach (flat, key, v)
    {
        const struct jobspec_update_key *m = jobspec_update_key_find (key);
        if (m->kind == JOBSPEC_UPDATE_DURATION) {
            uint32_t min = jobspec_duration_minutes (json_number_value (v));
            desc->time_limit = min == 0 ? INFINITE : min;
        } else {
            char **field = desc_string (desc, m->field);
            char *s = m->kind == JOBSPEC_UPDATE_CONSTRAINTS
                          ? jobspec_constraints_features (v)
                          : NULL;
            xfree (*field);
            *field = xstrdup (s ? s : json_string_value (v));
            free (s);
        }
    }
    json_decref (flat);
    return 0;
}
