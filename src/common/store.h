/* The jobs' events kept across scheduler restarts: each bound job's
 * eventlog, appended to a journal in a directory the host names (for
 * Slurm a directory under StateSaveLocation) and merged into a snapshot
 * from time to time, so a restarted scheduler, or a backup that shares
 * the directory, rebuilds every job as it was (restore.c).
 *
 * Files, in the host's directory:
 *   snapshot        {"jobtap-state":1,"gen":G} then one line per job:
 *                   {"id":N,"e":[entry,...]}; written as snapshot.new,
 *                   synced, then renamed over it (the previous one is
 *                   kept as snapshot.old until then), as Slurm writes
 *                   its own state files
 *   journal.K       lines appended since snapshot K (K >= G are read):
 *                   {"id":N,"e":[...]} adds entries, {"id":N,"reset":true,
 *                   "e":[...]} starts the job's history anew (a new job,
 *                   or a requeued one, with that id), {"id":N,"forget":
 *                   true} drops it.  A torn last line (a kill in the
 *                   middle of a write) is ignored.
 * An entry is an eventlog entry {"timestamp":f,"name":s,"context"?:o}.
 *
 * Recording costs one entry's text per event, in a buffer the host's
 * store_flush writes with one write() (the events of a job that follow
 * one another, a cascade, join one line; a provisional job's entries wait
 * in the job until it is bound, job.c frees them with the job).  Called
 * by event.c and submit.c (recording), host.c (forgetting a purged job;
 * open, flush) and restore.c (the kept jobs); calls store_file.c (the
 * files, the strbuf), compact.c and log.c.  Without an open store every
 * call is a no-op. */
#ifndef JOBTAP_STORE_H
#define JOBTAP_STORE_H
#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>
#include <flux/core.h>

#include "host.h"
#include "job.h"
#include "runtime.h"

struct runtime;
struct job;
struct event;

/* Open the store in 'dir' (created 0700 if missing): read what it keeps
 * (the jobs store_take_kept hands out), merge it into a fresh snapshot
 * and start a new journal.  0, or -1 with err set. */
int store_open (struct runtime *rt, const char *dir, jobtap_host_error_t *err);
/* Flush (no sync) and close. */
void store_close (struct runtime *rt);

/* An event was applied to job (event.c), or the job was forgotten
 * (host.c, before the table drops it).  Inline checks, so a runtime
 * without a store (jobtap-run, the benchmarks) pays a load and a branch
 * per event. */
void store_record_event (struct job *job, struct event *ev);
void store_forget_job (struct job *job);
static inline void store_record (struct job *job, struct event *ev)
{
    if (__builtin_expect (job->rt->store != NULL, 0))
        store_record_event (job, ev);
}
static inline void store_forget (struct job *job)
{
    if (job->rt->store)
        store_forget_job (job);
}
/* The job's entries as the store would write them (restore.c: the
 * history of a job restored from the store is already kept). */
void store_mark_kept (struct job *job);

/* The kept eventlog of job id (a new reference, taken out of the kept
 * set), or NULL. */
json_t *store_take_kept (struct runtime *rt, flux_jobid_t id);
/* Whether a kept eventlog of job id waits to be taken. */
bool store_has_kept (struct runtime *rt, flux_jobid_t id);
/* Forget the kept jobs nobody took: the scheduler lost them.  Returns
 * how many. */
int store_drop_kept (struct runtime *rt);
/* Before the restore: forget the kept histories of the ids for which
 * exists() is false (jobs the scheduler lost), so that no later job
 * given such an id can be taken for the lost one.  Returns how many. */
int store_drop_missing (struct runtime *rt,
                        bool (*exists) (uint64_t id, void *arg),
                        void *arg);

/* Write what was recorded (one write), then fdatasync if 'sync' (outside
 * the store's own lock; only the thread that calls store_maintain
 * syncs).  Takes the runtime lock only to take the buffer: never call it
 * with the runtime lock held (ops callbacks).  Returns bytes written, or
 * -1. */
ssize_t store_flush (struct runtime *rt, bool sync);
/* Merge the snapshot and the journals written so far into a new
 * snapshot when the journal has grown past its bound (or 'force').
 * Reads and writes files only, outside the runtime lock.  0 or -1. */
int store_maintain (struct runtime *rt, bool force);

#endif
