/* src/jobspec/jobspec_fields.c: a job's fields kept in one block give back
 * the jobspec they gave when built. */
#include <errno.h>
#include <stdbool.h>
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

/* The member of spec at path (depth keys), or NULL. */
static json_t *member_at (json_t *spec, const char *const *path, int depth)
{
    for (int i = 0; i < depth && spec; i++)
        spec = json_is_object (spec) ? json_object_get (spec, path[i]) : NULL;
    return spec;
}

/* A scalar's JSON value. */
static json_t *scalar_json (const struct jobspec_scalar *scalar)
{
    switch (scalar->type) {
    case JSON_STRING:
        return json_string (scalar->string);
    case JSON_INTEGER:
        return json_integer (scalar->integer);
    case JSON_REAL:
        return json_real (scalar->real);
    default:
        return NULL;
    }
}

static int scalars_told; /* answers given as JOBSPEC_MEMBER_SCALAR */

/* jobspec_fields_find against the built jobspec, at every path a reader
 * may ask for, asked for JSON values and then for scalars: whatever it
 * answers is what the tree has; *answered counts the paths it answered
 * (not UNKNOWN). */
static void find_matches_build (const struct jobspec_fields *f,
                                const char *what,
                                int *answered)
{
    static const char *const paths[][5] = {
        {NULL},
        {"version"},
        {"attributes"},
        {"resources"},
        {"tasks"},
        {"nothing"},
        {"attributes", "system"},
        {"attributes", "user"},
        {"attributes", "system", "duration"},
        {"attributes", "system", "queue"},
        {"attributes", "system", "bank"},
        {"attributes", "system", "project"},
        {"attributes", "system", "cwd"},
        {"attributes", "system", "job"},
        {"attributes", "system", "job", "name"},
        {"attributes", "system", "job", "other"},
        {"attributes", "system", "dependencies"},
        {"attributes", "system", "constraints"},
        {"attributes", "system", "slurm"},
        {"attributes", "system", "shell"},
        {"attributes", "system", "environment"},
        {"attributes", "system", "slurm", "qos"},
    };
    size_t len;
    void *block = jobspec_fields_save (f, &len);
    json_t *spec = jobspec_build (f);
    int wrong = 0;

    for (size_t k = 0; k < 2 * sizeof (paths) / sizeof (paths[0]); k++) {
        size_t i = k % (sizeof (paths) / sizeof (paths[0]));
        bool as_scalar = k >= sizeof (paths) / sizeof (paths[0]);
        struct jobspec_scalar scalar = {.type = JSON_NULL};
        int depth = 0;
        while (depth < 5 && paths[i][depth])
            depth++;
        json_t *v = NULL;
        enum jobspec_member m = jobspec_fields_find (
            block, len, paths[i], depth, &v, as_scalar ? &scalar : NULL);
        if (m == JOBSPEC_MEMBER_SCALAR && as_scalar && !v) {
            v = scalar_json (&scalar);
            m = JOBSPEC_MEMBER_VALUE;
            scalars_told++;
        }
        json_t *want = member_at (spec, paths[i], depth);
        bool right = m == JOBSPEC_MEMBER_UNKNOWN
                     || (m == JOBSPEC_MEMBER_ABSENT && !want)
                     || (m == JOBSPEC_MEMBER_OBJECT && json_is_object (want))
                     || (m == JOBSPEC_MEMBER_VALUE && want
                         && !json_is_object (want) && json_equal (v, want)
                         && json_typeof (v) == json_typeof (want));
        if (m != JOBSPEC_MEMBER_UNKNOWN && !as_scalar)
            (*answered)++;
        if (!right) {
            diag ("%s: path %zu answered %d%s", what, i, (int)m,
                  as_scalar ? " (scalars asked for)" : "");
            wrong++;
        }
        json_decref (v);
    }
    ok (wrong == 0, "%s: every answer is the built jobspec's", what);
    json_decref (spec);
    free (block);
}

static void test_find (void)
{
    struct jobspec_fields f;
    int answered = 0;
    json_t *v = (json_t *)1;
    const char *queue[] = {"attributes", "system", "queue"};

    memset (&f, 0, sizeof (f));
    find_matches_build (&f, "no fields", &answered);
    f.time_limit = 90;
    f.partition = "Debug";
    f.account = "Physics";
    f.wckey = "WK";
    f.work_dir = "/home/u";
    f.name = "a job";
    f.dependency = "afterok:12";
    f.qos = "normal";
    find_matches_build (&f, "the usual fields", &answered);
    f.account = "physics";
    f.wckey = "wk";
    find_matches_build (&f, "an account and wckey in lowercase", &answered);
    f.partition = "";
    f.account = "";
    f.name = "";
    f.dependency = "";
    f.work_dir = "bad \xff utf-8";
    find_matches_build (&f, "empty and bad strings", &answered);
    f.partition = "h\xc3\xa9";
    find_matches_build (&f, "UTF-8 beyond ASCII", &answered);
    {
        const char *cwd[] = {"attributes", "system", "cwd"};
        size_t len;
        void *block = jobspec_fields_save (&f, &len);
        struct jobspec_scalar scalar;
        ok (jobspec_fields_find (block, len, cwd, 3, &v, &scalar)
                    == JOBSPEC_MEMBER_ABSENT
                && v == NULL,
            "a field that is not UTF-8 is absent from the jobspec");
        ok (jobspec_fields_find (block, len, queue, 3, &v, &scalar)
                    == JOBSPEC_MEMBER_VALUE
                && !strcmp (json_string_value (v), "h\xc3\xa9"),
            "a field in UTF-8 beyond ASCII is there as it is, checked");
        json_decref (v);
        free (block);
    }
    memset (&f, 0, sizeof (f));
    f.dependency = "afterany:7";
    find_matches_build (&f, "a dependency alone", &answered);
    ok (answered >= 40, "most paths are answered without a build (%d)",
        answered);
    ok (scalars_told >= 12, "asked for, scalars are told as such (%d)",
        scalars_told);

    char junk[256] = {0};
    ok (jobspec_fields_find (junk, sizeof (junk), queue, 3, &v, NULL)
                == JOBSPEC_MEMBER_UNKNOWN
            && v == NULL,
        "bytes not saved here: unknown, no value");
}

int main (void)
{
    test_round_trip ();
    test_find ();
    done_testing ();
    return 0;
}
