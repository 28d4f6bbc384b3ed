/* src/jobspec/array_id.h: a job array task's jobtap id, made of the
 * array's id and the task's index, and read back. */
#include <stdint.h>

#include "array_id.h"
#include "tap.h"

int main (void)
{
    uint64_t id = array_task_jobid (7, 3);

    ok (id == (1ULL << 62) + 7ULL * (1ULL << 30) + 3,
        "task 3 of array 7 is 2^62 + 7 * 2^30 + 3");
    ok (array_id_is_task (id), "it is a task's id");
    ok (array_id_array (id) == 7 && array_id_task (id) == 3,
        "its array and index read back");
    ok (id < (1ULL << 63), "below 2^63 (a Lua or JSON integer)");
    ok (!array_id_is_task (7) && !array_id_is_task (UINT32_MAX),
        "a Slurm job id is no task's");
    ok (!array_id_is_task ((1ULL << 63) | 5),
        "nor is a provisional job's (bit 63)");
    ok (array_id_is_slurm (7) && array_id_is_slurm (id)
            && !array_id_is_slurm ((1ULL << 63) | 5),
        "job and task ids name Slurm records, provisional ids do not");
    uint64_t last = array_task_jobid (UINT32_MAX, ARRAY_TASK_INDEX_MAX);
    ok (array_id_array (last) == UINT32_MAX
            && array_id_task (last) == ARRAY_TASK_INDEX_MAX
            && array_id_is_task (last),
        "the largest array id and index fit");
    ok (array_task_jobid (7, 3) < array_task_jobid (7, 4)
            && array_task_jobid (7, 4000000) < array_task_jobid (8, 0),
        "ids sort by array, then task");
    ok (array_task_jobid (1, 0) > UINT32_MAX, "after every plain job's id");
    done_testing ();
    return 0;
}
