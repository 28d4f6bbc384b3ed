/* jobspec_setattr: Flux's `--setattr=KEY=VALUE` for Slurm jobs
 * (docs/jobspec.md, "User attributes: --setattr").
 *
 * The client half (the SPANK plugin src/spank_jobtap and jobtap-run)
 * reads each option into one object of attributes.system additions and
 * encodes it as JSON text, which travels in the job's SPANK job-control
 * environment as
 *
 *   SLURM_JOBTAP_SETATTR={"bank-check":"ok","limit":5}
 *
 * The slurmctld half (src/slurm_adapter/jobspec.c, and jobtap-run) finds
 * that entry in a job's spank_job_env and merges it into the jobspec.
 * Keys the Slurm job itself gives (duration, queue, bank...) are never
 * taken from it: the jobspec must say what Slurm runs.
 *
 * Needs only jansson; thread-safe. */
#ifndef SLURM_JOBTAP_JOBSPEC_SETATTR_H
#define SLURM_JOBTAP_JOBSPEC_SETATTR_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "host_error.h"

#define JOBSPEC_SETATTR_ENV "SLURM_JOBTAP_SETATTR"

/* The longest encoded set accepted either side (bytes of JSON text). It
 * also lands in the batch script's and the prolog's environment, where
 * one string may not exceed 128 KiB. */
#define JOBSPEC_SETATTR_MAX 65536

/* Add one option argument, "KEY[=VALUE]" or "^KEY=FILE", to attrs (the
 * object of attributes.system additions so far), as `flux submit
 * --setattr` reads it: KEY is "system.K", "attributes.system.K",
 * ".system.K" or a bare "K" (meaning system.K); dots in K nest objects;
 * VALUE is JSON when it parses as JSON, else a string, and 1 when
 * omitted; ^KEY=FILE takes the JSON in FILE.  A later option for a key
 * replaces an earlier one.  Returns 0, or -1 with a message for the user
 * in err and attrs unchanged: a key outside
 * attributes.system, an empty key part, a key the Slurm job gives (which
 * names the Slurm option to use instead), a path through a value that is
 * not an object, an unreadable FILE. */
int jobspec_setattr_add (json_t *attrs,
                         const char *arg,
                         jobtap_host_error_t *err);

/* attrs as the variable's value: compact ASCII JSON (no newline, no
 * control character).  malloc'd; NULL with a message in err when it
 * would exceed JOBSPEC_SETATTR_MAX or out of memory. */
char *jobspec_setattr_encode (const json_t *attrs, jobtap_host_error_t *err);

/* The value of the first SLURM_JOBTAP_SETATTR entry of env[0..n) ("NAME=
 * value" strings; env may be NULL), or NULL: the common case, found
 * without any allocation. */
const char *jobspec_setattr_find (char *const *env, uint32_t n);

/* Merge an encoded set (text) into jobspec's attributes.system.  The
 * whole set is ignored when it is not a JSON object or is too long, and
 * each key the Slurm job gives or that is empty is dropped.  Returns the
 * number of keys merged, or -1 when the whole set was ignored;
 * ignored->text says what was ignored, or is empty (nothing allocated:
 * callers may run inside the runtime's JSON pool). */
int jobspec_setattr_merge (json_t *jobspec,
                           const char *text,
                           jobtap_host_error_t *ignored);

/* True when attributes.system.<key> (its first part) is given by the
 * Slurm job, so --setattr cannot set it; *option is then the Slurm
 * option that sets it. */
int jobspec_setattr_reserved (const char *key, const char **option);

#endif
