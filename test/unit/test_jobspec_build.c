/* src/jobspec/jobspec_build.c: a job's fields -> jobspec, what both
 * slurmctld and jobtap-run build from. */
#include <stdlib.h>
#include <string.h>

#include "jobspec_build.h"
#include "jobspec_mail.h"
#include "tap.h"

static char *text;

/* The compact, sorted text of the value at a path ("attributes.system",
 * "resources.0") of o; takes the reference to o. */
static const char *dump_at (json_t *o, const char *path)
{
    json_t *v = o;
    char *copy = strdup (path), *save = NULL;
    for (char *k = strtok_r (copy, ".", &save); k && v;
         k = strtok_r (NULL, ".", &save))
        v = json_is_array (v) ? json_array_get (v, strtoul (k, NULL, 10))
                              : json_object_get (v, k);
    free (copy);
    free (text);
    text = v ? json_dumps (v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY)
             : NULL;
    json_decref (o);
    return text ? text : "(null)";
}

static const char *build_at (const struct jobspec_fields *f, const char *path)
{
    return dump_at (jobspec_build (f), path);
}

static void test_empty (void)
{
    struct jobspec_fields f;

    memset (&f, 0, sizeof (f));
    is (build_at (&f, ""),
        "{\"attributes\":{\"system\":{\"duration\":0.0}},\"resources\":[{"
        "\"count\":1,\"label\":\"task\",\"type\":\"slot\",\"with\":[{"
        "\"count\":1,\"type\":\"core\"}]}],\"tasks\":[{\"command\":[\"job\"],"
        "\"count\":{\"per_slot\":1},\"slot\":\"task\"}],\"version\":1}",
        "no fields: one slot of one core, duration 0 (a real), command job");
    f.time_limit = 2;
    is (build_at (&f, "attributes.system.duration"), "120.0",
        "the time limit in minutes is the duration in seconds");
}

static void test_strings (void)
{
    struct jobspec_fields f;

    memset (&f, 0, sizeof (f));
    f.partition = "";
    f.account = "";
    f.name = "";
    is (build_at (&f, "attributes.system"), "{\"duration\":0.0}",
        "empty strings are absent, as unset ones");
    f.qos = "high";
    f.reservation = "r1";
    f.licenses = "lic:2";
    f.tres_per_job = "gres:gpu:4";
    f.features = "a|b";
    f.nice = -7;
    is (build_at (&f, "attributes.system"),
        "{\"duration\":0.0,\"slurm\":{\"features\":\"a|b\",\"licenses\":"
        "\"lic:2\",\"nice\":-7,\"qos\":\"high\",\"reservation\":\"r1\","
        "\"tres_per_job\":\"gres:gpu:4\"}}",
        "Slurm's extras under slurm; features with | are no constraints");
}

static void test_dependency (void)
{
    struct jobspec_fields f;
    const char *want =
        "{\"dependencies\":[{\"scheme\":\"afterok\",\"value\":\"1\"},{"
        "\"scheme\":\"afterok\",\"value\":\"2\"},{\"scheme\":\"singleton\","
        "\"value\":\"\"}],\"duration\":0.0,\"slurm\":{\"dependency\":"
        "\"afterok:1,afterok:2?singleton\"}}";

    memset (&f, 0, sizeof (f));
    f.dependency = "afterok:1:2?singleton";
    is (build_at (&f, "attributes.system"), want, "a dependency as submitted");
    f.dependency =
        "afterok:1(unfulfilled),afterok:2(unfulfilled)?singleton(unfulfilled)";
    is (build_at (&f, "attributes.system"), want,
        "... and as slurmctld records it: the same");
    f.dependency = "expand:5";
    is (build_at (&f, "attributes.system"),
        "{\"duration\":0.0,\"slurm\":{\"dependency\":\"expand:5\"}}",
        "a scheme with no jobtap meaning is only in slurm.dependency");
}

static void test_shapes (void)
{
    struct jobspec_fields f;
    json_t *a, *b, *c;

    memset (&f, 0, sizeof (f));
    f.nodes = 3;
    f.name = "a";
    a = jobspec_build (&f);
    f.name = "b";
    b = jobspec_build (&f);
    f.ntasks = 4;
    c = jobspec_build (&f);
    ok (json_object_get (a, "resources") == json_object_get (b, "resources"),
        "jobs of one shape share their resources tree");
    ok (json_object_get (b, "resources") != json_object_get (c, "resources"),
        "another shape gets its own");
    is (dump_at (json_incref (a), "resources.0.with.0.count"), "1",
        "-N 3: one slot per node");
    is (dump_at (json_incref (a), "tasks.0.count"), "{\"per_slot\":1}",
        "... one task per slot");
    is (dump_at (json_incref (c), "resources.0.with.0.count"), "2",
        "-N 3 -n 4: two slots per node");
    is (dump_at (json_incref (c), "tasks.0.count"), "{\"total\":4}",
        "... 4 tasks in total");
    is (dump_at (json_incref (b), "tasks.0.command"), "[\"b\"]",
        "each keeps its own command");
    json_decref (a);
    json_decref (b);
    json_decref (c);
}

