/* src/slurm_adapter/jobspec.c (and jobspec_apply.c) without slurmctld:
 * the jobspec of a job_desc with a stub partition table, the same
 * jobspec from the equivalent job record, --setattr attributes from the
 * SPANK environment, and jobspec updates applied back to a job_desc (or
 * refused with the message the user sees). */
#include <config.h>

#include <string.h>

#include "src/common/slurm_xlator.h"
#include "src/common/xmalloc.h"
#include "src/common/uid.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

#include "jobspec.h"
#include "jobspec_apply.h"
#include "jobspec_build.h"
#include "slurm_compat.h"
#include "tap.h"

/* Two partitions: "debug" (the default; no DefaultTime, MaxTime 2 hours)
 * and "long" (DefaultTime 30 minutes). */
static const char *stub_default (void *arg)
{
    (void)arg;
    return "debug";
}

static bool
stub_limits (const char *name, uint32_t *def, uint32_t *max, void *arg)
{
    int *calls = arg;
    (*calls)++;
    if (!name || !strcmp (name, "debug")) {
        *def = NO_VAL;
        *max = 120;
        return true;
    }
    if (!strcmp (name, "long")) {
        *def = 30;
        *max = INFINITE;
        return true;
    }
    return false;
}

static int lookups;
static const struct jobspec_partitions parts = {
    .default_name = stub_default,
    .time_limits = stub_limits,
    .arg = &lookups,
};

static char *text;

/* The compact, sorted text of a JSON value (valid until the next call);
 * takes the reference. */
static const char *dump (json_t *o)
{
    free (text);
    text = o ? json_dumps (o, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY)
             : NULL;
    json_decref (o);
    return text ? text : "(null)";
}

/* The value at a path ("attributes.system.duration", "resources.0") of
 * o, as text; takes the reference to o. */
static const char *dump_at (json_t *o, const char *path)
{
    json_t *v = o;
    char *copy = xstrdup (path), *save = NULL;
    for (char *k = strtok_r (copy, ".", &save); k && v;
         k = strtok_r (NULL, ".", &save))
        v = json_is_array (v) ? json_array_get (v, strtoul (k, NULL, 10))
                              : json_object_get (v, k);
    xfree (copy);
    json_incref (v);
    json_decref (o);
    return dump (v);
}

/* The value at a path of the jobspec of d, as text. */
static const char *spec_at (const job_desc_msg_t *d, const char *path)
{
    return dump_at (jobspec_from_desc_parts (d, &parts, NULL, NULL), path);
}

static void desc_init (job_desc_msg_t *d)
{
    slurm_init_job_desc_msg (d);
    d->name = "job";
    d->user_id = 1000;
}

static void test_defaults (void)
{
    job_desc_msg_t d;

    desc_init (&d);
    lookups = 0;
    is (dump (jobspec_from_desc_parts (&d, &parts, NULL, NULL)),
        "{\"attributes\":{\"system\":{\"duration\":7200.0,\"job\":{\"name\":"
        "\"job\"},\"queue\":\"debug\"}},\"resources\":[{\"count\":1,"
        "\"label\":\"task\",\"type\":\"slot\",\"with\":[{\"count\":1,"
        "\"type\":\"core\"}]}],\"tasks\":[{\"command\":[\"job\"],\"count\":{"
        "\"per_slot\":1},\"slot\":\"task\"}],\"version\":1}",
        "no options: the default partition and its MaxTime, one slot of "
        "one core, no Slurm sentinel");
    ok (lookups > 0, "the partition limits came from the lookup passed in");

    d.partition = "long,debug";
    is (spec_at (&d, "attributes.system.queue"), "\"long,debug\"",
        "-p long,debug: the list is the queue");
    is (spec_at (&d, "attributes.system.duration"), "1800.0",
        "... and the first partition's DefaultTime the duration");
    d.partition = "nosuch";
    is (spec_at (&d, "attributes.system.duration"), "0.0",
        "an unknown partition gives no limit (duration 0)");
    d.time_limit = 90;
    is (spec_at (&d, "attributes.system.duration"), "5400.0",
        "-t 90 is 5400 seconds, a real");
    d.time_limit = INFINITE;
    is (spec_at (&d, "attributes.system.duration"), "0.0",
        "-t unlimited is duration 0");
}

