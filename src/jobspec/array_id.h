/* array_id: the jobtap id of a job array's task.
 *
 * Every task of an array is a jobtap job of its own from its submission,
 * but Slurm keeps the tasks still pending in one record (the array's, its
 * id the array's id) until it starts a task or a decision differs for it,
 * and then splits the task off into a record with a new id. A jobtap id
 * must not change under a plugin that keeps it, so a task's id is made of
 * the array's id and the task's index, whichever record holds it:
 *
 *   bit 62 set | array job id << 30 | task index
 *
 * below 2^63 (Lua and JSON integers) and apart from the runtime's
 * provisional ids (bit 63). Ids sort as Slurm orders tasks: by array,
 * then task (after every plain job, whose id is its Slurm id). `jobtap job 7_3` finds task 3 of array 7 by
 * it. Pure arithmetic: any thread, no Slurm types. */
#ifndef SLURM_JOBTAP_ADAPTER_ARRAY_ID_H
#define SLURM_JOBTAP_ADAPTER_ARRAY_ID_H

#include <stdbool.h>
#include <stdint.h>

#define ARRAY_TASK_ID_BIT (1ULL << 62)
/* Slurm's MaxArraySize is at most 4000001: the index fits in 30 bits. */
#define ARRAY_TASK_INDEX_MAX ((1U << 30) - 1)

static inline uint64_t array_task_jobid (uint32_t array_job_id, uint32_t task)
{
    return ARRAY_TASK_ID_BIT | ((uint64_t)array_job_id << 30)
           | (task & ARRAY_TASK_INDEX_MAX);
}

static inline bool array_id_is_task (uint64_t id)
{
    return (id >> 62) == 1;
}

static inline uint32_t array_id_array (uint64_t id)
{
    return (uint32_t)(id >> 30);
}

static inline uint32_t array_id_task (uint64_t id)
{
    return (uint32_t)(id & ARRAY_TASK_INDEX_MAX);
}

/* Whether id can name a Slurm job record: a job id or a task id (not a
 * provisional job's). */
static inline bool array_id_is_slurm (uint64_t id)
{
    return id <= UINT32_MAX || array_id_is_task (id);
}

#endif
