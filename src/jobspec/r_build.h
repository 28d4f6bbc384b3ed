/* r_build: a job's allocation -> Flux R version 1 (RFC 20), the "R"
 * handed to jobtap plugins at job.state.run.
 *
 * Owns the Slurm-free half: the caller lists the allocated nodes in
 * allocation order (their positions are the ranks) with each node's
 * cores and GPUs; this builds R_lite (ranks with identical children share
 * one entry, RFC 22 idsets), the nodelist (RFC 29 hostlists) and the
 * times.  Callers: the Slurm adapter (from a job record's job_resources)
 * and jobtap-run.  Needs only jansson; thread-safe. */
#ifndef SLURM_JOBTAP_R_BUILD_H
#define SLURM_JOBTAP_R_BUILD_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* One allocated node.  Ids are a set: any order, duplicates count once.
 * A NULL id array with a nonzero count means ids 0..count-1.  A node must
 * have at least one core or GPU.  Borrowed. */
struct r_node {
    const char *hostname; /* printable ASCII, none of "[]," */
    const uint32_t *cores;
    size_t ncores;
    const uint32_t *gpus;
    size_t ngpus;
};

/* R version 1 for nodes[0..nnodes-1] (rank i is nodes[i]):
 *   {"version": 1, "execution": {"R_lite": [{"rank": "0-1",
 *    "children": {"core": "0-3", "gpu": "0"}}], "nodelist": ["n[1-2]"],
 *    "starttime": S, "expiration": E}}
 * starttime and expiration are seconds since the epoch; expiration 0 is
 * no expiration (Flux writes both, 0.0 when unset).  New reference, or
 * NULL with errno EINVAL (no nodes, a bad node or hostname, negative or
 * non-finite times, expiration before starttime) or ENOMEM. */
json_t *r_build (const struct r_node *nodes,
                 size_t nnodes,
                 double starttime,
                 double expiration);

#endif
