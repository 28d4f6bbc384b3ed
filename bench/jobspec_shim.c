/* The Slurm side of bench/micro: builds the jobspec of a realistic
 * job_desc_msg_t with the shim's own src/slurm_adapter/jobspec.c, and
 * applies a policy's updates back, as job_submit/jobtap does.
 *
 * jobspec.c needs three slurmctld globals; slurmctld is not here, so this
 * file provides them: one partition "debug", the default, with no
 * DefaultTime and MaxTime unlimited (the benchmark cluster's). */
#include <config.h>

#include <string.h>

#include "src/common/slurm_xlator.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

#include "jobspec.h"
#include "jobspec_shim.h"

static part_record_t debug_part;
char *default_part_name = "debug";
part_record_t *default_part_loc = &debug_part;

part_record_t *find_part_record (char *name)
{
    return name && !strcmp (name, "debug") ? &debug_part : NULL;
}

static job_desc_msg_t desc;
static char *argv_[] = {"/home/alice/run.sh", "--input", "data.txt", NULL};

/* What sbatch -J sim-42 -t 60 -N 1 -n 4 -A physics --comment "run 42"
 * -D /home/alice/work run.sh --input data.txt sends (no partition). */
void bench_desc_init (void)
{
    slurm_init_job_desc_msg (&desc);
    debug_part.name = "debug";
    debug_part.default_time = NO_VAL;
    debug_part.max_time = INFINITE;
    desc.name = "sim-42";
    desc.time_limit = 60;
    desc.min_nodes = 1;
    desc.num_tasks = 4;
    desc.account = "physics";
    desc.comment = "run 42";
    desc.work_dir = "/home/alice/work";
    desc.argv = argv_;
    desc.argc = 3;
    desc.user_id = 1000;
    desc.group_id = 1000;
}

json_t *bench_jobspec_build (void)
{
    return jobspec_from_desc (&desc);
}

int bench_urgency (void)
{
    return jobspec_urgency_from_desc (&desc);
}

/* Apply the updates as job_submit does, then undo them so the next
 * iteration starts from the same request. */
int bench_apply_updates (json_t *updates)
{
    char *msg = NULL;
    int rc = jobspec_apply_updates (&desc, updates, &msg);
    xfree (msg);
    if (desc.partition) {
        xfree (desc.partition);
        desc.partition = NULL;
    }
    return rc;
}
