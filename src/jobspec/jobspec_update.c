/* jobspec_update: the jobspec keys with a Slurm field, and the check of a
 * policy's updates against them.  Slurm-free: the adapter applies checked
 * updates to a job_desc, jobtap-run only refuses what slurmctld would. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_error.h"
#include "jobspec_build.h"
#include "jobspec_mail.h"
#include "jobspec_update.h"

#define SLURM_KEY "attributes.system.slurm."
#define OUTPUT_KEY "attributes.system.shell.options.output."
/* An unknown key longer than this is cut in the message (table keys are
 * all shorter). */
#define KEY_TEXT_MAX 128

/* The common keys first: a lookup goes down the table. */
const struct jobspec_update_key jobspec_update_keys[] = {
    {"attributes.system.duration", JOBSPEC_UPDATE_DURATION,
     JOBSPEC_FIELD_TIME_LIMIT},
    {"attributes.system.queue", JOBSPEC_UPDATE_STRING, JOBSPEC_FIELD_PARTITION},
    {"attributes.system.bank", JOBSPEC_UPDATE_LOWER, JOBSPEC_FIELD_ACCOUNT},
    {"attributes.system.project", JOBSPEC_UPDATE_LOWER, JOBSPEC_FIELD_WCKEY},
    {"attributes.system.job.name", JOBSPEC_UPDATE_STRING, JOBSPEC_FIELD_NAME},
    {"attributes.system.cwd", JOBSPEC_UPDATE_STRING, JOBSPEC_FIELD_WORK_DIR},
    {"attributes.system.constraints", JOBSPEC_UPDATE_CONSTRAINTS,
     JOBSPEC_FIELD_FEATURES},
    {SLURM_KEY "comment", JOBSPEC_UPDATE_STRING, JOBSPEC_FIELD_COMMENT},
    {SLURM_KEY "features", JOBSPEC_UPDATE_STRING, JOBSPEC_FIELD_FEATURES},
    {SLURM_KEY "dependency", JOBSPEC_UPDATE_STRING, JOBSPEC_FIELD_DEPENDENCY},
    {SLURM_KEY "qos", JOBSPEC_UPDATE_STRING, JOBSPEC_FIELD_QOS},
    {SLURM_KEY "reservation", JOBSPEC_UPDATE_STRING, JOBSPEC_FIELD_RESERVATION},
    {"resources", JOBSPEC_UPDATE_SHAPE, JOBSPEC_FIELD_RESOURCES},
    {"tasks", JOBSPEC_UPDATE_SHAPE, JOBSPEC_FIELD_TASKS},
    {SLURM_KEY "licenses", JOBSPEC_UPDATE_STRING, JOBSPEC_FIELD_LICENSES},
    {SLURM_KEY "admin_comment", JOBSPEC_UPDATE_STRING,
     JOBSPEC_FIELD_ADMIN_COMMENT},
    {SLURM_KEY "tres_per_job", JOBSPEC_UPDATE_STRING,
     JOBSPEC_FIELD_TRES_PER_JOB},
    {SLURM_KEY "tres_per_node", JOBSPEC_UPDATE_STRING,
     JOBSPEC_FIELD_TRES_PER_NODE},
    {SLURM_KEY "tres_per_socket", JOBSPEC_UPDATE_STRING,
     JOBSPEC_FIELD_TRES_PER_SOCKET},
    {SLURM_KEY "tres_per_task", JOBSPEC_UPDATE_STRING,
     JOBSPEC_FIELD_TRES_PER_TASK},
    {SLURM_KEY "cpus_per_tres", JOBSPEC_UPDATE_STRING,
     JOBSPEC_FIELD_CPUS_PER_TRES},
    {SLURM_KEY "mem_per_tres", JOBSPEC_UPDATE_STRING,
     JOBSPEC_FIELD_MEM_PER_TRES},
    {SLURM_KEY "mem_per_node", JOBSPEC_UPDATE_MEGABYTES,
     JOBSPEC_FIELD_MEM_PER_NODE},
    {SLURM_KEY "mem_per_cpu", JOBSPEC_UPDATE_MEGABYTES,
     JOBSPEC_FIELD_MEM_PER_CPU},
    {SLURM_KEY "max_nodes", JOBSPEC_UPDATE_COUNT, JOBSPEC_FIELD_MAX_NODES},
    {SLURM_KEY "time_min", JOBSPEC_UPDATE_DURATION, JOBSPEC_FIELD_TIME_MIN},
    {SLURM_KEY "begin_time", JOBSPEC_UPDATE_EPOCH, JOBSPEC_FIELD_BEGIN_TIME},
    {SLURM_KEY "nice", JOBSPEC_UPDATE_NICE, JOBSPEC_FIELD_NICE},
    {SLURM_KEY "exclusive", JOBSPEC_UPDATE_EXCLUSIVE, JOBSPEC_FIELD_EXCLUSIVE},
    {SLURM_KEY "mail_type", JOBSPEC_UPDATE_MAIL_TYPE, JOBSPEC_FIELD_MAIL_TYPE},
    {SLURM_KEY "mail_user", JOBSPEC_UPDATE_STRING, JOBSPEC_FIELD_MAIL_USER},
    {OUTPUT_KEY "stdout.path", JOBSPEC_UPDATE_STRING, JOBSPEC_FIELD_STD_OUT},
    {OUTPUT_KEY "stderr.path", JOBSPEC_UPDATE_STRING, JOBSPEC_FIELD_STD_ERR},
    {OUTPUT_KEY "stdout.type", JOBSPEC_UPDATE_FILE_TYPE, JOBSPEC_FIELD_NONE},
    {OUTPUT_KEY "stderr.type", JOBSPEC_UPDATE_FILE_TYPE, JOBSPEC_FIELD_NONE},
};
const size_t jobspec_update_nkeys =
    sizeof (jobspec_update_keys) / sizeof (jobspec_update_keys[0]);

