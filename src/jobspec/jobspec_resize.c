/* jobspec_resize: a resources or tasks update as the node count, slots
 * per node, task count and cores per task that jobspec_build turns back
 * into it.  The round trip is the check: what jobspec_build does not give
 * back exactly has no Slurm request. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_error.h"
#include "jobspec_resize.h"
#include "jobspec_update.h"

#define SLURM_KEY "attributes.system.slurm."

/* What a resources value asks for, in jobspec_build's shapes:
 * [node[slot[core, gpu?]]] or [slot[core, gpu?]]. */
struct shape {
    json_int_t nodes; /* 0: no node level */
    json_int_t slots; /* per node, or in all */
    json_int_t cores; /* per slot */
    bool exclusive;
};

/* count of {type, count} when type matches and count >= 1, else 0. */
static json_int_t count_of (json_t *v, const char *type)
{
    json_t *t = json_object_get (v, "type");
    json_t *c = json_object_get (v, "count");
    if (!json_is_string (t) || strcmp (json_string_value (t), type) ||
        !json_is_integer (c) || json_integer_value (c) < 1)
        return 0;
    return json_integer_value (c);
}

/* The only element of a one-element array, or NULL. */
static json_t *only (json_t *a)
{
    return json_is_array (a) && json_array_size (a) == 1 ? json_array_get (a, 0)
                                                         : NULL;
}

/* Read the counts; the round trip checks the rest (labels, GPUs, other
 * vertices and keys). */
static int shape_of (json_t *res, struct shape *s)
{
    json_t *v = only (res), *slot;

    memset (s, 0, sizeof (*s));
    if ((s->nodes = count_of (v, "node"))) {
        s->exclusive = json_is_true (json_object_get (v, "exclusive"));
        slot = only (json_object_get (v, "with"));
    } else
        slot = v;
    s->slots = count_of (slot, "slot");
    s->cores =
        count_of (json_array_get (json_object_get (slot, "with"), 0), "core");
    return s->slots && s->cores ? 0 : -1;
}

/* tasks[0].count: {per_slot: 1} is 0, {total: n} is n; -1 otherwise. */
static json_int_t total_of (json_t *tasks)
{
    json_t *count = json_object_get (only (tasks), "count");
    json_t *per_slot = json_object_get (count, "per_slot");
    json_t *total = json_object_get (count, "total");

    if (json_object_size (count) != 1)
        return -1;
    if (json_is_integer (per_slot) && json_integer_value (per_slot) == 1)
        return 0;
    if (json_is_integer (total) && json_integer_value (total) >= 1)
        return json_integer_value (total);
    return -1;
}

/* The same update's other keys that the resources or tasks depend on. */
static void overlay (struct jobspec_fields *f, json_t *flat)
{
    json_t *v;

    if ((v = json_object_get (flat, SLURM_KEY "tres_per_job")))
        f->tres_per_job = json_string_value (v);
    if ((v = json_object_get (flat, SLURM_KEY "tres_per_node")))
        f->tres_per_node = json_string_value (v);
    if ((v = json_object_get (flat, SLURM_KEY "tres_per_task")))
        f->tres_per_task = json_string_value (v);
    if ((v = json_object_get (flat, "attributes.system.job.name")))
        f->name = json_string_value (v); /* the command when no argv */
    if ((v = json_object_get (flat, SLURM_KEY "exclusive")))
        f->exclusive = jobspec_exclusive_parse (json_string_value (v));
}

/* The tasks jobspec_build gives for those asked: {total: n} over n
 * slots is {per_slot: 1}.  New reference. */
static json_t *as_built (json_t *tasks, json_int_t total, json_int_t slots)
{
    json_t *copy = json_deep_copy (tasks);
    if (copy && total == slots)
        json_object_set_new (json_array_get (copy, 0), "count",
                             json_pack ("{s:i}", "per_slot", 1));
    return copy;
}

static int fail (jobtap_host_error_t *err, const char *key, const char *why)
{
    return errprintf (err, "jobtap: jobspec update of %s: %s", key, why);
}