static void test_resources (void)
{
    job_desc_msg_t d;

    desc_init (&d);
    d.min_nodes = 2;
    d.num_tasks = 5;
    d.cpus_per_task = 3;
    is (spec_at (&d, "resources"),
        "[{\"count\":2,\"type\":\"node\",\"with\":[{\"count\":3,\"label\":"
        "\"task\",\"type\":\"slot\",\"with\":[{\"count\":3,\"type\":"
        "\"core\"}]}]}]",
        "-N 2 -n 5 -c 3: 2 nodes of 3 slots of 3 cores");
    is (spec_at (&d, "tasks"),
        "[{\"command\":[\"job\"],\"count\":{\"total\":5},\"slot\":\"task\"}]",
        "... and 5 tasks in total");
    d.ntasks_per_node = 4;
    d.num_tasks = NO_VAL;
    is (spec_at (&d, "resources"),
        "[{\"count\":2,\"type\":\"node\",\"with\":[{\"count\":4,\"label\":"
        "\"task\",\"type\":\"slot\",\"with\":[{\"count\":3,\"type\":"
        "\"core\"}]}]}]",
        "--ntasks-per-node 4: 4 slots per node");
    is (spec_at (&d, "tasks"),
        "[{\"command\":[\"job\"],\"count\":{\"per_slot\":1},\"slot\":"
        "\"task\"}]",
        "... one task per slot");

    desc_init (&d);
    d.num_tasks = 2;
    d.shared = JOB_SHARED_NONE;
    is (spec_at (&d, "resources"),
        "[{\"count\":2,\"label\":\"task\",\"type\":\"slot\",\"with\":[{"
        "\"count\":1,\"type\":\"core\"}]}]",
        "-n 2 --exclusive with no -N: no node level to mark");
    d.min_nodes = 1;
    is (spec_at (&d, "resources"),
        "[{\"count\":1,\"exclusive\":true,\"type\":\"node\",\"with\":[{"
        "\"count\":2,\"label\":\"task\",\"type\":\"slot\",\"with\":[{"
        "\"count\":1,\"type\":\"core\"}]}]}]",
        "-N 1 -n 2 --exclusive: an exclusive node");
}

static void test_gpus (void)
{
    job_desc_msg_t d;

    desc_init (&d);
    d.num_tasks = 2;
    d.tres_per_task = "gres:gpu:2";
    is (spec_at (&d, "resources"),
        "[{\"count\":2,\"label\":\"task\",\"type\":\"slot\",\"with\":[{"
        "\"count\":1,\"type\":\"core\"},{\"count\":2,\"type\":\"gpu\"}]}]",
        "--gpus-per-task 2: 2 gpus per slot");
    is (spec_at (&d, "attributes.system.slurm.tres_per_task"), "\"gres:gpu:2\"",
        "... the TRES string under slurm");
    d.tres_per_task = NULL;
    d.min_nodes = 1;
    d.tres_per_node = "gres:gpu:a100:4,gres:nic:1";
    is (spec_at (&d, "resources.0.with.0.with"),
        "[{\"count\":1,\"type\":\"core\"},{\"count\":2,\"type\":\"gpu\"}]",
        "--gres gpu:a100:4 on 1 node of 2 slots: 2 gpus per slot");
    d.tres_per_node = "gres:gpu:3";
    is (spec_at (&d, "resources.0.with.0.with"),
        "[{\"count\":1,\"type\":\"core\"}]",
        "3 gpus per node over 2 slots do not divide: none per slot");
    d.tres_per_node = "gpu";
    d.num_tasks = 1;
    is (spec_at (&d, "resources.0.with.0.with.1"),
        "{\"count\":1,\"type\":\"gpu\"}", "a bare gpu is one");
}

