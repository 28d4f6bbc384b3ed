/* jobspec_dependency: a -d/--dependency string shared between Slurm and
 * the jobtap plugins. Slurm's own schemes (after, afterany, afterok,
 * afternotok, aftercorr, afterburstbuffer, singleton, expand, a bare job
 * id) stay Slurm's; each "scheme:value" whose scheme the caller says a
 * jobtap plugin handles becomes an RFC 26 entry {scheme, value}, as
 * `flux submit --dependency` gives it; any other is left to Slurm, which
 * refuses it with its own message. */
#ifndef JOBSPEC_DEPENDENCY_H
#define JOBSPEC_DEPENDENCY_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#include "host_error.h"

typedef bool (*jobspec_scheme_handled_f) (const char *scheme, void *arg);

/* Split dep. *slurm_rest: what stays Slurm's (malloc'd; NULL when
 * nothing does), *entries: the jobtap entries (a new array, maybe empty).
 * 0, or -1 with why in err: a jobtap scheme in a '?' (any of) list, which
 * Flux has no meaning for, or out of memory. With no jobtap scheme in
 * dep, *slurm_rest is a copy of dep. */
int jobspec_dependency_split (const char *dep,
                              jobspec_scheme_handled_f handled,
                              void *arg,
                              char **slurm_rest,
                              json_t **entries,
                              jobtap_host_error_t *err);

#endif
