/* jobspec_update: which jobspec keys a policy may update, because Slurm
 * has a field for them (docs/jobspec.md, "Jobspec updates back into
 * Slurm").
 *
 * Owns the key table and the check of an update against it, so that an
 * update slurmctld refuses is refused offline with the same message.
 * Callers: src/slurm_adapter/jobspec.c (which maps each field to its
 * job_desc member) and src/jobtap-run.  Needs only jansson. */
#ifndef SLURM_JOBTAP_JOBSPEC_UPDATE_H
#define SLURM_JOBTAP_JOBSPEC_UPDATE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

enum jobspec_update_kind {
    JOBSPEC_UPDATE_DURATION,    /* a number >= 0 (seconds) */
    JOBSPEC_UPDATE_STRING,      /* a string */
    JOBSPEC_UPDATE_LOWER,       /* a string slurmctld lowercases */
    JOBSPEC_UPDATE_CONSTRAINTS, /* RFC 31 {properties: [...]}: apply only */
};

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
    JOBSPEC_FIELD_COUNT
};

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
 * *errmsg (malloc'd) naming the first key that has no Slurm equivalent or
 * a value of the wrong type. */
json_t *jobspec_updates_check (json_t *updates, char **errmsg);

/* Slurm's features string "a&b" for {"properties": ["a", "b"]}; malloc'd,
 * or NULL when the value is not of that shape. */
char *jobspec_constraints_features (json_t *constraints);

/* A duration in seconds as a Slurm time limit in whole minutes, rounded
 * up and never down to 0; 0 (unlimited) stays 0. */
uint32_t jobspec_duration_minutes (double seconds);

#endif