static void test_attributes (void)
{
    job_desc_msg_t d;
    char *argv[] = {"run.sh", "-x", NULL};

    desc_init (&d);
    d.dependency = "afterok:1:2?singleton,aftercorr:3";
    is (spec_at (&d, "attributes.system.dependencies"),
        "[{\"scheme\":\"afterok\",\"value\":\"1\"},{\"scheme\":\"afterok\","
        "\"value\":\"2\"},{\"scheme\":\"singleton\",\"value\":\"\"}]",
        "dependencies: RFC 26 entries for the jobtap schemes");
    is (spec_at (&d, "attributes.system.slurm.dependency"),
        "\"afterok:1,afterok:2?singleton,aftercorr:3\"",
        "... and Slurm's string, one id per entry");
    d.dependency = "42";
    is (spec_at (&d, "attributes.system.dependencies"),
        "[{\"scheme\":\"afterany\",\"value\":\"42\"}]",
        "a bare id is afterany");

    desc_init (&d);
    d.account = "MyAcct";
    d.wckey = "WK";
    d.work_dir = "/tmp";
    d.features = "a&b";
    d.nice = NICE_OFFSET + 5;
    d.comment = "hi";
    d.begin_time = 1700000000;
    d.argv = argv;
    d.argc = 2;
    is (spec_at (&d, "attributes.system"),
        "{\"bank\":\"myacct\",\"constraints\":{\"properties\":[\"a\",\"b\"]},"
        "\"cwd\":\"/tmp\",\"duration\":7200.0,\"job\":{\"name\":\"job\"},"
        "\"project\":\"wk\",\"queue\":\"debug\",\"slurm\":{\"begin_time\":"
        "1700000000,\"comment\":\"hi\",\"features\":\"a&b\",\"nice\":5}}",
        "account and wckey lowercased, cwd, constraints, slurm extras");
    is (spec_at (&d, "tasks"),
        "[{\"command\":[\"run.sh\",\"-x\"],\"count\":{\"per_slot\":1},"
        "\"slot\":\"task\"}]",
        "the script and its arguments are the command");
}

/* The job_desc above as slurmctld records it: the same jobspec. */
static void test_record (void)
{
    job_desc_msg_t d;
    job_record_t j;
    jobtap_job_details_t det;

    desc_init (&d);
    d.min_nodes = 1;
    d.num_tasks = 2;
    d.partition = "long";
    d.time_limit = 30;
    d.dependency = "afterok:7:8";
    d.shared = JOB_SHARED_NONE;
    d.nice = NICE_OFFSET - 3;

    memset (&j, 0, sizeof (j));
    memset (&det, 0, sizeof (det));
    j.details = &det;
    j.name = "job";
    j.partition = "long";
    j.time_limit = 30;
    det.min_nodes = 1;
    det.max_nodes = 1;
    det.num_tasks = 2;
    det.orig_cpus_per_task = NO_VAL16;
    det.ntasks_per_node = NO_VAL16;
    det.whole_node = WHOLE_NODE_REQUIRED;
    det.share_res = 0;
    det.nice = NICE_OFFSET - 3;
    det.dependency = "afterok:7(unfulfilled),afterok:8(unfulfilled)";

    char *want = xstrdup (dump (jobspec_from_desc_parts (&d, &parts, NULL, NULL)));
    is (dump (jobspec_from_record (&j, NULL, NULL)), want,
        "a job record gives the jobspec of its job_desc");
    like (want, "\"nice\":-3", "(a negative nice)");
    xfree (want);
}

/* A record of a job "job" in partition debug: two tasks on one to two
 * nodes, nothing else asked for, as slurmctld keeps it. */
static void record_init (job_record_t *j, jobtap_job_details_t *det)
{
    memset (j, 0, sizeof (*j));
    memset (det, 0, sizeof (*det));
    j->details = det;
    j->name = "job";
    j->partition = "debug";
    det->min_nodes = 1;
    det->max_nodes = 2;
    det->num_tasks = 2;
    det->orig_cpus_per_task = NO_VAL16;
    det->ntasks_per_node = NO_VAL16;
    det->share_res = NO_VAL8;
    det->nice = NICE_OFFSET;
}

/* A node count slurmctld made up is not the user's: 26.05 sets max_nodes
 * to the task count when none was asked for (JOB_IMPLICIT_MAX_NODES). */
