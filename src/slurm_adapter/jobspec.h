/* Slurm job <-> Flux jobspec version 1 (docs/jobspec.md is the contract).
 *
 * The Slurm half of the mapping: a job_desc or job record read into
 * struct jobspec_fields (built by src/jobspec/jobspec_build; jobspec.c),
 * and checked jobspec updates (src/jobspec/jobspec_update) applied back
 * to a job_desc, or a job_modify request read as updates
 * (jobspec_apply.c).  Called by the adapter's Slurm hooks; slurmctld's
 * locks as noted. */
#ifndef SLURM_JOBTAP_JOBSPEC_H
#define SLURM_JOBTAP_JOBSPEC_H

#include <jansson.h>
#include <stdbool.h>

#include "src/slurmctld/slurmctld.h"

#include "jobspec_build.h"

struct jobtap_spec_scalar; /* host.h */

/* Where a submission's defaults come from: slurmctld's partition table
 * inside slurmctld (jobspec_slurmctld_partitions), a stub in tests and
 * benchmarks. */
struct jobspec_partitions {
    /* The default partition's name, or NULL. */
    const char *(*default_name) (void *arg);
    /* The DefaultTime and MaxTime (minutes, INFINITE or NO_VAL) of the
     * partition called name, or of the default one when name is NULL;
     * false when there is no such partition. */
    bool (*time_limits) (const char *name,
                         uint32_t *default_time,
                         uint32_t *max_time,
                         void *arg);
    void *arg;
};

/* The jobspec of a job being submitted (job_submit), with Slurm's defaults
 * for partition and time limit resolved through parts as slurmctld will
 * resolve them.  With 'source', the fields it is made of instead, saved
 * (jobspec_fields_save: malloc'd, *source_len bytes) for the runtime to
 * make it when a reader needs it (jobtap_host_submit_from_source): NULL
 * returned, and *source set unless the jobspec holds more than those
 * fields (--setattr attributes) or memory ran out, when the jobspec is
 * returned as without 'source'.  A new reference, or NULL (out of
 * memory). */
json_t *jobspec_from_desc_parts (const job_desc_msg_t *desc,
                                 const struct jobspec_partitions *parts,
                                 void **source,
                                 size_t *source_len);

/* The jobspec of an existing job. Needs the job read lock.  With
 * 'source', *source is also the fields it was built from, saved
 * (jobtap_host_job_source), or NULL when the jobspec holds more than
 * those fields (--setattr attributes) or memory ran out. */
json_t *jobspec_from_record (const job_record_t *job,
                             void **source,
                             size_t *source_len);

/* The jobspec of task 'task' of the array whose record (with the task
 * still pending in it) is 'meta'. Needs the job read lock.  'source' as
 * for jobspec_from_record (may be NULL). */
json_t *jobspec_from_array_task (const job_record_t *meta,
                                 uint32_t task,
                                 void **source,
                                 size_t *source_len);

/* ops.jobspec_rebuild and ops.jobspec_find (host.h) for the sources
 * given with the jobspecs above: the jobspec made from the saved fields,
 * and what it has at a path told from them (a plugin reading the
 * duration or the queue of a new job costs no tree). */
json_t *jobspec_source_build (const void *source, size_t len, void *arg);
int jobspec_source_find (const void *source,
                         size_t len,
                         const char *const *path,
                         int depth,
                         json_t **value,
                         struct jobtap_spec_scalar *scalar,
                         void *arg);

/* Jobtap urgency of a job: 0 when held by its user or an operator (not
 * by the shim), else the default 16. */
int jobspec_urgency_from_desc (const job_desc_msg_t *desc);
int jobspec_urgency_from_record (const job_record_t *job);

/* A job_desc's fields (parts NULL: no partition or time limit filled
 * in).  *mail_user is what f->mail_user points to when slurmctld's
 * default was filled in (xfree it after f), else NULL. */
void jobspec_fields_from_desc (const job_desc_msg_t *desc,
                               const struct jobspec_partitions *parts,
                               struct jobspec_fields *f,
                               char **mail_user);

/* A job record's fields (borrowed from it). Needs the job read lock. */
void jobspec_fields_from_record (const job_record_t *job,
                                 struct jobspec_fields *f);

/* slurmctld's own partition table.  Inline, so that only code linked into
 * slurmctld refers to its globals (unit tests and bench-micro link
 * jobspec.c without them). Needs the partition read lock. */
static inline const char *jobspec_slurmctld_default_name (void *arg)
{
    (void)arg;
    return default_part_name;
}

static inline bool jobspec_slurmctld_time_limits (const char *name,
                                                  uint32_t *default_time,
                                                  uint32_t *max_time,
                                                  void *arg)
{
    part_record_t *part =
        name ? find_part_record ((char *)name) : default_part_loc;
    (void)arg;
    if (!part)
        return false;
    *default_time = part->default_time;
    *max_time = part->max_time;
    return true;
}

/* jobspec_from_desc_parts with slurmctld's partitions: the partition read
 * lock is held in job_submit. */
static inline json_t *jobspec_from_desc (const job_desc_msg_t *desc,
                                         void **source,
                                         size_t *source_len)
{
    const struct jobspec_partitions parts = {
        .default_name = jobspec_slurmctld_default_name,
        .time_limits = jobspec_slurmctld_time_limits,
    };
    return jobspec_from_desc_parts (desc, &parts, source, source_len);
}

#endif
