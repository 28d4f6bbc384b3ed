/* jobspec_build: a job's fields -> Flux jobspec version 1 (docs/jobspec.md
 * is the contract).
 *
 * Owns the Slurm-free half of building a jobspec, so that slurmctld and
 * the offline runner give a job the same jobspec.  Callers:
 * src/slurm_adapter/jobspec.c (fields from a job_desc or a job record) and
 * src/jobtap-run (fields from sbatch-like options).  Needs only jansson;
 * thread-safe. */
#ifndef SLURM_JOBTAP_JOBSPEC_BUILD_H
#define SLURM_JOBTAP_JOBSPEC_BUILD_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* How a job holds its nodes (Slurm's --exclusive[=user|mcs|topo]). */
enum jobspec_exclusive {
    JOBSPEC_SHARED = 0,     /* Slurm's default */
    JOBSPEC_EXCLUSIVE_NODE, /* --exclusive: whole nodes */
    JOBSPEC_EXCLUSIVE_USER, /* shares nodes only with the user's jobs */
    JOBSPEC_EXCLUSIVE_MCS,
    JOBSPEC_EXCLUSIVE_TOPO, /* 24.11 */
};

/* What a memory request counts (--mem or --mem-per-cpu). */
enum jobspec_memory {
    JOBSPEC_MEM_UNSET = 0,
    JOBSPEC_MEM_PER_NODE, /* 0 MB is all of each node's memory */
    JOBSPEC_MEM_PER_CPU,
};

/* One job as Slurm describes it, with unset values as 0 or NULL (never
 * Slurm's NO_VAL/INFINITE sentinels).  Strings are borrowed. */
struct jobspec_fields {
    uint32_t nodes;          /* minimum node count; 0 = not asked for */
    uint32_t max_nodes;      /* -N min-max; 0 = unset */
    uint32_t ntasks;         /* 0 = unset */
    uint16_t cpus_per_task;  /* 0 = unset (1) */
    uint16_t tasks_per_node; /* 0 = unset */
    enum jobspec_exclusive exclusive;
    enum jobspec_memory mem_per;
    uint64_t mem_mb;       /* with mem_per */
    uint32_t time_limit;   /* minutes; 0 = unlimited */
    uint32_t time_min;     /* minutes; 0 = unset */
    const char *partition; /* may be a list "a,b" */
    const char *account;
    const char *wckey;
    const char *work_dir;
    const char *name;
    const char *dependency; /* as submitted, or as slurmctld rewrites it */
    const char *features;
    const char *comment;
    const char *admin_comment;
    const char *qos;
    const char *reservation;
    const char *licenses;
    const char *tres_per_job; /* e.g. "gres:gpu:2" */
    const char *tres_per_node;
    const char *tres_per_socket;
    const char *tres_per_task;
    const char *cpus_per_tres;
    const char *mem_per_tres;
    const char *std_out; /* paths as given, Slurm's %j patterns kept */
    const char *std_err;
    uint16_t mail_type; /* Slurm's MAIL_* bits (jobspec_mail.h); 0 = unset */
    const char *mail_user;
    int64_t begin_time; /* epoch seconds; 0 = unset */
    int32_t nice;       /* signed nice value; 0 = unset */
    char *const *argv;  /* the batch script and its arguments */
    uint32_t argc;
    const char *array;      /* a job array's tasks, "1-4%2"; NULL = none */
    uint32_t array_job_id;  /* an array task's array; 0 = not a task */
    uint32_t array_task_id; /* with array_job_id */
};

/* What a reader finds at a path of a jobspec without building it. */
enum jobspec_member {
    JOBSPEC_MEMBER_UNKNOWN = 0, /* only the built jobspec tells */
    JOBSPEC_MEMBER_ABSENT,
    JOBSPEC_MEMBER_OBJECT,
    JOBSPEC_MEMBER_VALUE,       /* a scalar, given */
    JOBSPEC_MEMBER_SCALAR,      /* a scalar, told without JSON */
};

/* attributes.system.duration of a time limit (minutes; 0, unlimited,
 * is Flux's 0 too), in seconds. */
static inline double jobspec_duration (uint32_t time_limit)
{
    return time_limit * 60.;
}

/* A scalar member told without making its JSON value: a string is a
 * field's own text (borrowed from the fields read). */
struct jobspec_scalar {
    json_type type; /* JSON_STRING, JSON_INTEGER or JSON_REAL */
    const char *string;
    json_int_t integer;
    double real;
};

/* attributes.system.<key> of jobspec_build (f), built alone: a scalar
 * member's value (*value, a new reference; with 'scalar' not NULL, in
 * *scalar when it is a field as is) or what kind the member is.  The
 * members made of one field each are answered; for the others it says
 * whether they are there when that is cheap to tell. */
enum jobspec_member jobspec_system_member (const struct jobspec_fields *f,
                                           const char *key,
                                           json_t **value,
                                           struct jobspec_scalar *scalar);

/* The jobspec of a job.  New reference, or NULL when out of memory.  Parts
 * of the tree may be shared with other jobspecs built here: change them
 * only through copy-on-write (as the runtime does). */
json_t *jobspec_build (const struct jobspec_fields *f);

/* A string lowercased, as slurmctld stores accounts and wckeys.  New
 * reference. */
json_t *jobspec_lowercase (const char *s);

/* Text that is its own JSON string as is: ASCII (so valid UTF-8, with
 * nothing for jansson to check), and with 'lower' already lowercase. */
bool jobspec_text_as_is (const char *s, bool lower);

/* "node", "user", "mcs" or "topo" (attributes.system.slurm.exclusive);
 * NULL for JOBSPEC_SHARED. */
const char *jobspec_exclusive_name (enum jobspec_exclusive e);

#endif