static void test_implicit_max_nodes (void)
{
#ifdef JOB_IMPLICIT_MAX_NODES
    job_desc_msg_t d;
    job_record_t j;
    jobtap_job_details_t det;

    desc_init (&d);
    d.num_tasks = 2;
    record_init (&j, &det);
    j.bit_flags = JOB_IMPLICIT_MAX_NODES;
    char *want = xstrdup (spec_at (&d, "resources"));
    is (dump_at (jobspec_from_record (&j, NULL, NULL), "resources"), want,
        "a max_nodes slurmctld set itself gives no node count");
    xfree (want);
    j.bit_flags = 0;
    like (dump_at (jobspec_from_record (&j, NULL, NULL), "resources"),
          "\"type\":\"node\"", "one the user asked for does");
#else
    ok (1, "# SKIP no implicit max_nodes before Slurm 26.05");
#endif
}

/* Job arrays: the submission carries its tasks as asked; a record the
 * pending tasks it still holds; a task its array and index. */
static void test_arrays (void)
{
    job_desc_msg_t d;
    job_record_t j;
    jobtap_job_details_t det;
    job_array_struct_t a;

    desc_init (&d);
    d.array_inx = "1-4%2";
    like (dump (jobspec_from_desc_parts (&d, &parts, NULL, NULL)),
          "\"slurm\":\\{\"array\":\"1-4%2\"\\}",
          "sbatch --array=1-4%%2: attributes.system.slurm.array as given");

    memset (&j, 0, sizeof (j));
    memset (&det, 0, sizeof (det));
    memset (&a, 0, sizeof (a));
    j.details = &det;
    j.job_id = 7;
    j.array_job_id = 7;
    j.array_task_id = NO_VAL;
    j.array_recs = &a;
    det.orig_cpus_per_task = NO_VAL16;
    det.ntasks_per_node = NO_VAL16;
    det.nice = NICE_OFFSET;
    a.task_id_bitmap = bit_alloc (8);
    bit_nset (a.task_id_bitmap, 1, 3);
    bit_set (a.task_id_bitmap, 5);
    a.max_run_tasks = 2;
    const char *meta = dump (jobspec_from_record (&j, NULL, NULL));
    like (meta, "\"slurm\":\\{\"array\":\"1-3,5%2\"\\}",
          "the array's record: its pending tasks and throttle");
    ok (!strstr (meta, "array_job_id"), "and no task index");
    a.max_run_tasks = 0;
    like (dump (jobspec_from_record (&j, NULL, NULL)), "\"array\":\"1-3,5\"",
          "no throttle: no %%");

    /* split off: a new id, the array's id and its index */
    j.job_id = 9;
    j.array_task_id = 4;
    j.array_recs = NULL;
    const char *task = dump (jobspec_from_record (&j, NULL, NULL));
    like (task, "\"array_job_id\":7", "a task: attributes.system.slurm.array_job_id");
    like (task, "\"array_task_id\":4", "and .array_task_id");
    ok (!strstr (task, "\"array\""), "and no task list");

    /* the last task is the array's own record */
    j.job_id = 7;
    j.array_task_id = 0;
    j.array_recs = &a;
    bit_clear_all (a.task_id_bitmap);
    FREE_NULL_BITMAP (a.task_id_bitmap);
    const char *last = dump (jobspec_from_record (&j, NULL, NULL));
    like (last, "\"array_job_id\":7,\"array_task_id\":0",
          "the last task (task 0) keeps the array's id");
    ok (!strstr (last, "\"array\""), "and has no task list");

    j.array_job_id = 0;
    j.array_task_id = NO_VAL;
    j.array_recs = NULL;
    ok (!strstr (dump (jobspec_from_record (&j, NULL, NULL)), "array"),
        "a plain job has none of them");
}

