/* src/jobspec/jobspec_resize.c: a resources or tasks update as the node
 * count, task count and cores per task that build it back, or the
 * message that says why no Slurm request does. */
#include <stdlib.h>
#include <string.h>

#include "jobspec_build.h"
#include "jobspec_resize.h"
#include "tap.h"

static struct jobspec_fields out;
static jobtap_host_error_t err;

/* Resize now by the JSON updates (already flat); the result in out or
 * err.text (empty unless it failed). */
static int resize (const struct jobspec_fields *now, const char *json)
{
    json_t *flat = json_loads (json, 0, NULL);
    int rc;

    err.text[0] = '\0';
    if (!flat)
        bail_out ("bad test JSON %s", json);
    rc = jobspec_resize (now, flat, &out, &err);
    json_decref (flat);
    return rc;
}

#define SLOT(n, cores)                                                         \
    "{\"type\":\"slot\",\"count\":" #n ",\"label\":\"task\",\"with\":[{"       \
    "\"type\":\"core\",\"count\":" #cores "}]}"
#define NODES(n, slot)                                                         \
    "{\"resources\":[{\"type\":\"node\",\"count\":" #n ",\"with\":[" slot "]}" \
                                                                          "]}"

static void test_nodes (void)
{
    struct jobspec_fields now;

    memset (&now, 0, sizeof (now));
    now.nodes = 2;
    now.max_nodes = 2;
    now.ntasks = 4;
    ok (resize (&now, NODES (3, SLOT (2, 1))) == 0, "-N 2 -n 4 to 3 nodes");
    ok (out.nodes == 3 && out.max_nodes == 3, "... 3 nodes, no range");
    isint (out.ntasks, 6, "... one task per slot: 6 tasks");
    isint (out.tasks_per_node, 0, "... ceil(6/3) slots a node: no per node");
    isint (out.cpus_per_task, 0, "... one core a slot stays unset");

    ok (resize (&now, NODES (2, SLOT (3, 2))) == 0, "to 2 nodes of 3 slots "
                                                    "of 2 cores");
    ok (out.ntasks == 6 && out.tasks_per_node == 0 && out.cpus_per_task == 2,
        "... 6 tasks of 2 cpus");

    ok (resize (&now, "{\"tasks\":[{\"command\":[\"job\"],\"slot\":\"task\","
                      "\"count\":{\"total\":3}}]}") == 0,
        "-N 2 -n 4: 3 tasks in total");
    ok (out.nodes == 2 && out.ntasks == 3 && out.tasks_per_node == 0,
        "... 3 tasks, 2 a node as ceil(3/2)");
    ok (resize (&now, "{\"tasks\":[{\"command\":[\"job\"],\"slot\":\"task\","
                      "\"count\":{\"total\":1}}]}") == 0,
        "1 task in total");
    ok (out.ntasks == 1 && out.tasks_per_node == 2,
        "... keeps 2 slots a node with --ntasks-per-node");
    ok (resize (&now, "{\"tasks\":[{\"command\":[\"job\"],\"slot\":\"task\","
                      "\"count\":{\"total\":4}}]}") == 0 &&
            out.ntasks == 4,
        "4 tasks in total on 4 slots: one a slot");
    ok (resize (&now, "{\"tasks\":[{\"command\":[\"job\"],\"slot\":\"task\","
                      "\"count\":{\"total\":5}}]}") < 0,
        "5 tasks on 4 slots");
    is (err.text, "jobtap: jobspec update of tasks: more tasks than slots",
        "... more tasks than slots");
    ok (resize (&now, "{\"tasks\":[{\"command\":[\"other\"],\"slot\":\"task\","
                      "\"count\":{\"per_slot\":1}}]}") < 0,
        "another command");
    like (err.text,
          "^jobtap: jobspec update of tasks: no Slurm request has this "
          "shape",
          "... has no Slurm request");
}

static void test_forms (void)
{
    struct jobspec_fields now;

    memset (&now, 0, sizeof (now));
    now.ntasks = 2;
    ok (resize (&now, NODES (1, SLOT (2, 2))) == 0, "-n 2 to one node");
    ok (out.nodes == 1 && out.max_nodes == 1 && out.ntasks == 2 &&
            out.cpus_per_task == 2,
        "... a node count of 1, 2 tasks of 2 cpus");

    now.nodes = 2;
    now.max_nodes = 2;
    now.ntasks = 0;
    ok (resize (&now, "{\"resources\":[" SLOT (3, 1) "]}") == 0,
        "-N 2 to 3 slots, no node level");
    ok (out.nodes == 0 && out.max_nodes == 0 && out.ntasks == 3,
        "... no node count, 3 tasks");

    memset (&now, 0, sizeof (now));
    now.nodes = 1;
    now.max_nodes = 3;
    ok (resize (&now, NODES (2, SLOT (1, 1))) == 0 && out.nodes == 2 &&
            out.max_nodes == 3,
        "-N 1-3 to 2 nodes keeps the range");
    ok (resize (&now, NODES (4, SLOT (1, 1))) == 0 && out.max_nodes == 4,
        "... to 4 nodes, no range");
    ok (resize (
            &now,
            "{\"resources\":[{\"type\":\"node\",\"count\":3,\"with\":[" SLOT (
                1, 1) "]}],\"attributes.system.slurm.max_nodes\":2}") < 0,
        "3 nodes and max_nodes 2");
    is (err.text,
        "jobtap: jobspec update of resources: contradicts "
        "attributes.system.slurm.max_nodes in the same update",
        "... contradict");
}

