/* src/jobspec/jobspec_fields.c: a job's fields kept in one block give back
 * the jobspec they gave when built. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jobspec_build.h"
#include "jobspec_fields.h"
#include "tap.h"

/* The sorted compact text of a jobspec (taken; malloc'd, NULL for
 * none). */
static char *text_of (json_t *spec)
{
    char *s = spec ? json_dumps (spec, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref (spec);
    return s;
}

/* The same of the jobspec of f. */
static char *spec_text (const struct jobspec_fields *f)
{
    return text_of (jobspec_build (f));
}

/* Saved and built again: the same jobspec. */
static void same_after_load (const struct jobspec_fields *f, const char *what)
{
    char *want = spec_text (f), *got = NULL;
    size_t len = 0;
    void *block = jobspec_fields_save (f, &len);

    ok (block != NULL && len > 0, "%s: saved", what);
    if (block)
        got = text_of (jobspec_fields_build (block, len));
    is (got, want, "%s: the saved fields build the same jobspec", what);
    free (got);
    free (want);
    free (block);
}

static void test_round_trip (void)
{
    struct jobspec_fields f;
    char *argv[] = { strdup ("/bin/script.sh"), strdup ("arg one"), NULL };
    char name[] = "name\twith \"quotes\" and é";

    memset (&f, 0, sizeof (f));
    same_after_load (&f, "no fields");

    f.nodes = 2;
    f.max_nodes = 4;
    f.ntasks = 8;
    f.cpus_per_task = 2;
    f.tasks_per_node = 4;
    f.exclusive = JOBSPEC_EXCLUSIVE_USER;
    f.mem_per = JOBSPEC_MEM_PER_CPU;
    f.mem_mb = 1024;
    f.time_limit = 90;
    f.time_min = 30;
    f.partition = "debug,batch";
    f.account = "Physics";
    f.wckey = "WK";
    f.work_dir = "/home/u";
    f.name = name;
    f.dependency = "afterok:12:13,singleton";
    f.features = "a&b";
    f.comment = "c";
    f.admin_comment = "ac";
    f.qos = "normal";
    f.reservation = "r1";
    f.licenses = "lic:2";
    f.tres_per_job = "gres:gpu:2";
    f.tres_per_node = "gres:gpu:1";
    f.tres_per_socket = "gres:gpu:1";
    f.tres_per_task = "gres:gpu:1";
    f.cpus_per_tres = "gres:gpu:2";
    f.mem_per_tres = "gres:gpu:100";
    f.std_out = "out-%j";
    f.std_err = "err-%j";
    f.mail_type = 1;
    f.mail_user = "u@example.org";
    f.begin_time = 1700000000;
    f.nice = -5;
    f.argv = argv;
    f.argc = 2;
    f.array = "1-4%2";
    same_after_load (&f, "every field");

    /* jobspec_build stops at argc or at argv's first NULL */
    f.argc = 5;
    same_after_load (&f, "argc beyond argv's NULL");
    f.array = NULL;
    f.array_job_id = 7;
    f.array_task_id = 3;
    same_after_load (&f, "an array task");

    /* more arguments than build's own room for their pointers */
    char *many[40];
    for (int i = 0; i < 40; i++)
        many[i] = argv[i % 2];
    f.argv = many;
    f.argc = 40;
    same_after_load (&f, "40 arguments");
    f.argv = argv;
    f.argc = 2;

    /* the block keeps its own copies */
    size_t len;
    void *block = jobspec_fields_save (&f, &len);
    char *want = spec_text (&f);
    argv[0][1] = 'X';
    name[0] = 'N';
    free (argv[0]);
    free (argv[1]);
    char *got = text_of (jobspec_fields_build (block, len));
    is (got, want, "the strings are the block's: the caller's may go");
    free (got);
    free (want);

    errno = 0;
    ok (jobspec_fields_build (block, len - 1) == NULL && errno == EINVAL,
        "a wrong length is refused (EINVAL)");
    char *cut = malloc (len);
    memcpy (cut, block, len);
    cut[len - 1] = 'x'; /* the last string loses its NUL */
    errno = 0;
    ok (jobspec_fields_build (cut, len) == NULL && errno == EINVAL,
        "a string running past the block is refused");
    free (cut);
    char junk[256] = { 0 };
    ok (jobspec_fields_build (junk, sizeof (junk)) == NULL,
        "bytes not saved here are refused");
    ok (jobspec_fields_build (NULL, 0) == NULL, "no block is refused");
    free (block);
}

int main (void)
{
    test_round_trip ();
    done_testing ();
    return 0;
}