static void test_apply (void)
{
    job_desc_msg_t d;
    jobtap_host_error_t err = {""};
    json_t *u;

    desc_init (&d);
    d.name = xstrdup ("job");
    u = json_pack (
        "{s:f s:s s:s s:{s:s} s:{s:[ss]} s:s s:s}",
        "attributes.system.duration", 90.0, "attributes.system.queue", "batch",
        "attributes.system.bank", "Ops", "attributes.system.job", "name",
        "renamed", "attributes.system.constraints", "properties", "a", "b",
        "attributes.system.slurm.comment", "c", "attributes.system.cwd", "/w");
    ok (jobspec_apply_updates (&d, NULL, u, NULL, &err) == 0 && !err.text[0],
        "updates with a Slurm equivalent apply");
    json_decref (u);
    isint (d.time_limit, 2, "duration 90 s is 2 minutes (rounded up)");
    is (d.partition, "batch", "queue is the partition");
    is (d.account, "Ops", "bank is the account (slurmctld lowercases it)");
    is (d.name, "renamed", "a nested job.name update is the name");
    is (d.features, "a&b", "constraints {properties} are features a&b");
    is (d.comment, "c", "slurm.comment is the comment");
    is (d.work_dir, "/w", "cwd is the work dir");

    u = json_pack ("{s:i}", "attributes.system.duration", 0);
    ok (jobspec_apply_updates (&d, NULL, u, NULL, &err) == 0,
        "duration 0 applies");
    json_decref (u);
    ok (d.time_limit == INFINITE, "... as an unlimited time limit");
    u = json_pack ("{s:f}", "attributes.system.duration", 0.5);
    ok (jobspec_apply_updates (&d, NULL, u, NULL, &err) == 0
            && d.time_limit == 1,
        "half a second is one minute, never 0 (unlimited)");
    json_decref (u);

    struct {
        const char *json, *msg;
    } refused[] = {
        {"{\"attributes.system.queue\": \"x\", \"resources\": []}",
         "jobtap: jobspec update of resources: no Slurm request has this "
         "shape (Slurm sets the node count, the slots per node and the "
         "cores per slot; GPUs through attributes.system.slurm.tres_per_node "
         "or tres_per_task)"},
        {"{\"attributes.system.frobnicate\": 1}",
         "jobtap: jobspec update of attributes.system.frobnicate has no "
         "Slurm equivalent"},
        {"{\"attributes\": {\"system\": {\"job\": {\"name\": \"x\", "
         "\"id\": 1}}}}",
         "jobtap: jobspec update of attributes.system.job.id has no Slurm "
         "equivalent"},
        {"{\"attributes.system.duration\": -1}",
         "jobtap: jobspec update of attributes.system.duration: invalid "
         "value -1"},
        {"{\"attributes.system.queue\": 5}",
         "jobtap: jobspec update of attributes.system.queue: invalid value "
         "5"},
        {"{\"attributes.system.constraints\": {\"properties\": [1]}}",
         "jobtap: jobspec update of attributes.system.constraints: invalid "
         "value {\"properties\":[1]}"},
    };
    for (size_t i = 0; i < sizeof (refused) / sizeof (refused[0]); i++) {
        u = json_loads (refused[i].json, 0, NULL);
        err.text[0] = '\0';
        ok (jobspec_apply_updates (&d, NULL, u, NULL, &err) == -1,
            "refused: %s", refused[i].json);
        is (err.text, refused[i].msg, "... with the message the user sees");
        json_decref (u);
    }
    is (d.partition, "batch", "a refused update leaves the job unchanged");
    is (d.name, "renamed", "... every field of it");
    xfree (d.partition);
    xfree (d.account);
    xfree (d.name);
    xfree (d.features);
    xfree (d.comment);
    xfree (d.work_dir);
}

static void test_updates_from_desc (void)
{
    job_desc_msg_t d;

    slurm_init_job_desc_msg (&d);
    is (dump (jobspec_updates_from_desc (&d, NULL)), "{}",
        "an empty scontrol update changes no key");
    d.time_limit = 60;
    d.partition = "p";
    d.account = "ACC";
    d.features = "f";
    d.dependency = "afterok:1";
    is (dump (jobspec_updates_from_desc (&d, NULL)),
        "{\"attributes.system.bank\":\"acc\",\"attributes.system.duration\":"
        "3600.0,\"attributes.system.queue\":\"p\","
        "\"attributes.system.slurm.dependency\":\"afterok:1\","
        "\"attributes.system.slurm.features\":\"f\"}",
        "scontrol update fields as jobspec keys");
    d.time_limit = INFINITE;
    is (spec_at (&d, "attributes.system.duration"), "0.0",
        "(unlimited is duration 0 in a jobspec)");
    json_t *u = jobspec_updates_from_desc (&d, NULL);
    is (dump (json_incref (json_object_get (u, "attributes.system.duration"))),
        "0.0", "TimeLimit=UNLIMITED is duration 0");
    json_decref (u);
}

