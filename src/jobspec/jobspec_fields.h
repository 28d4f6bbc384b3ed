/* jobspec_fields: a job's fields (jobspec_build.h) kept in one block, so
 * the runtime can drop a resting job's jobspec tree and get the very same
 * tree back from jobspec_build later, instead of keeping its text.
 *
 * The block holds the numbers and the strings that are set, no pointers,
 * for the process that wrote it to read back.  Needs nothing but libc and
 * jobspec_build; thread-safe. */
#ifndef SLURM_JOBTAP_JOBSPEC_FIELDS_H
#define SLURM_JOBTAP_JOBSPEC_FIELDS_H

#include <stddef.h>
#include <jansson.h>

#include "jobspec_build.h"

/* f in one malloc'd block of *len bytes, or NULL when out of memory. */
void *jobspec_fields_save (const struct jobspec_fields *f, size_t *len);

/* jobspec_build of the fields kept in 'block': a new reference, or NULL
 * (EINVAL: not a block saved here; ENOMEM). */
json_t *jobspec_fields_build (const void *block, size_t len);

/* What jobspec_fields_build (block, len) has at 'path' (depth keys from
 * the root), found without building it: a scalar's value in *value (a
 * new reference) or, with 'scalar' not NULL, in *scalar when it is a
 * field as is (a string borrowed from the block), or the kind of member
 * there (jobspec_build.h).  Paths it cannot answer cheaply, and blocks
 * not saved here, are UNKNOWN. */
enum jobspec_member jobspec_fields_find (const void *block,
                                         size_t len,
                                         const char *const *path,
                                         int depth,
                                         json_t **value,
                                         struct jobspec_scalar *scalar);

#endif
