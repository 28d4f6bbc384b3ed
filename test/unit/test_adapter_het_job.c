/* src/slurm_adapter/het_job.c with job records made here: which records
 * a hetjob's leader stands for, and which records are its other
 * components. Slurm's lists from libslurmfull. */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "src/common/slurm_xlator.h"
#include "src/common/list.h"
#include "src/slurmctld/slurmctld.h"

#include "het_job.h"
#include "tap.h"

static job_record_t *new_job (uint32_t id, uint32_t het_id, uint32_t offset)
{
    job_record_t *job = calloc (1, sizeof (*job));
    job->job_id = id;
    job->het_job_id = het_id;
    job->het_job_offset = offset;
    return job;
}

static void record_id (job_record_t *job, void *arg)
{
    char *seen = arg;
    size_t n = strlen (seen);
    seen[n] = (char)('0' + job->job_id % 10);
    seen[n + 1] = '\0';
}

int main (void)
{
    job_record_t *plain = new_job (5, 0, NO_VAL);
    job_record_t *leader = new_job (7, 7, 0);
    job_record_t *second = new_job (8, 7, 1);
    job_record_t *third = new_job (9, 7, 2);
    char seen[16] = "";

    ok (!het_job_is_component (plain), "a plain job is no component");
    ok (!het_job_is_component (leader), "a leader is not one of the others");
    ok (het_job_is_component (second) && het_job_is_component (third),
        "components 1 and 2 are");
    job_record_t *creating = new_job (10, 0, 0);
    ok (!het_job_is_component (creating),
        "a record Slurm has not made a component yet is not one");

    job_desc_msg_t desc = {.het_job_offset = NO_VAL};
    ok (!het_job_desc_is_leader (&desc) && !het_job_desc_is_component (&desc),
        "a plain submission is neither leader nor component");
    desc.het_job_offset = 0;
    ok (het_job_desc_is_leader (&desc) && !het_job_desc_is_component (&desc),
        "offset 0 is the leader's submission");
    desc.het_job_offset = 2;
    ok (!het_job_desc_is_leader (&desc) && het_job_desc_is_component (&desc),
        "offset 2 is another component's");

    het_job_each (plain, record_id, seen);
    is (seen, "5", "a plain job stands for itself");

    seen[0] = '\0';
    het_job_each (leader, record_id, seen);
    is (seen, "7", "a leader before Slurm lists its components: itself");

    leader->het_job_list = list_create (NULL);
    list_append (leader->het_job_list, leader);
    list_append (leader->het_job_list, second);
    list_append (leader->het_job_list, third);
    seen[0] = '\0';
    het_job_each (leader, record_id, seen);
    is (seen, "789", "a leader stands for every component, itself first");

    seen[0] = '\0';
    het_job_each (second, record_id, seen);
    is (seen, "8", "another component stands for itself alone");

    FREE_NULL_LIST (leader->het_job_list);
    free (plain);
    free (leader);
    free (second);
    free (third);
    free (creating);
    done_testing ();
}