/* The wider map read at submit and from the record alike. */
static void test_wider (void)
{
    job_desc_msg_t d;
    job_record_t j;
    jobtap_job_details_t det;
    char *argv[] = {"run.sh", NULL};

    desc_init (&d);
    d.pn_min_memory = MEM_PER_CPU;
    is (spec_at (&d, "attributes.system.slurm"), "{\"mem_per_node\":0}",
        "--mem-per-cpu=0 is --mem=0, as slurmctld maps it");
    d.pn_min_memory = 250 | MEM_PER_CPU;
    is (spec_at (&d, "attributes.system.slurm"), "{\"mem_per_cpu\":250}",
        "--mem-per-cpu=250");
    d.mail_type = MAIL_JOB_END;
    d.pn_min_memory = NO_VAL64;
    char *user = uid_to_string (1000);
    char *want =
        xstrdup_printf ("{\"mail_type\":\"END\",\"mail_user\":\"%s\"}", user);
    is (spec_at (&d, "attributes.system.slurm"), want,
        "--mail-type with no --mail-user: the user, as slurmctld fills in");
    xfree (want);
    xfree (user);

    desc_init (&d);
    d.min_nodes = 1;
    d.max_nodes = 2;
    d.num_tasks = 2;
    d.time_limit = 10;
    d.time_min = 5;
    d.pn_min_memory = 100;
    d.shared = JOB_SHARED_USER;
    d.mail_type = MAIL_JOB_BEGIN | MAIL_JOB_END;
    d.mail_user = "ops@example.com";
    d.std_out = "/tmp/o-%j";
    d.std_err = "/tmp/e";
    d.admin_comment = "ac";
    d.licenses = "lic:1";
    d.tres_per_node = "gres:gpu:1";
    d.tres_per_socket = "gres:gpu:1";
    d.cpus_per_tres = "gres:gpu:1";
    d.mem_per_tres = "gres:gpu:100";
    d.argv = argv;
    d.argc = 1;
    is (spec_at (&d, "attributes.system.slurm"),
        "{\"admin_comment\":\"ac\",\"cpus_per_tres\":\"gres:gpu:1\","
        "\"exclusive\":\"user\",\"licenses\":\"lic:1\",\"mail_type\":"
        "\"BEGIN,END\",\"mail_user\":\"ops@example.com\",\"max_nodes\":2,"
        "\"mem_per_node\":100,\"mem_per_tres\":\"gres:gpu:100\","
        "\"time_min\":300.0,\"tres_per_node\":\"gres:gpu:1\","
        "\"tres_per_socket\":\"gres:gpu:1\"}",
        "memory, a node range, time_min, mail, exclusive=user, TRES");
    is (spec_at (&d, "attributes.system.shell.options.output"),
        "{\"stderr\":{\"path\":\"/tmp/e\",\"type\":\"file\"},\"stdout\":{"
        "\"path\":\"/tmp/o-%j\",\"type\":\"file\"}}",
        "-o and -e as Flux's output files");
    is (spec_at (&d, "resources.0.exclusive"), "(null)",
        "--exclusive=user is no exclusive node");

    /* as slurmctld records it: DefMemPerCPU would be in pn_min_memory
     * without JOB_MEM_SET; the user name in mail_user without a type */
    record_init (&j, &det);
    j.time_limit = 10;
    j.time_min = 5;
    det.whole_node = WHOLE_NODE_USER;
    det.pn_min_memory = det.orig_pn_min_memory = 100;
    j.bit_flags = JOB_MEM_SET;
    j.mail_type = MAIL_JOB_BEGIN | MAIL_JOB_END;
    j.mail_user = "ops@example.com";
    det.std_out = "/tmp/o-%j";
    det.std_err = "/tmp/e";
    j.admin_comment = "ac";
#if JOBTAP_SLURM_AT_LEAST(24, 11, 0)
    j.lic_req = "lic:1";
    j.licenses = "lic:1,other:1";
#else
    j.licenses = "lic:1";
#endif
    j.tres_per_node = "gres:gpu:1";
    j.tres_per_socket = "gres:gpu:1";
    j.cpus_per_tres = "gres:gpu:1";
    j.mem_per_tres = "gres:gpu:100";
    det.argv = argv;
    det.argc = 1;
    want = xstrdup (dump (jobspec_from_desc_parts (&d, &parts, NULL, NULL)));
    is (dump (jobspec_from_record (&j, NULL, NULL)), want,
        "the record gives the same jobspec");
    xfree (want);
    j.bit_flags = 0;
    j.mail_type = 0;
    is (dump_at (jobspec_from_record (&j, NULL, NULL),
                 "attributes.system.slurm.mem_per_node"),
        "(null)", "memory slurmctld filled in (no JOB_MEM_SET) is absent");
    is (dump_at (jobspec_from_record (&j, NULL, NULL), "attributes.system.slurm.mail_user"),
        "(null)", "a mail_user with no mail type is absent");
}

