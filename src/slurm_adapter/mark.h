/* mark: the submission mark, a string job_submit adds to a job's spank
 * environment so that the job record, once slurmctld has created it, can
 * be matched with the provisional jobtap job of its submission:
 *
 *   SLURM_JOBTAP_SUBMIT=<boot>:<token>:<urgency>:<operator priority or 0>:<flags>
 *
 * The spank environment is kept with the job record and its saved state;
 * <boot> tells this slurmctld's tokens from an earlier process's. A mark
 * written before <flags> existed has four fields: those jobs were all
 * created held (MARK_CREATED_HELD).
 *
 * The usual submission is not written a mark: one that brings no spank
 * environment and whose record slurmctld creates and gives its first
 * priority in the same RPC (bind.h). job_submit gives it an empty
 * environment array whose allocation holds the mark after the array's
 * NULL (mark_inline_write), and slurmctld moves that array into the
 * record (an empty array is never copied or sent, nor saved: a restarted
 * slurmctld reads none), where bind_in_allocate finds the mark by the
 * array's size and this process's boot (mark_inline_find). No string is
 * made, added or parsed.
 *
 * Pure string work with no Slurm types or locks, so any module may call it
 * from any thread; the caller owns the buffers. */
#ifndef SLURM_JOBTAP_ADAPTER_MARK_H
#define SLURM_JOBTAP_ADAPTER_MARK_H

#include <stdbool.h>
#include <stdint.h>

#define MARK_PREFIX "SLURM_JOBTAP_SUBMIT="

/* Room for the prefix, five numbers of at most 20 digits, their
 * separators and the NUL. */
#define MARK_SIZE (sizeof (MARK_PREFIX) - 1 + 5 * 21)

enum mark_flags {
    /* job_submit created the job held, for the agent to run job.new (the
     * fallback when job.new cannot run inside the submission) */
    MARK_CREATED_HELD = 1,
    /* the request had a batch script: a record without one is the
     * throw-away record of sbatch --test-only */
    MARK_BATCH = 2,
    /* a job array: its tasks become jobs when the agent sees the record */
    MARK_ARRAY = 4,
    /* a hetjob's leader (component 0) */
    MARK_HET_LEADER = 8,
    /* a hetjob's other component: the token is its leader's, and it has
     * no provisional job of its own (het_job.h) */
    MARK_HET_COMPONENT = 16,
};

struct mark {
    uint64_t token;       /* the provisional job; 0 from another boot */
    int urgency;          /* as submitted (negative is written as 0) */
    uint32_t op_priority; /* an operator's --priority, or 0 */
    unsigned flags;       /* enum mark_flags */
};

/* This process's <boot> and its text, made once (every mark has it). */
struct mark_boot {
    uint64_t value;
    size_t len;
    char text[21];
};
void mark_boot_init (struct mark_boot *boot, uint64_t value);

/* Write the mark into buf (MARK_SIZE bytes). */
void mark_format (char *buf,
                  const struct mark_boot *boot,
                  const struct mark *m);

/* Find the last well-formed mark among env[0..n) (env may be NULL):
 * job_submit appends its own, so one a request brought with it is passed
 * over, and the search ends at the first entry it reads.
 * m->token is 0 when the mark comes from another boot (there is no
 * provisional job to bind then). Returns false, leaving *m alone, when
 * there is none. */
bool mark_find (char *const *env,
                uint32_t n,
                const struct mark_boot *boot,
                struct mark *m);

/* The allocation of an empty environment array that holds a mark: its
 * NULL, then the mark. */
struct mark_inline {
    char *terminator; /* NULL: the array has no entries */
    uint64_t boot;    /* this process's (mark_boot.value) */
    struct mark mark;
};

/* Write the array's NULL and m into a (MARK_INLINE_SIZE bytes). */
#define MARK_INLINE_SIZE sizeof (struct mark_inline)
void mark_inline_write (struct mark_inline *a,
                        const struct mark_boot *boot,
                        const struct mark *m);

/* The mark held by env, an array of n entries in an allocation of 'size'
 * bytes: true, with *m set, when env is an empty array of a mark's size
 * whose mark is this process's; false, leaving *m alone, otherwise (an
 * array with entries, or one nobody made as a mark, is never read past
 * its entries). */
bool mark_inline_find (char *const *env,
                       uint32_t n,
                       size_t size,
                       const struct mark_boot *boot,
                       struct mark *m);

#endif