/* The wider map: memory, node ranges, time_min, mail, output,
 * admin comment, TRES beyond GPUs, kinds of exclusive. */
static void test_wider (void)
{
    struct jobspec_fields f;

    memset (&f, 0, sizeof (f));
    f.nodes = 1;
    f.max_nodes = 1;
    f.mem_per = JOBSPEC_MEM_PER_NODE;
    f.mem_mb = 0;
    f.time_min = 2;
    f.admin_comment = "ac";
    f.tres_per_socket = "gres:gpu:1";
    f.cpus_per_tres = "gres:gpu:4";
    f.mem_per_tres = "gres:gpu:1024";
    f.mail_type = JOBSPEC_MAIL_END | JOBSPEC_MAIL_BEGIN;
    f.mail_user = "ops@example.com";
    is (build_at (&f, "attributes.system.slurm"),
        "{\"admin_comment\":\"ac\",\"cpus_per_tres\":\"gres:gpu:4\","
        "\"mail_type\":\"BEGIN,END\",\"mail_user\":\"ops@example.com\","
        "\"mem_per_node\":0,\"mem_per_tres\":\"gres:gpu:1024\","
        "\"time_min\":120.0,\"tres_per_socket\":\"gres:gpu:1\"}",
        "--mem=0 (all of a node's), time_min in seconds, mail type as "
        "scontrol shows it; -N 1 is no range");
    f.max_nodes = 3;
    f.mem_per = JOBSPEC_MEM_PER_CPU;
    f.mem_mb = 512;
    f.mail_type = 0;
    f.admin_comment = f.tres_per_socket = f.cpus_per_tres = f.mem_per_tres =
        NULL;
    f.time_min = 0;
    is (build_at (&f, "attributes.system.slurm"),
        "{\"max_nodes\":3,\"mem_per_cpu\":512}",
        "-N 1-3 is max_nodes 3; --mem-per-cpu; no mail type, no mail user");
    is (build_at (&f, "resources.0.count"), "1", "... and a node count of 1");

    memset (&f, 0, sizeof (f));
    f.std_out = "/o/%j.out";
    is (build_at (&f, "attributes.system.shell"),
        "{\"options\":{\"output\":{\"stdout\":{\"path\":\"/o/%j.out\","
        "\"type\":\"file\"}}}}",
        "-o as flux submit --output writes it, Slurm's pattern kept");
    f.std_err = "/e";
    f.std_out = NULL;
    is (build_at (&f, "attributes.system.shell.options.output"),
        "{\"stderr\":{\"path\":\"/e\",\"type\":\"file\"}}", "-e alone");
    f.std_err = "";
    is (build_at (&f, "attributes.system"), "{\"duration\":0.0}",
        "an empty path is none");

    memset (&f, 0, sizeof (f));
    f.nodes = 1;
    f.exclusive = JOBSPEC_EXCLUSIVE_USER;
    is (build_at (&f, "attributes.system.slurm.exclusive"), "\"user\"",
        "--exclusive=user");
    is (build_at (&f, "resources.0.exclusive"), "(null)",
        "... is no exclusive node");
    f.exclusive = JOBSPEC_EXCLUSIVE_NODE;
    is (build_at (&f, "attributes.system.slurm.exclusive"), "\"node\"",
        "--exclusive is \"node\"");
    is (build_at (&f, "resources.0.exclusive"), "true",
        "... and an exclusive node");
}

static void test_mail (void)
{
    char buf[128];
    uint16_t bits = 0;

    is (jobspec_mail_type_text (0, buf, sizeof (buf)), "NONE", "0 is NONE");
    is (jobspec_mail_type_text (JOBSPEC_MAIL_TIME100 | JOBSPEC_MAIL_FAIL |
                                    JOBSPEC_MAIL_ARRAY_TASKS,
                                buf, sizeof (buf)),
        "ARRAY_TASKS,FAIL,TIME_LIMIT", "in scontrol's order");
    ok (jobspec_mail_type_parse ("end,Begin", &bits) == 0 &&
            bits == (JOBSPEC_MAIL_END | JOBSPEC_MAIL_BEGIN),
        "names in any case and order");
    ok (jobspec_mail_type_parse ("ALL", &bits) == 0 && bits == 0x050f,
        "ALL as sbatch: begin, end, fail, requeue, stage out, invalid "
        "dependency");
    ok (jobspec_mail_type_parse ("END,NONE", &bits) == 0 && bits == 0,
        "NONE ends the list");
    ok (jobspec_mail_type_parse ("END,SOON", &bits) < 0, "an unknown name");
    ok (jobspec_mail_type_parse ("", &bits) < 0, "an empty list");
}

int main (void)
{
    test_empty ();
    test_strings ();
    test_dependency ();
    test_shapes ();
    test_wider ();
    test_mail ();
    free (text);
    done_testing ();
    return 0;
}