/* jobspec_fields_from_desc writes every member (it has no memset): the
 * fields of a struct full of garbage before are those of a zeroed one. */
static void test_every_field (void)
{
    job_desc_msg_t d;
    struct jobspec_fields zeroed, garbage;
    char *mail_user;

    desc_init (&d);
    memset (&zeroed, 0, sizeof (zeroed));
    memset (&garbage, 0x5a, sizeof (garbage));
    jobspec_fields_from_desc (&d, &parts, &zeroed, &mail_user);
    jobspec_fields_from_desc (&d, &parts, &garbage, &mail_user);
    char *want = xstrdup (dump (jobspec_build (&zeroed)));
    is (dump (jobspec_build (&garbage)), want,
        "every member of the fields is written");
    xfree (want);
}

/* 24.11's sbatch -c N also sends "cpu=N" first in tres_per_task; the
 * jobspec is the same on every release (slurm_compat.h). */
static void test_tres_per_task_cpu (void)
{
    job_desc_msg_t d;

    desc_init (&d);
    d.num_tasks = 2;
    d.cpus_per_task = 2;
    d.tres_per_task = "cpu=2,gres:gpu:1";
#if JOBTAP_SLURM_AT_LEAST(24, 11, 0)
    is (spec_at (&d, "attributes.system.slurm.tres_per_task"), "\"gres:gpu:1\"",
        "24.11: cpu=2 is left out of tres_per_task (cpus_per_task has it)");
    is (spec_at (&d, "resources.0.with"),
        "[{\"count\":2,\"type\":\"core\"},{\"count\":1,\"type\":\"gpu\"}]",
        "... and the slot still has 2 cores and its gpu");
    d.tres_per_task = "cpu=2";
    is (spec_at (&d, "attributes.system.slurm.tres_per_task"), "(null)",
        "24.11: tres_per_task of cpu=2 alone is no tres_per_task");
#else
    is (spec_at (&d, "attributes.system.slurm.tres_per_task"),
        "\"cpu=2,gres:gpu:1\"", "22.05 sends no cpu= entry: kept as given");
#endif
}

/* --setattr attributes, in the SPANK environment spank_jobtap.so fills:
 * merged from the request and from the record alike; what is bad is
 * logged and left out, never a rejection. */
