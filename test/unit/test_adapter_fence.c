/* src/slurm_adapter/fence.c with job records made here: what a fence
 * changes in a job, what lifting it puts back, and a fence left in a job
 * saved before a kill. Slurm's helpers (log) from libslurmfull. */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "src/common/slurm_xlator.h"
#include "src/slurmctld/slurmctld.h"

#include "fence.h"
#include "tap.h"

static job_record_t *new_job (uint32_t id, time_t begin, time_t deadline)
{
    job_record_t *job = calloc (1, sizeof (*job));
    job->details = calloc (1, sizeof (*job->details));
    job->job_id = id;
    job->details->begin_time = begin;
    job->deadline = deadline;
    return job;
}

static void free_job (job_record_t *job)
{
    free (job->details);
    free (job);
}

int main (void)
{
    struct fences f = {0};
    job_record_t *a = new_job (7, 0, 0);
    job_record_t *b = new_job (8, 1000, 5000);

    fence_job (&f, a);
    isint (a->details->begin_time, FENCE_BEGIN_TIME,
           "a fenced job is eligible only in 2038");
    isint (a->deadline, NO_VAL,
           "with no deadline of its own, its deadline reads as test-only");
    ok (fence_has (&f, 7), "the fence is known by the job's id");
    ok (!fence_has (&f, 8), "another job is not fenced");

    fence_job (&f, a);
    isint (f.n, 1, "fencing a job twice keeps one fence");

    fence_job (&f, b);
    isint (b->details->begin_time, FENCE_BEGIN_TIME,
           "a job with its own begin time is fenced too");
    isint (b->deadline, 5000, "a job's own deadline is left as it is");

    fence_lift (&f, 7, a);
    isint (a->details->begin_time, 0, "lifting puts the begin time back");
    isint (a->deadline, 0, "lifting puts the deadline back");
    ok (!fence_has (&f, 7), "a lifted fence is forgotten");
    ok (fence_has (&f, 8), "the other fence stays");

    /* the user set a begin time while the job was fenced: theirs stays */
    b->details->begin_time = 3000;
    fence_lift (&f, 8, b);
    isint (b->details->begin_time, 3000,
           "a begin time set while fenced is not overwritten");
    isint (f.n, 0, "no fence left");

    fence_lift (&f, 8, b);
    isint (b->details->begin_time, 3000, "lifting an unfenced job does nothing");

    /* the job is gone by the time the agent lifts its fence */
    job_record_t *gone = new_job (9, 0, 0);
    fence_job (&f, gone);
    free_job (gone);
    fence_lift (&f, 9, NULL);
    ok (!fence_has (&f, 9), "the fence of a job that is gone is forgotten");

    job_record_t *no_details = new_job (10, 0, 0);
    free (no_details->details);
    no_details->details = NULL;
    fence_job (&f, no_details);
    ok (!fence_has (&f, 10), "a job with no details is not fenced");
    free (no_details);

    /* many at once: the list grows, and each lifts on its own */
    job_record_t *many[40];
    for (int i = 0; i < 40; i++) {
        many[i] = new_job (100 + i, 0, 0);
        fence_job (&f, many[i]);
    }
    isint (f.n, 40, "40 jobs fenced at once");
    for (int i = 0; i < 40; i += 2)
        fence_lift (&f, 100 + i, many[i]);
    bool odd_only = true;
    for (int i = 0; i < 40; i++)
        if (fence_has (&f, 100 + i) != (i % 2 == 1)
            || (many[i]->details->begin_time == FENCE_BEGIN_TIME)
                   != (i % 2 == 1))
            odd_only = false;
    ok (odd_only, "lifting every other one leaves exactly the others fenced");
    for (int i = 0; i < 40; i++)
        free_job (many[i]);
    fence_free (&f);
    isint (f.n, 0, "fence_free empties the list");

    /* saved by Slurm with the fence on (slurmctld was killed) */
    job_record_t *saved = new_job (11, FENCE_BEGIN_TIME, NO_VAL);
    fence_clear_leftover (saved);
    isint (saved->details->begin_time, 0,
           "a leftover fence's begin time is cleared");
    isint (saved->deadline, 0, "and its test-only deadline");
    job_record_t *plain = new_job (12, 1234, 99);
    fence_clear_leftover (plain);
    ok (plain->details->begin_time == 1234 && plain->deadline == 99,
        "a job that was never fenced is left alone");
    free_job (saved);
    free_job (plain);
    free_job (a);
    free_job (b);
    done_testing ();
    return 0;
}
