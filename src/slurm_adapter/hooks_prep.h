/* hooks_prep: the PrEp hooks' side in the adapter (hooks_prep.c says
 * what they do). The entry points are in adapter.h; these are for the
 * adapter's own modules. */
#ifndef SLURM_JOBTAP_ADAPTER_HOOKS_PREP_H
#define SLURM_JOBTAP_ADAPTER_HOOKS_PREP_H

#include <stdbool.h>
#include <stdint.h>

#include "queue.h"
#include "write_scope.h"

struct adapter_ctx;

/* Host op (struct jobtap_host_ops.perilog_done), arg = the context: queue
 * the end of a job's prologs or epilogs for the agent. */
void hooks_prep_perilog_done (uint64_t id,
                              bool epilog,
                              int status,
                              const char *note,
                              void *arg);

/* The agent's part for A_PROLOG_DONE, A_EPILOG_DONE and A_REQUEUED:
 * first within its locked pass (job write lock held), then after it (no
 * slurmctld lock held). */
void hooks_prep_locked (struct adapter_ctx *ctx,
                        struct write_scope *scope,
                        struct action *a);
void hooks_prep_unlocked (struct adapter_ctx *ctx, const struct action *a);

#endif
