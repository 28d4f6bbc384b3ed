/* pending_job_fixture: a Slurm job record for the tests of the update map
 * (test_slurm_jobspec_apply) and its fuzzer (test/fuzz/fuzz_update_map):
 * pending, 2 nodes, 4 tasks (2 a node), one cpu each. Include after
 * slurmctld.h and slurm_compat.h. */
#ifndef SLURM_JOBTAP_TEST_PENDING_JOB_FIXTURE_H
#define SLURM_JOBTAP_TEST_PENDING_JOB_FIXTURE_H

#include <string.h>

static inline void record_init (job_record_t *j, jobtap_job_details_t *det)
{
    memset (j, 0, sizeof (*j));
    memset (det, 0, sizeof (*det));
    j->details = det;
    j->job_id = 42;
    j->job_state = JOB_PENDING;
    j->name = "job";
    det->min_nodes = 2;
    det->max_nodes = 2;
    det->num_tasks = 4;
    det->orig_cpus_per_task = NO_VAL16;
    det->ntasks_per_node = NO_VAL16;
    det->share_res = NO_VAL8;
    det->nice = NICE_OFFSET;
}

#endif
