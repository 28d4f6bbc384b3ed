/* jobspec_update: the jobspec keys with a Slurm field, and the check of a
 * policy's updates against them.  Slurm-free: the adapter applies checked
 * updates to a job_desc, jobtap-run only refuses what slurmctld would. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobspec_update.h"

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
    {"attributes.system.slurm.comment", JOBSPEC_UPDATE_STRING,
     JOBSPEC_FIELD_COMMENT},
    {"attributes.system.slurm.features", JOBSPEC_UPDATE_STRING,
     JOBSPEC_FIELD_FEATURES},
    {"attributes.system.slurm.dependency", JOBSPEC_UPDATE_STRING,
     JOBSPEC_FIELD_DEPENDENCY},
    {"attributes.system.slurm.qos", JOBSPEC_UPDATE_STRING, JOBSPEC_FIELD_QOS},
    {"attributes.system.slurm.reservation", JOBSPEC_UPDATE_STRING,
     JOBSPEC_FIELD_RESERVATION},
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

static bool valid (const struct jobspec_update_key *m, json_t *v)
{
    char *s;

    switch (m->kind) {
    case JOBSPEC_UPDATE_DURATION:
        return json_is_number (v) && json_number_value (v) >= 0;
    case JOBSPEC_UPDATE_CONSTRAINTS:
        s = jobspec_constraints_features (v);
        free (s);
        return s != NULL;
    case JOBSPEC_UPDATE_STRING:
    case JOBSPEC_UPDATE_LOWER:
        break;
    }
    return json_is_string (v);
}

json_t *jobspec_updates_check (json_t *updates, char **errmsg)
{
    json_t *flat = json_object ();
    const char *key;
    json_t *v;

    *errmsg = NULL;
    if (!flat)
        goto nomem;
    json_object_foreach (updates, key, v)
    {
        if (flatten (flat, key, v) < 0)
            goto nomem;
    }
    json_object_foreach (flat, key, v)
    {
        const struct jobspec_update_key *m = jobspec_update_key_find (key);
        if (!m) {
            if (asprintf (errmsg,
                          "jobtap: jobspec update of %s has no Slurm "
                          "equivalent",
                          key) < 0)
                goto nomem;
            goto error;
        }
        if (!valid (m, v)) {
            char *val = json_dumps (v, JSON_ENCODE_ANY | JSON_COMPACT);
            int n = asprintf (errmsg,
                              "jobtap: jobspec update of %s: "
                              "invalid value %s",
                              key, val ? val : "?");
            free (val);
            if (n < 0)
                goto nomem;
            goto error;
        }
    }
    return flat;
nomem:
    *errmsg = strdup ("jobtap: out of memory");
error:
    json_decref (flat);
    return NULL;
}
