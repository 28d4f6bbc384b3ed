/* jobspec_update: which jobspec keys a policy may update, because Slurm
 * has a field for them (docs/jobspec.md, "Jobspec updates back into
 * Slurm").
 *
 * Owns the key table and the check of an update against it, so that an
 * update slurmctld refuses is refused offline with the same message.
 * Callers: src/slurm_adapter/jobspec_apply.c (which maps each field to
 * its job_desc member) and src/jobtap-run.  Needs only jansson. */
#ifndef SLURM_JOBTAP_JOBSPEC_UPDATE_H
#define SLURM_JOBTAP_JOBSPEC_UPDATE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "host_error.h"
#include "jobspec_build.h"

enum jobspec_update_kind {
    JOBSPEC_UPDATE_DURATION,    /* a number >= 0 (seconds) */
    JOBSPEC_UPDATE_STRING,      /* a string */
    JOBSPEC_UPDATE_LOWER,       /* a string slurmctld lowercases */
    JOBSPEC_UPDATE_CONSTRAINTS, /* RFC 31 {properties: [...]}: apply only */
    JOBSPEC_UPDATE_COUNT,       /* an integer >= 1 */
    JOBSPEC_UPDATE_MEGABYTES,   /* an integer >= 0 */
    JOBSPEC_UPDATE_EPOCH,       /* an integer >= 0 (seconds since 1970) */
    JOBSPEC_UPDATE_NICE,        /* an integer, |n| <= JOBSPEC_NICE_MAX */
    JOBSPEC_UPDATE_MAIL_TYPE,   /* a --mail-type list (jobspec_mail.h) */
    JOBSPEC_UPDATE_EXCLUSIVE,   /* "node", "user", "mcs" or "topo" */
    JOBSPEC_UPDATE_FILE_TYPE,   /* "file": Slurm writes output to files */
    JOBSPEC_UPDATE_SHAPE,       /* resources or tasks (jobspec_resize.h) */
};

/* Slurm's nice range (sbatch --nice). */
#define JOBSPEC_NICE_MAX 2147483645

/* The Slurm job field behind a key. */
enum jobspec_update_field {
    JOBSPEC_FIELD_TIME_LIMIT,
    JOBSPEC_FIELD_PARTITION,
    JOBSPEC_FIELD_ACCOUNT,
    JOBSPEC_FIELD_WCKEY,
    JOBSPEC_FIELD_NAME,
    JOBSPEC_FIELD_WORK_DIR,
    JOBSPEC_FIELD_FEATURES,
    JOBSPEC_FIELD_COMMENT,
    JOBSPEC_FIELD_DEPENDENCY,
    JOBSPEC_FIELD_QOS,
    JOBSPEC_FIELD_RESERVATION,
    JOBSPEC_FIELD_LICENSES,
    JOBSPEC_FIELD_ADMIN_COMMENT,
    JOBSPEC_FIELD_TRES_PER_JOB,
    JOBSPEC_FIELD_TRES_PER_NODE,
    JOBSPEC_FIELD_TRES_PER_SOCKET,
    JOBSPEC_FIELD_TRES_PER_TASK,
    JOBSPEC_FIELD_CPUS_PER_TRES,
    JOBSPEC_FIELD_MEM_PER_TRES,
    JOBSPEC_FIELD_MAIL_USER,
    JOBSPEC_FIELD_STD_OUT,
    JOBSPEC_FIELD_STD_ERR,
    /* not strings: */
    JOBSPEC_FIELD_TIME_MIN,
    JOBSPEC_FIELD_MEM_PER_NODE,
    JOBSPEC_FIELD_MEM_PER_CPU,
    JOBSPEC_FIELD_MAX_NODES,
    JOBSPEC_FIELD_BEGIN_TIME,
    JOBSPEC_FIELD_NICE,
    JOBSPEC_FIELD_MAIL_TYPE,
    JOBSPEC_FIELD_EXCLUSIVE,
    JOBSPEC_FIELD_NONE,      /* checked, nothing to set (output type) */
    JOBSPEC_FIELD_RESOURCES, /* node count, tasks, cores per task */
    JOBSPEC_FIELD_TASKS,
    JOBSPEC_FIELD_COUNT
};

/* The first field that is not a string. */
#define JOBSPEC_FIELD_FIRST_NUMBER JOBSPEC_FIELD_TIME_MIN

struct jobspec_update_key {
    const char *key; /* dotted, e.g. "attributes.system.duration" */
    enum jobspec_update_kind kind;
    enum jobspec_update_field field;
};

/* Every updatable key, in one order both directions use. */
extern const struct jobspec_update_key jobspec_update_keys[];
extern const size_t jobspec_update_nkeys;

/* The entry for a dotted key, or NULL if it has no Slurm equivalent. */
const struct jobspec_update_key *jobspec_update_key_find (const char *key);

/* Updates (dotted keys -> values; a value may nest the rest of the path,
 * as {"attributes.system.job": {"name": x}}) checked against the table.
 * Returns them as a new object of table keys -> values, or NULL with
 * err naming the first key that has no Slurm equivalent or
 * a value of the wrong type.  The shape of resources and tasks values is
 * left to jobspec_resize, which needs the job. */
json_t *jobspec_updates_check (json_t *updates, jobtap_host_error_t *err);

/* jobspec_updates_check, and each (m, v, arg) for each key that passes,
 * in one pass: the caller's own checks (a reason to refuse the update,
 * or NULL) and what it keeps of the keys, without another lookup. */
typedef const char *(*jobspec_update_each_f) (
    const struct jobspec_update_key *m, json_t *v, void *arg);
json_t *jobspec_updates_check_each (json_t *updates,
                                    jobspec_update_each_f each,
                                    void *arg,
                                    jobtap_host_error_t *err);

/* A value (any JSON) as compact text for a message, cut to 'max' bytes:
 * "xxxx... (N bytes)" past it, so that a plugin's huge update cannot flood
 * the user's terminal or slurmctld's log.  malloc'd, or NULL (no memory). */
#define JOBSPEC_UPDATE_TEXT_MAX 64
char *jobspec_update_value_text (json_t *v, size_t max);

/* Slurm's features string "a&b" for {"properties": ["a", "b"]}; malloc'd,
 * or NULL when the value is not of that shape. */
char *jobspec_constraints_features (json_t *constraints);

/* "node", "user", "mcs" or "topo" as the kind of exclusive; anything
 * else (NULL too) is JOBSPEC_SHARED. */
enum jobspec_exclusive jobspec_exclusive_parse (const char *s);

/* A duration in seconds as a Slurm time limit in whole minutes, rounded
 * up and never down to 0; 0 (unlimited) stays 0. */
uint32_t jobspec_duration_minutes (double seconds);

#endif
