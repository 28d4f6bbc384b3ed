/* A job's allocation as R (alloc.h). */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "src/common/slurm_xlator.h"
#include "src/common/bitstring.h"
#include "src/common/job_resources.h"
#include "src/common/list.h"
#include "src/common/node_conf.h"
#include "src/slurmctld/slurmctld.h"

#include "alloc.h"
#include "r_build.h"
#include "slurm_compat.h"
#include JOBTAP_GRES_H

/* The cores allocated on the job's node n (core ids as the node numbers
 * them: socket * cores per socket + core). */
static size_t node_cores (job_resources_t *jr, uint32_t n, uint32_t **ids)
{
    uint16_t sockets = 0, cores = 0;
    size_t count = 0;
    int base;

    *ids = NULL;
    /* A node's cores are consecutive bits of core_bitmap, from its offset. */
    if (get_job_resources_cnt (jr, n, &sockets, &cores) != SLURM_SUCCESS
        || !jr->core_bitmap
        || (base = get_job_resources_offset (jr, n, 0, 0)) < 0
        || !(*ids = calloc ((size_t)sockets * cores + 1, sizeof (**ids))))
        return 0;
    for (uint32_t i = 0; i < (uint32_t)sockets * cores; i++)
        if (base + i < (uint32_t)bit_size (jr->core_bitmap)
            && bit_test (jr->core_bitmap, base + i))
            (*ids)[count++] = i;
    return count;
}

/* The GPUs allocated on the job's node n: ids from the GRES bitmap where
 * gres.conf names devices, else a count (ids 0..count-1). */
static size_t node_gpus (job_record_t *job, uint32_t n, uint32_t **ids)
{
    __typeof__ (list_iterator_create (NULL)) it;
    gres_state_t *gs;
    size_t count = 0;

    *ids = NULL;
    if (!job->gres_list_alloc
        || !(it = list_iterator_create (job->gres_list_alloc)))
        return 0;
    while ((gs = list_next (it))) {
        gres_job_state_t *gj = gs->gres_data;
        if (!gs->gres_name || strcmp (gs->gres_name, "gpu") || !gj
            || n >= gj->node_cnt)
            continue;
        if (gj->gres_bit_alloc && gj->gres_bit_alloc[n]) {
            bitstr_t *b = gj->gres_bit_alloc[n];
            int64_t size = bit_size (b);
            uint32_t *more = realloc (*ids, (count + (size_t)size + 1)
                                                * sizeof (**ids));
            if (!more)
                break;
            *ids = more;
            for (int64_t i = 0; i < size; i++)
                if (bit_test (b, i))
                    (*ids)[count++] = (uint32_t)i;
        }
        else if (gj->gres_cnt_node_alloc)
            count += (size_t)gj->gres_cnt_node_alloc[n];
    }
    list_iterator_destroy (it);
    return count;
}

json_t *alloc_R (job_record_t *job)
{
    job_resources_t *jr = job->job_resrcs;
    struct r_node *nodes;
    json_t *R = NULL;
    uint32_t n = 0;

    if (!jr || !jr->node_bitmap || jr->nhosts == 0
        || !(nodes = calloc (jr->nhosts, sizeof (*nodes))))
        return NULL;
    int64_t last = bit_fls (jr->node_bitmap);
    for (int64_t i = bit_ffs (jr->node_bitmap); i >= 0 && i <= last
                                                && n < jr->nhosts; i++) {
        if (!bit_test (jr->node_bitmap, i) || !node_record_table_ptr[i])
            continue;
        uint32_t *cores, *gpus;
        nodes[n].hostname = node_record_table_ptr[i]->name;
        nodes[n].ncores = node_cores (jr, n, &cores);
        nodes[n].cores = cores;
        nodes[n].ngpus = node_gpus (job, n, &gpus);
        nodes[n].gpus = gpus;
        n++;
    }
    double end = job->end_time > job->start_time ? (double)job->end_time : 0;
    if (n == jr->nhosts)
        R = r_build (nodes, n, (double)job->start_time, end);
    for (uint32_t k = 0; k < jr->nhosts; k++) {
        free ((void *)nodes[k].cores);
        free ((void *)nodes[k].gpus);
    }
    free (nodes);
    return R;
}
