/* libFuzzer harness: jobspec updates mapped onto Slurm's job_desc
 * (src/slurm_adapter/jobspec_apply.c), without slurmctld, as
 * test/unit/test_slurm_jobspec_apply.c builds it.
 *
 * The input is a JSON object of updates, applied to a new job_desc at
 * submit (no job) and as an update of a pending job record.  An apply
 * that fails must say why and leave the job_desc as it was (byte for
 * byte); every string member is xfree'd after (slurm_free_job_desc_msg
 * would load select plugins), so a member left pointing at memory that
 * is not xmalloc'd shows, and LeakSanitizer sees one this list misses. */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "src/common/slurm_xlator.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

#include "jobspec.h"
#include "jobspec_apply.h"
#include "slurm_compat.h"
#include "../unit/pending_job_fixture.h"

static void fail (const char *what, const char *detail)
{
    fprintf (stderr, "fuzz_update_map: %s: %s\n", what, detail ? detail : "");
    abort ();
}

/* Every string member an update may set (jobspec_apply.c). */
static void desc_free (job_desc_msg_t *d)
{
    char **members[] = {
        &d->partition, &d->account, &d->wckey, &d->name, &d->work_dir,
        &d->features, &d->comment, &d->dependency, &d->qos, &d->reservation,
        &d->licenses, &d->admin_comment, &d->tres_per_job, &d->tres_per_node,
        &d->tres_per_socket, &d->tres_per_task, &d->cpus_per_tres,
        &d->mem_per_tres, &d->mail_user, &d->std_out, &d->std_err,
    };
    for (size_t i = 0; i < sizeof (members) / sizeof (members[0]); i++)
        xfree (*members[i]);
    xfree (d);
}

static void apply_one (json_t *updates, const job_record_t *job)
{
    job_desc_msg_t *d = xmalloc (sizeof (*d));
    job_desc_msg_t before;
    jobtap_host_error_t err = {""};

    slurm_init_job_desc_msg (d);
    d->user_id = 1000;
    memcpy (&before, d, sizeof (before));
    if (jobspec_apply_updates (d, job, updates, NULL, &err) < 0) {
        if (!err.text[0])
            fail ("a refused update with no message", NULL);
        if (memcmp (&before, d, sizeof (before)))
            fail ("a refused update changed the job_desc", err.text);
    }
    else if (job) {
        /* What a job_modify of this desc reads back as updates. */
        json_t *back = jobspec_updates_from_desc (d, job);
        json_decref (back);
    }
    desc_free (d);
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    json_t *updates = json_loadb ((const char *)data, size, 0, NULL);
    job_record_t job;
    jobtap_job_details_t det;

    if (!updates)
        return 0;
    apply_one (updates, NULL);
    record_init (&job, &det);
    apply_one (updates, &job);
    json_decref (updates);
    return 0;
}
