/* perilog: prologs and epilogs the scheduler waits for. In Flux the job
 * manager holds a job's start while a plugin's prolog runs
 * (flux_jobtap_prolog_start .. prolog_finish) and its clean-up while an
 * epilog runs. Here the scheduler starts and ends jobs, so the host asks
 * after job.state.run (or cleanup) whether any is active
 * (jobtap_host_job_perilog_wait) and, if so, waits until the runtime
 * tells it with ops.perilog_done.
 *
 * It decides; event.c, when a job's events settle, does what it says
 * (raises the prolog exception, posts start, tells the host).
 *
 * Callers: host (the API), event.c. Runtime mutex held. */
#ifndef JOBTAP_PERILOG_H
#define JOBTAP_PERILOG_H

#include <stdbool.h>

#include "job.h"

/* Whether a prolog the host waits for has failed while the job is still
 * in RUN: Flux's perilog then raises a fatal "prolog" exception. */
bool perilog_prolog_failed (struct job *job);

/* What the host waits for is over: its prologs ("epilog" false) or
 * epilogs ended, with their status and why they failed (NULL). */
struct perilog_done {
    bool epilog;
    int status;
    const char *note;  /* borrowed from the job */
    bool start;        /* post "start": the prologs went well in RUN */
};

/* If the host waits for the job's prologs or epilogs and none is active
 * any more (or the job left RUN while its prologs ran): true, the wait
 * over (the job waits for nothing more) and *done what to tell. */
bool perilog_settle (struct job *job, struct perilog_done *done);

#endif