const struct jobspec_update_key *jobspec_update_key_find (const char *key)
{
    for (size_t i = 0; i < jobspec_update_nkeys; i++)
        if (!strcmp (jobspec_update_keys[i].key, key))
            return &jobspec_update_keys[i];
    return NULL;
}

char *jobspec_constraints_features (json_t *c)
{
    json_t *props = json_object_get (c, "properties");
    char *s = NULL;
    size_t len = 0, i;
    json_t *v;
    FILE *f;

    if (!json_is_array (props) || json_object_size (c) != 1)
        return NULL;
    json_array_foreach (props, i, v)
    {
        if (!json_is_string (v))
            return NULL;
    }
    if (!(f = open_memstream (&s, &len)))
        return NULL;
    json_array_foreach (props, i, v)
    {
        fprintf (f, "%s%s", i ? "&" : "", json_string_value (v));
    }
    if (fclose (f) != 0) {
        free (s);
        return NULL;
    }
    return s;
}

uint32_t jobspec_duration_minutes (double seconds)
{
    double m;

    if (seconds == 0)
        return 0;
    /* Slurm counts whole minutes: never round a limit down to 0, which
     * would mean "unlimited". */
    m = ceil (seconds / 60.);
    return m < 1 ? 1 : m >= UINT32_MAX - 1 ? UINT32_MAX - 2 : (uint32_t)m;
}

/* Expand a nested update such as {"attributes.system.job": {"name": x}}
 * into the dotted keys of the table ("attributes.system.job.name"). */
static int flatten (json_t *out, const char *prefix, json_t *v)
{
    if (json_is_object (v) && !jobspec_update_key_find (prefix)) {
        const char *k;
        json_t *child;
        json_object_foreach (v, k, child)
        {
            char *key;
            if (asprintf (&key, "%s.%s", prefix, k) < 0)
                return -1;
            int rc = flatten (out, key, child);
            free (key);
            if (rc < 0)
                return -1;
        }
        return 0;
    }
    return json_object_set (out, prefix, v);
}

static bool integer_in (json_t *v, json_int_t min, json_int_t max)
{
    return json_is_integer (v) && json_integer_value (v) >= min &&
           json_integer_value (v) <= max;
}

static bool valid (const struct jobspec_update_key *m, json_t *v)
{
    const char *s = json_string_value (v);
    char *features;
    uint16_t bits;

    switch (m->kind) {
    case JOBSPEC_UPDATE_DURATION:
        return json_is_number (v) && json_number_value (v) >= 0;
    case JOBSPEC_UPDATE_CONSTRAINTS:
        features = jobspec_constraints_features (v);
        free (features);
        return features != NULL;
    case JOBSPEC_UPDATE_COUNT:
        return integer_in (v, 1, UINT32_MAX - 2); /* below Slurm's NO_VAL */
    case JOBSPEC_UPDATE_MEGABYTES:
        /* null: the other memory key of the update replaces this one */
        return json_is_null (v) ||
               integer_in (v, 0, INT64_MAX >> 1); /* clear of MEM_PER_CPU */
    case JOBSPEC_UPDATE_EPOCH:
        return integer_in (v, 0, INT64_MAX);
    case JOBSPEC_UPDATE_NICE:
        return integer_in (v, -JOBSPEC_NICE_MAX, JOBSPEC_NICE_MAX);
    case JOBSPEC_UPDATE_MAIL_TYPE:
        return s && jobspec_mail_type_parse (s, &bits) == 0;
    case JOBSPEC_UPDATE_EXCLUSIVE:
        return jobspec_exclusive_parse (s) != JOBSPEC_SHARED;
    case JOBSPEC_UPDATE_FILE_TYPE:
        return s && !strcmp (s, "file");
    case JOBSPEC_UPDATE_SHAPE:
        return json_is_array (v);
    case JOBSPEC_UPDATE_STRING:
    case JOBSPEC_UPDATE_LOWER:
        break;
    }
    return s != NULL;
}