#define NO_SHAPE                                                               \
    "no Slurm request has this shape (Slurm sets the node count, the "         \
    "slots per node and the cores per slot; GPUs through "                     \
    "attributes.system.slurm.tres_per_node or tres_per_task)"

/* Node count, tasks per node and task count for N nodes of S slots and
 * T tasks, as jobspec_build reads them back (per node: tasks_per_node,
 * else ceil(ntasks / nodes), else 1), keeping what now leaves unset
 * when that gives the same. */
static void size_nodes (struct jobspec_fields *f,
                        const struct jobspec_fields *now,
                        const struct shape *s,
                        json_int_t t)
{
    uint32_t n = s->nodes, per_node = s->slots;

    f->nodes = n;
    f->tasks_per_node =
        now->tasks_per_node || (t + n - 1) / n != per_node ? per_node : 0;
    f->ntasks =
        t == (json_int_t)n * per_node && per_node == 1 && !now->ntasks ? 0 : t;
}

int jobspec_resize (const struct jobspec_fields *now,
                    json_t *flat,
                    struct jobspec_fields *out,
                    jobtap_host_error_t *err)
{
    json_t *res = json_object_get (flat, "resources");
    json_t *tasks = json_object_get (flat, "tasks");
    json_t *max = json_object_get (flat, SLURM_KEY "max_nodes");
    const char *key = res ? "resources" : "tasks";
    json_t *cur = jobspec_build (now), *built = NULL, *want = NULL;
    struct shape s;
    json_int_t total;
    int rc = -1;

    *out = *now;
    overlay (out, flat);
    /* What is not updated stays as the runtime has it: now's. */
    if (!res)
        res = json_object_get (cur, "resources");
    if (!tasks)
        tasks = json_object_get (cur, "tasks");
    if (!cur || shape_of (res, &s) < 0 || (total = total_of (tasks)) < 0) {
        fail (err, key, NO_SHAPE);
        goto out;
    }
    if (s.nodes > UINT32_MAX - 2 || s.slots > UINT16_MAX - 2 ||
        s.cores > UINT16_MAX - 2 || total > UINT32_MAX - 2) {
        fail (err, key, "a count beyond Slurm's");
        goto out;
    }
    out->cpus_per_task = s.cores == 1 && !now->cpus_per_task ? 0 : s.cores;
    if (s.nodes > 0) {
        json_int_t slots = s.nodes * s.slots;
        if (total > slots) {
            fail (err, "tasks", "more tasks than slots");
            goto out;
        }
        size_nodes (out, now, &s, total ? total : slots);
        if (s.exclusive)
            out->exclusive = JOBSPEC_EXCLUSIVE_NODE;
        else if (out->exclusive == JOBSPEC_EXCLUSIVE_NODE)
            out->exclusive = JOBSPEC_SHARED;
        /* a range that still holds the count is kept */
        if (max)
            out->max_nodes = json_integer_value (max);
        else if (out->max_nodes < out->nodes)
            out->max_nodes = out->nodes;
    } else {
        out->nodes = 0;
        out->max_nodes = max ? json_integer_value (max) : 0;
        out->tasks_per_node = 0;
        out->ntasks = s.slots == 1 && !now->ntasks ? 0 : s.slots;
    }
    if ((max && out->max_nodes < out->nodes) || (max && !out->nodes)) {
        fail (err, key,
              "contradicts attributes.system.slurm.max_nodes in the same "
              "update");
        goto out;
    }
    if (json_object_get (flat, SLURM_KEY "exclusive") &&
        out->exclusive != jobspec_exclusive_parse (json_string_value (
                              json_object_get (flat, SLURM_KEY "exclusive")))) {
        fail (err, key,
              "contradicts attributes.system.slurm.exclusive in the same "
              "update");
        goto out;
    }
    built = jobspec_build (out);
    want = as_built (tasks, total, s.nodes ? s.nodes * s.slots : s.slots);
    if (!built || !json_equal (json_object_get (built, "resources"), res) ||
        !json_equal (json_object_get (built, "tasks"), want)) {
        fail (err, key, NO_SHAPE);
        goto out;
    }
    rc = 0;
out:
    json_decref (want);
    json_decref (built);
    json_decref (cur);
    return rc;
}
