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

/* One job as Slurm describes it, with unset values as 0 or NULL (never
 * Slurm's NO_VAL/INFINITE sentinels).  Strings are borrowed. */
struct jobspec_fields {
    uint32_t nodes;          /* minimum node count; 0 = not asked for */
    uint32_t ntasks;         /* 0 = unset */
    uint16_t cpus_per_task;  /* 0 = unset (1) */
    uint16_t tasks_per_node; /* 0 = unset */
    bool exclusive;          /* whole nodes */
    uint32_t time_limit;     /* minutes; 0 = unlimited */
    const char *partition;   /* may be a list "a,b" */
    const char *account;
    const char *wckey;
    const char *work_dir;
    const char *name;
    const char *dependency; /* as submitted, or as slurmctld rewrites it */
    const char *features;
    const char *comment;
    const char *qos;
    const char *reservation;
    const char *licenses;
    const char *tres_per_job; /* e.g. "gres:gpu:2" */
    const char *tres_per_node;
    const char *tres_per_task;
    int64_t begin_time; /* epoch seconds; 0 = unset */
    int32_t nice;       /* signed nice value; 0 = unset */
    char *const *argv;  /* the batch script and its arguments */
    uint32_t argc;
};

/* The jobspec of a job.  New reference, or NULL when out of memory.  Parts
 * of the tree may be shared with other jobspecs built here: change them
 * only through copy-on-write (as the runtime does). */
json_t *jobspec_build (const struct jobspec_fields *f);

/* A string lowercased, as slurmctld stores accounts and wckeys.  New
 * reference. */
json_t *jobspec_lowercase (const char *s);

#endif
