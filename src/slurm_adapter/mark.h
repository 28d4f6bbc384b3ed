/* mark: the submission mark, a string job_submit adds to a job's spank
 * environment so that the job record, once slurmctld has created it, can
 * be matched with the provisional jobtap job of its submission:
 *
 *   SLURM_JOBTAP_SUBMIT=<boot>:<token>:<urgency>:<operator priority or 0>
 *
 * The spank environment is kept with the job record and its saved state;
 * <boot> tells this slurmctld's tokens from an earlier process's.
 *
 * Pure string work with no Slurm types or locks, so any module may call it
 * from any thread; the caller owns the buffers. */
#ifndef SLURM_JOBTAP_ADAPTER_MARK_H
#define SLURM_JOBTAP_ADAPTER_MARK_H

#include <stdbool.h>
#include <stdint.h>

#define MARK_PREFIX "SLURM_JOBTAP_SUBMIT="

/* Room for the prefix, four numbers of at most 20 digits, their
 * separators and the NUL. */
#define MARK_SIZE (sizeof (MARK_PREFIX) - 1 + 4 * 21)

/* Write the mark into buf (MARK_SIZE bytes); a negative urgency is
 * written as 0. */
void mark_format (char *buf,
                  uint64_t boot,
                  uint64_t token,
                  int urgency,
                  uint32_t op_priority);

/* Find the first well-formed mark among env[0..n) (env may be NULL).
 * *token is 0 when the mark comes from another boot (there is no
 * provisional job to bind then). Returns false, leaving the outputs
 * alone, when there is none. */
bool mark_find (char *const *env,
                uint32_t n,
                uint64_t boot,
                uint64_t *token,
                int *urgency,
                uint32_t *op_priority);

#endif
