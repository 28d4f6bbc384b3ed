/* keep: the jobs' jobtap state kept where Slurm keeps its own (a
 * directory under StateSaveLocation, setting state-dir), so a restarted
 * slurmctld, or a backup controller taking over, restores every job as
 * it was.  Opened when this slurmctld first restores jobs or takes its
 * first job, whichever comes first (once it has read Slurm's state: a
 * backup controller only when it takes over); written by the agent
 * before it lets go of the job write lock, so Slurm never saves a job
 * record that a decision changed before the decision itself is kept;
 * synced after, and merged when large (the runtime's store.c).
 * Called by bind.c, agent.c and the hooks; agent thread and hooks only. */
#ifndef SLURM_JOBTAP_ADAPTER_KEEP_H
#define SLURM_JOBTAP_ADAPTER_KEEP_H
#include <stdbool.h>

struct adapter_ctx;

struct keep {
    bool tried; /* opening was tried (once per process) */
    bool open;
    bool sync;  /* state-sync */
};

/* Open the store before the first restore (a no-op after the first
 * call); a failure is logged and jobs are then restored from Slurm's
 * records alone. */
void keep_open (struct adapter_ctx *ctx);
/* job_submit, job read lock held: before this process takes its first
 * job, open the store and forget what was kept of jobs Slurm lost, so
 * that a new job given a lost job's id is never rebuilt from the lost
 * job's history, even if this process ends before its first restore
 * (24.11 restarts in place at every reconfigure). One branch after the
 * first call. */
void keep_before_submit (struct adapter_ctx *ctx);
/* After the first restore: forget what was kept of jobs Slurm lost. */
void keep_restored (struct adapter_ctx *ctx);
/* Write what the runtime recorded (under slurmctld's locks: no sync). */
void keep_write (struct adapter_ctx *ctx);
/* Write, sync (state-sync) and merge when large: outside the locks. */
void keep_settle (struct adapter_ctx *ctx);
#endif