enum jobspec_exclusive jobspec_exclusive_parse (const char *s)
{
    static const enum jobspec_exclusive all[] = {
        JOBSPEC_EXCLUSIVE_NODE, JOBSPEC_EXCLUSIVE_USER, JOBSPEC_EXCLUSIVE_MCS,
        JOBSPEC_EXCLUSIVE_TOPO};
    for (size_t i = 0; s && i < sizeof (all) / sizeof (all[0]); i++)
        if (!strcmp (s, jobspec_exclusive_name (all[i])))
            return all[i];
    return JOBSPEC_SHARED;
}

/* A job asks for memory per node or per cpu: an update sets one and
 * may drop the other (null), nothing else. */
static const char *
memory_conflict (json_t *flat, const struct jobspec_update_key *m, json_t *v)
{
    const char *other;

    if (m->kind != JOBSPEC_UPDATE_MEGABYTES)
        return NULL;
    other = m->field == JOBSPEC_FIELD_MEM_PER_NODE ? SLURM_KEY "mem_per_cpu"
                                                   : SLURM_KEY "mem_per_node";
    if (json_is_null (v) && !json_is_integer (json_object_get (flat, other)))
        return "null only beside the other memory key";
    if (!json_is_null (v) && json_is_integer (json_object_get (flat, other)))
        return "memory per node and per cpu together";
    return NULL;
}

json_t *jobspec_updates_check (json_t *updates, jobtap_host_error_t *err)
{
    return jobspec_updates_check_each (updates, NULL, NULL, err);
}

char *jobspec_update_value_text (json_t *v, size_t max)
{
    char *text = json_dumps (v, JSON_ENCODE_ANY | JSON_COMPACT
                                    | JSON_SORT_KEYS);
    char *cut;
    size_t len;

    if (!text || (len = strlen (text)) <= max)
        return text;
    if (asprintf (&cut, "%.*s... (%zu bytes)", (int)max, text, len) < 0)
        cut = NULL;
    free (text);
    return cut;
}

/* Whether updates has keys flatten would expand (objects under keys that
 * are not keys of the table); as a rule a policy's updates have none. */
static bool nested (json_t *updates)
{
    const char *key;
    json_t *v;

    json_object_foreach (updates, key, v)
    {
        if (json_is_object (v) && !jobspec_update_key_find (key))
            return true;
    }
    return false;
}

json_t *jobspec_updates_check_each (json_t *updates,
                                    jobspec_update_each_f each,
                                    void *arg,
                                    jobtap_host_error_t *err)
{
    json_t *flat;
    const char *key;
    json_t *v;

    if (json_is_object (updates) && !nested (updates))
        flat = json_incref (updates);
    else if (!(flat = json_object ()))
        goto nomem;
    else {
        json_object_foreach (updates, key, v)
        {
            if (flatten (flat, key, v) < 0)
                goto nomem;
        }
    }
    json_object_foreach (flat, key, v)
    {
        const struct jobspec_update_key *m = jobspec_update_key_find (key);
        if (!m) {
            /* a plugin's key: cut like a value */
            errprintf (err,
                       "jobtap: jobspec update of %.*s%s has no Slurm "
                       "equivalent",
                       KEY_TEXT_MAX, key,
                       strlen (key) > KEY_TEXT_MAX ? "..." : "");
            goto error;
        }
        if (!valid (m, v)) {
            char *val = jobspec_update_value_text (v,
                                                   JOBSPEC_UPDATE_TEXT_MAX);
            errprintf (err, "jobtap: jobspec update of %s: invalid value %s",
                       key, val ? val : "?");
            free (val);
            goto error;
        }
        const char *why = memory_conflict (flat, m, v);
        if (!why && each)
            why = each (m, v, arg);
        if (why) {
            errprintf (err, "jobtap: jobspec update of %s: %s", key, why);
            goto error;
        }
    }
    return flat;
nomem:
    errprintf (err, "jobtap: out of memory");
error:
    json_decref (flat);
    return NULL;
}
