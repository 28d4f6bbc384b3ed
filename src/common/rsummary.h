/* rsummary: R's one-line summary as Flux's schedulers annotate an
 * allocation with it (annotations.sched.resource_summary): one
 * "rank<ids>/core<ids>[,gpu<ids>...]" per R_lite entry, space-separated,
 * an idset in brackets when it names more than one id ("rank0/core[0-1]").
 * Called by host.c at alloc; calls strbuf.c (and jansson). */
#ifndef JOBTAP_RSUMMARY_H
#define JOBTAP_RSUMMARY_H

#include <jansson.h>

/* The summary of R version 1 (malloc'd), or NULL for R without R_lite
 * entries (or out of memory). */
char *rsummary (json_t *R);

#endif