static void test_setattr (void)
{
    job_desc_msg_t d;
    job_record_t j;
    jobtap_job_details_t det;
    char *env[] = {"SLURM_JOBTAP_SUBMIT=1:2:16:0",
                   "SLURM_JOBTAP_SETATTR={\"bank-check\":\"ok\",\"limit\":5,"
                   "\"duration\":1}",
                   NULL};
    char *bad[] = {"SLURM_JOBTAP_SETATTR=not json", NULL};

    desc_init (&d);
    d.time_limit = 30;
    d.spank_job_env = env;
    d.spank_job_env_size = 2;
    is (spec_at (&d, "attributes.system"),
        "{\"bank-check\":\"ok\",\"duration\":1800.0,\"job\":{\"name\":"
        "\"job\"},\"limit\":5,\"queue\":\"debug\"}",
        "a request's attributes are in attributes.system; its duration is "
        "Slurm's, not the one in the set");

    memset (&j, 0, sizeof (j));
    memset (&det, 0, sizeof (det));
    j.details = &det;
    j.job_id = 42;
    j.name = "job";
    j.partition = "debug";
    j.time_limit = 30;
    det.orig_cpus_per_task = NO_VAL16;
    det.ntasks_per_node = NO_VAL16;
    det.num_tasks = NO_VAL;
    det.min_nodes = 1;
    det.nice = NICE_OFFSET;
    j.spank_job_env = env;
    j.spank_job_env_size = 2;
    char *want = xstrdup (dump (jobspec_from_desc_parts (&d, &parts, NULL, NULL)));
    is (dump (jobspec_from_record (&j, NULL, NULL)), want,
        "the job record gives the same jobspec");
    xfree (want);

    d.spank_job_env = bad;
    d.spank_job_env_size = 1;
    is (spec_at (&d, "attributes.system"),
        "{\"duration\":1800.0,\"job\":{\"name\":\"job\"},\"queue\":"
        "\"debug\"}",
        "a set that is not JSON is left out (and logged): the job goes on");
    j.spank_job_env = bad;
    j.spank_job_env_size = 1;
    is (dump_at (jobspec_from_record (&j, NULL, NULL), "attributes.system.limit"), "(null)",
        "from a record too");
}

/* Urgency from a job record: a user's or an operator's hold is 0, as
 * job_modify makes it live; the shim's own hold and a released job 16. */
static void test_urgency_from_record (void)
{
    job_record_t j;

    memset (&j, 0, sizeof (j));
    j.priority = 0;
    j.state_reason = WAIT_HELD_USER;
    isint (jobspec_urgency_from_record (&j), 0, "JobHeldUser: urgency 0");
    j.state_reason = WAIT_HELD;
    isint (jobspec_urgency_from_record (&j), 0,
           "JobHeldAdmin (an operator's hold): urgency 0");
    j.state_desc = "jobtap: wait for release-3";
    isint (jobspec_urgency_from_record (&j), 16,
           "held by the shim (its reason): urgency 16");
    j.state_desc = NULL;
    j.priority = 5;
    isint (jobspec_urgency_from_record (&j), 16, "not held: urgency 16");
}

/* A submission's updates checked once for the object they are: the next
 * submission bringing that object applies them unchecked, another object
 * is checked, and clearing lets go of what the memo held. */
static void test_apply_memo (void)
{
    struct apply_memo memo = APPLY_MEMO_INIT;
    json_t *u = json_pack ("{s:s}", "attributes.system.queue", "batch");
    json_t *bad = json_pack ("{s:s}", "attributes.system.nope", "x");
    jobtap_host_error_t err = {""};
    job_desc_msg_t d;
    int applied = 0;

    for (int i = 0; i < 2; i++) {
        desc_init (&d);
        applied += jobspec_apply_updates (&d, NULL, u, &memo, &err) == 0
                   && d.partition && !strcmp (d.partition, "batch");
        xfree (d.partition);
    }
    ok (applied == 2 && memo.updates == u && u->refcount == 3,
        "memo: the same object applied twice, kept (refcount %zu)",
        u->refcount);
    desc_init (&d);
    ok (jobspec_apply_updates (&d, NULL, bad, &memo, &err) < 0
            && strstr (err.text, "has no Slurm equivalent")
            && memo.updates == u && !d.partition,
        "memo: another object is checked: %s", err.text);
    apply_memo_clear (&memo);
    ok (!memo.updates && u->refcount == 1,
        "memo: cleared, its references let go");
    json_decref (u);
    json_decref (bad);
}

int main (void)
{
    test_defaults ();
    test_urgency_from_record ();
    test_resources ();
    test_gpus ();
    test_tres_per_task_cpu ();
    test_attributes ();
    test_record ();
    test_implicit_max_nodes ();
    test_arrays ();
    test_wider ();
    test_every_field ();
    test_apply ();
    test_apply_memo ();
    test_updates_from_desc ();
    test_setattr ();
    free (text);
    done_testing ();
    return 0;
}