static void test_exclusive (void)
{
    struct jobspec_fields now;

    memset (&now, 0, sizeof (now));
    now.nodes = 1;
    now.max_nodes = 1;
    ok (resize (&now,
                "{\"resources\":[{\"type\":\"node\",\"count\":1,"
                "\"exclusive\":true,\"with\":[" SLOT (1, 1) "]}]}") == 0 &&
            out.exclusive == JOBSPEC_EXCLUSIVE_NODE,
        "an exclusive node is --exclusive");
    now.exclusive = JOBSPEC_EXCLUSIVE_NODE;
    ok (resize (&now, NODES (1, SLOT (1, 1))) == 0 &&
            out.exclusive == JOBSPEC_SHARED,
        "no exclusive node is no --exclusive");
    now.exclusive = JOBSPEC_EXCLUSIVE_USER;
    ok (resize (&now, NODES (2, SLOT (1, 1))) == 0 &&
            out.exclusive == JOBSPEC_EXCLUSIVE_USER,
        "--exclusive=user stays");
    ok (resize (&now,
                "{\"resources\":[{\"type\":\"node\",\"count\":1,"
                "\"exclusive\":true,\"with\":[" SLOT (
                    1, 1) "]}],"
                          "\"attributes.system.slurm.exclusive\":\"user\"}") <
            0,
        "an exclusive node and exclusive user");
    like (err.text, "contradicts attributes.system.slurm.exclusive",
          "... contradict");
}

static void test_gpus (void)
{
    struct jobspec_fields now;

    memset (&now, 0, sizeof (now));
    now.nodes = 1;
    now.max_nodes = 1;
    now.ntasks = 2;
    now.tres_per_node = "gres:gpu:4";
    ok (resize (&now,
                "{\"resources\":[{\"type\":\"node\",\"count\":2,\"with\":[{"
                "\"type\":\"slot\",\"count\":2,\"label\":\"task\",\"with\":["
                "{\"type\":\"core\",\"count\":1},{\"type\":\"gpu\",\"count\":2}"
                "]}]}]}") == 0,
        "--gpus-per-node=4 -n 2 to 2 nodes: 2 gpus a slot still");
    isint (out.ntasks, 4, "... 4 tasks");
    ok (resize (&now,
                "{\"resources\":[{\"type\":\"node\",\"count\":1,\"with\":[{"
                "\"type\":\"slot\",\"count\":2,\"label\":\"task\",\"with\":["
                "{\"type\":\"core\",\"count\":1},{\"type\":\"gpu\",\"count\":1}"
                "]}]}]}") < 0,
        "1 gpu a slot of --gpus-per-node=4");
    like (err.text, "GPUs through attributes.system.slurm.tres_per_node",
          "... says where GPUs change");
    ok (resize (&now,
                "{\"resources\":[{\"type\":\"node\",\"count\":1,\"with\":[{"
                "\"type\":\"slot\",\"count\":2,\"label\":\"task\",\"with\":["
                "{\"type\":\"core\",\"count\":1},{\"type\":\"gpu\",\"count\":1}"
                "]}]}],\"attributes.system.slurm.tres_per_node\":"
                "\"gres:gpu:2\"}") == 0,
        "... unless the same update asks for 2 a node");
    ok (resize (&now, "{\"resources\":[{\"type\":\"node\",\"count\":1,"
                      "\"with\":[{\"type\":\"slot\",\"count\":2,\"label\":"
                      "\"task\",\"with\":[{\"type\":\"core\",\"count\":1},"
                      "{\"type\":\"memory\",\"count\":4}]}]}]}") < 0,
        "a memory vertex has no Slurm request");
    ok (resize (&now, "{\"resources\":{}}") < 0, "resources not an array");
    ok (resize (&now, "{\"resources\":[" SLOT (2, 70000) "]}") < 0,
        "70000 cores a slot");
    is (err.text, "jobtap: jobspec update of resources: a count beyond Slurm's",
        "... beyond Slurm's");
}

int main (void)
{
    test_nodes ();
    test_forms ();
    test_exclusive ();
    test_gpus ();
    done_testing ();
    return 0;
}
