/* src/slurm_adapter/jobspec_apply.c without slurmctld, for the wider
 * map (docs/jobspec.md): each new key applied to a job_desc at submit and as an
 * update of a job record, resources and tasks updates as Slurm's node
 * count, tasks and cpus per task, what Slurm cannot make refused with
 * the message the user sees, and a job_modify request read as keys.
 * (test_slurm_jobspec.c covers the keys from before.) */
#include <config.h>

#include <string.h>

#include "src/common/slurm_xlator.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

#include "jobspec.h"
#include "jobspec_apply.h"
#include "slurm_compat.h"
#include "pending_job_fixture.h"
#include "tap.h"

static jobtap_host_error_t err;
static char *text;

/* Apply the JSON updates to d (job NULL: at submit); 0 or -1 with err. */
static int apply (job_desc_msg_t *d, const job_record_t *job, const char *json)
{
    json_t *u = json_loads (json, 0, NULL);
    int rc;

    if (!u)
        bail_out ("bad test JSON %s", json);
    err.text[0] = '\0';
    rc = jobspec_apply_updates (d, job, u, NULL, &err);
    json_decref (u);
    return rc;
}

static const char *dump (json_t *o)
{
    free (text);
    text = o ? json_dumps (o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref (o);
    return text ? text : "(null)";
}

static void desc_init (job_desc_msg_t *d)
{
    slurm_init_job_desc_msg (d);
    d->user_id = 1000;
}

/* The xmalloc'd strings apply may have set. */
static void desc_free (job_desc_msg_t *d)
{
    xfree (d->std_out);
    xfree (d->std_err);
    xfree (d->mail_user);
    xfree (d->admin_comment);
    xfree (d->licenses);
    xfree (d->tres_per_node);
    xfree (d->tres_per_task);
    xfree (d->mem_per_tres);
}

static void test_submit (void)
{
    job_desc_msg_t d;

    desc_init (&d);
    ok (apply (&d, NULL,
               "{\"attributes.system.slurm.mem_per_cpu\": 200,"
               " \"attributes.system.slurm.max_nodes\": 3,"
               " \"attributes.system.slurm.time_min\": 61,"
               " \"attributes.system.slurm.begin_time\": 1700000000,"
               " \"attributes.system.slurm.nice\": -5,"
               " \"attributes.system.slurm.mail_type\": \"end,fail\","
               " \"attributes.system.slurm.mail_user\": \"a@b\","
               " \"attributes.system.slurm.admin_comment\": \"ac\","
               " \"attributes.system.slurm.licenses\": \"lic:2\","
               " \"attributes.system.slurm.tres_per_node\": \"gres:gpu:1\","
               " \"attributes.system.slurm.mem_per_tres\": \"gres:gpu:10\","
               " \"attributes.system.slurm.exclusive\": \"user\","
               " \"attributes.system.shell.options.output\": {"
               "   \"stdout\": {\"type\": \"file\", \"path\": \"/o\"},"
               "   \"stderr\": {\"type\": \"file\", \"path\": \"/e\"}}}") == 0,
        "every new key applies at submit");
    ok (d.pn_min_memory == (200 | MEM_PER_CPU), "mem_per_cpu: pn_min_memory "
                                                "per cpu");
    isint (d.max_nodes, 3, "max_nodes");
    isint (d.time_min, 2, "time_min 61 s is 2 minutes (rounded up)");
    isint (d.begin_time, 1700000000, "begin_time");
    ok (d.nice == NICE_OFFSET - 5, "nice -5 (offset)");
    isint (d.mail_type, MAIL_JOB_END | MAIL_JOB_FAIL, "mail_type as bits");
    is (d.mail_user, "a@b", "mail_user");
    is (d.admin_comment, "ac", "admin_comment");
    is (d.licenses, "lic:2", "licenses");
    is (d.tres_per_node, "gres:gpu:1", "tres_per_node");
    is (d.mem_per_tres, "gres:gpu:10", "mem_per_tres");
    isint (d.shared, JOB_SHARED_USER, "exclusive user");
    is (d.std_out, "/o", "Flux's stdout path is std_out");
    is (d.std_err, "/e", "Flux's stderr path is std_err");

    ok (apply (&d, NULL,
               "{\"attributes.system.slurm.mem_per_node\": 0,"
               " \"attributes.system.slurm.mem_per_cpu\": null}") == 0 &&
            d.pn_min_memory == 0,
        "mem_per_node 0 (all of it) in place of mem_per_cpu");
    ok (apply (&d, NULL, "{\"attributes.system.slurm.begin_time\": 0}") == 0 &&
            d.begin_time == 0,
        "begin_time 0 at submit: no delay");
    ok (apply (&d, NULL, "{\"attributes.system.slurm.time_min\": 0}") == 0 &&
            d.time_min == 0,
        "time_min 0");
#if !JOBTAP_SLURM_AT_LEAST(24, 11, 0)
    ok (apply (&d, NULL, "{\"attributes.system.slurm.exclusive\": \"topo\"}") <
            0,
        "exclusive topo before 24.11");
    is (err.text,
        "jobtap: jobspec update of attributes.system.slurm.exclusive: this "
        "Slurm release has no such exclusive",
        "... has no such exclusive");
#endif
    desc_free (&d);
}

static void test_resize_submit (void)
{
    job_desc_msg_t d;
    char *argv[] = {"run.sh", NULL};

    desc_init (&d);
    d.min_nodes = 1;
    d.max_nodes = 1;
    d.num_tasks = 2;
    d.argv = argv;
    d.argc = 1;
    ok (apply (&d, NULL,
               "{\"resources\": [{\"type\": \"node\", \"count\": 2,"
               " \"exclusive\": true, \"with\": [{\"type\": \"slot\","
               " \"count\": 3, \"label\": \"task\", \"with\": [{\"type\":"
               " \"core\", \"count\": 2}]}]}]}") == 0,
        "-N 1 -n 2 to 2 exclusive nodes of 3 slots of 2 cores");
    ok (d.min_nodes == 2 && d.max_nodes == 2, "... -N 2");
    isint (d.num_tasks, 6, "... -n 6 (one per slot)");
    ok (d.ntasks_per_node == NO_VAL16, "... no --ntasks-per-node: 6/2 is 3");
    ok (d.cpus_per_task == 2 && (d.bitflags & JOB_CPUS_SET), "... -c 2");
    ok (d.shared == JOB_SHARED_NONE, "... --exclusive");

    ok (apply (
            &d, NULL,
            "{\"resources\": [{\"type\": \"slot\", \"count\": 1, \"label\":"
            " \"task\", \"with\": [{\"type\": \"core\", \"count\": 1}]}]}") ==
            0,
        "to one slot of one core, no node level");
    ok (d.min_nodes == NO_VAL && d.max_nodes == NO_VAL,
        "... no node count (Slurm's default)");
    ok (d.num_tasks == 1 && d.cpus_per_task == 1,
        "... one task of one cpu (set before: stays set)");
    ok (d.shared == JOB_SHARED_NONE,
        "... --exclusive stays: no node level to say otherwise");

    desc_init (&d);
    d.min_nodes = 1;
    d.max_nodes = 1;
    d.argv = argv;
    d.argc = 1;
    ok (apply (&d, NULL,
               "{\"tasks\": [{\"command\": [\"run.sh\"], \"slot\": \"task\","
               " \"count\": {\"total\": 1}}], \"attributes.system.queue\":"
               " \"q\"}") == 0,
        "a tasks update with another key: {total: 1} on one slot");
    ok (d.num_tasks == NO_VAL && d.min_nodes == 1, "... as it was");
    xfree (d.partition);
    ok (apply (&d, NULL,
               "{\"tasks\": [{\"command\": [\"run.sh\"], \"slot\": \"task\","
               " \"count\": {\"total\": 2}}], \"attributes.system.queue\":"
               " \"q\"}") < 0,
        "2 tasks on one slot");
    is (err.text, "jobtap: jobspec update of tasks: more tasks than slots",
        "... more tasks than slots");
    ok (d.partition == NULL, "... and nothing else applies");
}

static void test_after_submit (void)
{
    job_desc_msg_t d;
    job_record_t j;
    jobtap_job_details_t det;

    record_init (&j, &det);
    desc_init (&d);
    ok (apply (&d, &j,
               "{\"resources\": [{\"type\": \"node\", \"count\": 3, \"with\":"
               " [{\"type\": \"slot\", \"count\": 2, \"label\": \"task\","
               " \"with\": [{\"type\": \"core\", \"count\": 1}]}]}]}") == 0,
        "a pending job of 2 nodes to 3");
    ok (d.min_nodes == 3 && d.max_nodes == 3, "... -N 3");
    isint (d.num_tasks, 6, "... 6 tasks");
    ok (d.ntasks_per_node == NO_VAL16 && d.cpus_per_task == NO_VAL16,
        "... nothing else changes");

    desc_init (&d);
    ok (apply (
            &d, &j,
            "{\"resources\": [{\"type\": \"slot\", \"count\": 4, \"label\":"
            " \"task\", \"with\": [{\"type\": \"core\", \"count\": 1}]}]}") ==
            0,
        "no node level after submit");
    ok (d.min_nodes == 1 && d.max_nodes == 0 && d.num_tasks == NO_VAL,
        "... slurmctld's minimum, no maximum: no node count; 4 tasks as "
        "before");

    desc_init (&d);
    ok (apply (&d, &j,
               "{\"resources\": [{\"type\": \"node\", \"count\": 2,"
               " \"exclusive\": true, \"with\": [{\"type\": \"slot\","
               " \"count\": 2, \"label\": \"task\", \"with\": [{\"type\":"
               " \"core\", \"count\": 1}]}]}]}") < 0,
        "an exclusive node after submit");
    is (err.text,
        "jobtap: jobspec update of resources: Slurm sets an exclusive node "
        "only at submit",
        "... only at submit");
    ok (apply (&d, &j, "{\"attributes.system.slurm.exclusive\": \"node\"}") < 0,
        "exclusive after submit");
    is (err.text,
        "jobtap: jobspec update of attributes.system.slurm.exclusive: Slurm "
        "sets it only at submit",
        "... only at submit");
#if !JOBTAP_UPDATE_JOB_HAS_STD_ERR
    ok (apply (&d, &j,
               "{\"attributes.system.shell.options.output.stderr.path\":"
               " \"/e\"}") < 0,
        "a stderr path after submit, on a release that cannot");
    is (err.text,
        "jobtap: jobspec update of "
        "attributes.system.shell.options.output.stderr.path: this Slurm "
        "release sets it only at submit",
        "... only at submit");
#endif
    ok (apply (&d, &j,
               "{\"attributes.system.shell.options.output.stdout.path\":"
               " \"/o\", \"attributes.system.slurm.begin_time\": 0}") == 0,
        "a stdout path and begin_time 0 after submit");
    is (d.std_out, "/o", "... std_out");
    ok (d.begin_time > 0, "... begin now (update_job takes 0 as unchanged)");
    xfree (d.std_out);

    j.job_state = JOB_RUNNING;
    ok (apply (&d, &j,
               "{\"tasks\": [{\"command\": [\"job\"], \"slot\":"
               " \"task\", \"count\": {\"total\": 3}}]}") < 0,
        "a running job");
    is (err.text,
        "jobtap: jobspec update of tasks: Slurm resizes only a pending "
        "job",
        "... is not resized");
}

static void test_from_modify (void)
{
    job_desc_msg_t d;
    job_record_t j;
    jobtap_job_details_t det;

    record_init (&j, &det);
    slurm_init_job_desc_msg (&d);
    d.pn_min_memory = 64 | MEM_PER_CPU;
    d.time_min = 3;
    d.mail_type = MAIL_JOB_BEGIN;
    d.mail_user = "m";
    d.nice = NICE_OFFSET + 2;
    d.std_out = "/o";
    d.admin_comment = "ac";
    d.begin_time = 1700000000;
    is (dump (jobspec_updates_from_desc (&d, &j)),
        "{\"attributes.system.shell.options.output.stdout.path\":\"/o\","
        "\"attributes.system.slurm.admin_comment\":\"ac\","
        "\"attributes.system.slurm.begin_time\":1700000000,"
        "\"attributes.system.slurm.mail_type\":\"BEGIN\","
        "\"attributes.system.slurm.mail_user\":\"m\","
        "\"attributes.system.slurm.mem_per_cpu\":64,"
        "\"attributes.system.slurm.nice\":2,"
        "\"attributes.system.slurm.time_min\":180.0}",
        "scontrol update MinMemoryCPU, TimeMin, MailType, MailUser, Nice, "
        "StdOut, AdminComment, StartTime as keys");

    slurm_init_job_desc_msg (&d);
    d.min_nodes = 3;
    d.max_nodes = 3;
    is (dump (jobspec_updates_from_desc (&d, &j)),
        "{\"resources\":[{\"count\":3,\"type\":\"node\",\"with\":[{\"count\":"
        "2,\"label\":\"task\",\"type\":\"slot\",\"with\":[{\"count\":1,"
        "\"type\":\"core\"}]}]}],\"tasks\":[{\"command\":[\"job\"],\"count\":"
        "{\"total\":4},\"slot\":\"task\"}]}",
        "scontrol update NumNodes=3: the new resources and tasks");
    slurm_init_job_desc_msg (&d);
    d.num_tasks = 4;
    is (dump (jobspec_updates_from_desc (&d, &j)), "{}",
        "NumTasks as it was: no key");
    d.cpus_per_task = 2;
    d.max_nodes = 4;
    is (dump (jobspec_updates_from_desc (&d, &j)),
        "{\"attributes.system.slurm.max_nodes\":4,\"resources\":[{\"count\":"
        "2,\"type\":\"node\",\"with\":[{\"count\":2,\"label\":\"task\","
        "\"type\":\"slot\",\"with\":[{\"count\":2,\"type\":\"core\"}]}]}]}",
        "CPUs/Task and a range");
}

int main (void)
{
    test_submit ();
    test_resize_submit ();
    test_after_submit ();
    test_from_modify ();
    free (text);
    done_testing ();
    return 0;
}
