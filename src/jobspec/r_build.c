/* r_build: a job's allocation -> R version 1 (RFC 20).
 *
 * Slurm-free, so that the adapter and jobtap-run give a job the same R and
 * the unit tests need no slurmctld.  The text follows what flux-core's
 * librlist writes, since that is what jobtap plugins are used to reading:
 * R_lite entries ordered by their lowest rank, idsets without brackets,
 * "gpu" only on nodes that have GPUs, both times always present. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "r_build.h"
#include "r_text.h"

/* One rank's children as text, the key R_lite entries are grouped by. */
struct rank_children {
    char *core; /* "0-3", or "" */
    char *gpu;
    uint32_t rank;
};

static int by_children_then_rank (const void *a, const void *b)
{
    const struct rank_children *x = a, *y = b;
    int rv = strcmp (x->core, y->core);

    if (rv == 0)
        rv = strcmp (x->gpu, y->gpu);
    if (rv == 0)
        rv = (x->rank > y->rank) - (x->rank < y->rank);
    return rv;
}

static bool same_children (const struct rank_children *x,
                           const struct rank_children *y)
{
    return !strcmp (x->core, y->core) && !strcmp (x->gpu, y->gpu);
}

/* o[key] = v, v stolen; false when either is NULL (out of memory). */
static bool put (json_t *o, const char *key, json_t *v)
{
    return json_object_set_new_nocheck (o, key, v) == 0;
}

/* {"rank": ranks, "children": {"core": ..., "gpu": ...}} */
static json_t *rlite_entry (const char *ranks, const struct rank_children *c)
{
    json_t *children = json_object ();
    json_t *entry = json_object ();

    if (!children || !entry ||
        (c->core[0] &&
         !put (children, "core", json_string_nocheck (c->core))) ||
        (c->gpu[0] && !put (children, "gpu", json_string_nocheck (c->gpu))) ||
        !put (entry, "rank", json_string_nocheck (ranks)) ||
        json_object_set_nocheck (entry, "children", children) < 0) {
        json_decref (children);
        json_decref (entry);
        return NULL;
    }
    json_decref (children);
    return entry;
}

/* R_lite: ranks with the same children share one entry, entries in the
 * order of their lowest rank, as librlist writes them.  Grouping sorts by
 * children, so a large allocation costs n log n, not n per group. */
static json_t *rlite_build (const struct r_node *nodes, size_t nnodes)
{
    struct rank_children *sorted = calloc (nnodes, sizeof (*sorted));
    size_t *run_of_rank = calloc (nnodes, sizeof (*run_of_rank));
    uint32_t *ranks = calloc (nnodes, sizeof (*ranks));
    json_t *rlite = json_array ();
    size_t i, start = 0;

    if (!sorted || !run_of_rank || !ranks || !rlite)
        goto nomem;
    for (i = 0; i < nnodes; i++) {
        sorted[i].rank = (uint32_t)i;
        if (!(sorted[i].core = idset_text (nodes[i].cores, nodes[i].ncores)) ||
            !(sorted[i].gpu = idset_text (nodes[i].gpus, nodes[i].ngpus)))
            goto nomem;
    }
    qsort (sorted, nnodes, sizeof (*sorted), by_children_then_rank);
    for (i = 0; i < nnodes; i++) {
        if (i > 0 && !same_children (&sorted[i], &sorted[start]))
            start = i;
        run_of_rank[sorted[i].rank] = start;
    }
    /* A run is written when its lowest rank, its first member, comes up. */
    for (size_t rank = 0; rank < nnodes; rank++) {
        size_t first = run_of_rank[rank], end = first, count = 0;
        char *text;
        if (sorted[first].rank != rank)
            continue;
        while (end < nnodes && same_children (&sorted[end], &sorted[first]))
            ranks[count++] = sorted[end++].rank;
        if (!(text = idset_text_sorted (ranks, count)))
            goto nomem;
        json_t *entry = rlite_entry (text, &sorted[first]);
        free (text);
        if (!entry || json_array_append_new (rlite, entry) < 0)
            goto nomem;
    }
    goto done;
nomem:
    json_decref (rlite);
    rlite = NULL;
done:
    for (i = 0; sorted && i < nnodes; i++) {
        free (sorted[i].core);
        free (sorted[i].gpu);
    }
    free (sorted);
    free (run_of_rank);
    free (ranks);
    return rlite;
}

/* The hostnames in rank order as hostlists. */
static json_t *nodelist_build (const struct r_node *nodes, size_t nnodes)
{
    const char **names = calloc (nnodes, sizeof (*names));
    json_t *list;

    if (!names)
        return NULL;
    for (size_t i = 0; i < nnodes; i++)
        names[i] = nodes[i].hostname;
    list = hostlist_text (names, nnodes);
    free (names);
    return list;
}

/* A NULL id array stands for 0..count-1, so count must fit the ids. */
static bool ids_valid (const uint32_t *ids, size_t count)
{
    return ids || count == 0 || (uint64_t)count - 1 <= UINT32_MAX;
}

static bool input_valid (const struct r_node *nodes,
                         size_t nnodes,
                         double starttime,
                         double expiration)
{
    if (!nodes || nnodes == 0 || (uint64_t)nnodes - 1 > UINT32_MAX)
        return false;
    if (!isfinite (starttime) || !isfinite (expiration) || starttime < 0 ||
        expiration < 0 || (expiration > 0 && expiration < starttime))
        return false;
    for (size_t i = 0; i < nnodes; i++) {
        const struct r_node *n = &nodes[i];
        if (!hostlist_name_valid (n->hostname) ||
            (n->ncores == 0 && n->ngpus == 0) ||
            !ids_valid (n->cores, n->ncores) || !ids_valid (n->gpus, n->ngpus))
            return false;
    }
    return true;
}

json_t *r_build (const struct r_node *nodes,
                 size_t nnodes,
                 double starttime,
                 double expiration)
{
    json_t *R, *execution;

    if (!input_valid (nodes, nnodes, starttime, expiration)) {
        errno = EINVAL;
        return NULL;
    }
    R = json_object ();
    execution = json_object ();
    if (!put (R, "version", json_integer (1)) ||
        json_object_set_nocheck (R, "execution", execution) < 0 ||
        !put (execution, "R_lite", rlite_build (nodes, nnodes)) ||
        !put (execution, "nodelist", nodelist_build (nodes, nnodes)) ||
        !put (execution, "starttime", json_real (starttime)) ||
        !put (execution, "expiration", json_real (expiration))) {
        json_decref (execution);
        json_decref (R);
        errno = ENOMEM;
        return NULL;
    }
    json_decref (execution);
    return R;
}
