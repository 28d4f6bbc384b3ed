/* Flux's [policy] and [queues] tables (RFC 33; flux-config-policy(5),
 * flux-config-queues(5)): checked as flux-core checks them, with its
 * wording, and read into each queue's effective limits and jobspec
 * defaults (a virtual queue's own over its parent's, over the general
 * table).  Used by the limit builtins (their conf.update), by jobtap_conf.c (a
 * bad table refuses the config) and by the host's defaults.  A leaf above
 * fsd: no runtime, no lock. */
#ifndef JOBTAP_POLICY_H
#define JOBTAP_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#include "host.h"

/* A size limit: a count, unlimited, or not set at this level. */
#define POLICY_SIZE_UNSET (-2)
#define POLICY_SIZE_UNLIMITED (-1)
/* A duration limit or default: seconds (a limit of 0 is unlimited), or
 * not set at this level. */
#define POLICY_DURATION_UNSET (-1.)

struct policy_size {
    int nnodes, ncores, ngpus;
};

struct policy_limits {
    double duration;
    struct policy_size max, min;
};

/* What a job asks for, as Flux counts it from the jobspec. */
struct policy_request {
    double duration; /* 0: unlimited */
    int nnodes, ncores, ngpus;
    const char *queue; /* NULL: none named */
};

struct policy;

/* Check and read config's [policy] and [queues] (either may be absent:
 * then nothing is limited and there are no defaults).  On error NULL,
 * Flux's message in err and, in where, the dotted name of the table it
 * is about ("queues.debug.policy.limits"), for its line in the file. */
struct policy *policy_create (json_t *config,
                              char *where,
                              size_t where_len,
                              jobtap_host_error_t *err);
void policy_destroy (struct policy *p);

/* Whether any duration limit or any size limit is set (a [queues] table
 * alone counts, as in Flux: its queues are then checked). */
bool policy_limits_duration (const struct policy *p);
bool policy_limits_size (const struct policy *p);

/* -1 with Flux's rejection in err when the request is over a limit of its
 * queue (or the general one where its queue sets none). */
int policy_check_duration (const struct policy *p,
                           const struct policy_request *r,
                           jobtap_host_error_t *err);
int policy_check_size (const struct policy *p,
                       const struct policy_request *r,
                       jobtap_host_error_t *err);

/* policy.jobspec.defaults.system.queue, or NULL. */
const char *policy_default_queue (const struct policy *p);
/* The default duration for a job of 'queue' (NULL: none named): the
 * queue's own, its parent's, the general one; POLICY_DURATION_UNSET if
 * none. */
double policy_default_duration (const struct policy *p, const char *queue);

/* Whether a default queue or any default duration is set. */
bool policy_has_defaults (const struct policy *p);

/* The [queues] names, in the file's order of reading. */
size_t policy_queue_count (const struct policy *p);
const char *policy_queue_name (const struct policy *p, size_t i);

/* Settings flux-core reads that no builtin here applies
 * (policy.access, policy.scheduler, queues.NAME.requires): each one's
 * dotted name in turn, i from 0 until NULL.  For one log line each. */
const char *policy_unapplied (const struct policy *p, size_t i);

#endif
