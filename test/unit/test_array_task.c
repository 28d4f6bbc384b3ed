/* src/jobtap/array_task.c: ARRAYID_TASKID read, and turned into a record
 * id by a stand-in squeue put first on PATH (its arguments kept, its
 * answer and exit status chosen per case). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "array_task.h"
#include "tap.h"

static char dir[] = "/tmp/test-array-task.XXXXXX";
static char args_file[256];

/* A squeue that records its arguments, prints 'out' and exits with rc. */
static void fake_squeue (const char *out, int rc)
{
    char path[256];
    snprintf (path, sizeof (path), "%s/squeue", dir);
    FILE *f = fopen (path, "w");
    if (!f)
        bail_out ("cannot write %s", path);
    fprintf (f, "#!/bin/sh\necho \"$*\" > '%s'\nprintf '%%s' '%s'\nexit %d\n",
             args_file, out, rc);
    fclose (f);
    chmod (path, 0755);
}

static char *slurp (const char *p)
{
    static char buf[512];
    FILE *f = fopen (p, "r");
    size_t n = f ? fread (buf, 1, sizeof (buf) - 1, f) : 0;
    buf[n] = '\0';
    if (f)
        fclose (f);
    buf[strcspn (buf, "\n")] = '\0';
    return buf;
}

int main (void)
{
    unsigned long long id = 0;
    jobtap_host_error_t err;

    ok (array_task_syntax ("7_3") && array_task_syntax ("123_0"),
        "7_3 and 123_0 are ARRAYID_TASKID");
    ok (!array_task_syntax ("7") && !array_task_syntax ("7_")
            && !array_task_syntax ("_3") && !array_task_syntax ("7_3x")
            && !array_task_syntax ("7_-3") && !array_task_syntax ("7_[1-3]")
            && !array_task_syntax ("12345678901_1"),
        "a plain id, half of one, a range or an 11-digit id are not");

    if (!mkdtemp (dir))
        bail_out ("mkdtemp failed");
    snprintf (args_file, sizeof (args_file), "%s/args", dir);
    char path[4096];
    snprintf (path, sizeof (path), "%s:%s", dir, getenv ("PATH"));
    setenv ("PATH", path, 1);

    fake_squeue ("12\n", 0);
    ok (array_task_record_id ("7_3", &id, &err) == 0 && id == 12,
        "squeue's record id is the answer");
    is (slurp (args_file), "-h -t all -o %A -j 7_3",
        "squeue is asked for the record id of that task, in any state");

    fake_squeue ("slurm_load_jobs error: Invalid job id specified\n", 1);
    ok (array_task_record_id ("7_9", &id, &err) == -1, "an unknown task fails");
    is (err.text, "squeue does not know job 7_9: slurm_load_jobs error: Invalid job id specified",
        "with squeue's own error");

    fake_squeue ("", 0);
    ok (array_task_record_id ("7_9", &id, &err) == -1
            && !strcmp (err.text, "squeue does not know job 7_9"),
        "no answer at all is not found either");

    ok (array_task_record_id ("7", &id, &err) == -1
            && !strcmp (err.text, "7 is not ARRAYID_TASKID"),
        "a plain id is refused");

    char f[300];
    snprintf (f, sizeof (f), "%s/squeue", dir);
    unlink (f);
    setenv ("PATH", dir, 1);
    ok (array_task_record_id ("7_3", &id, &err) == -1
            && strstr (err.text, "cannot run squeue") != NULL,
        "no squeue on PATH: said so");
    unlink (args_file);
    rmdir (dir);
    done_testing ();
    return 0;
}
