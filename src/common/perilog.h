/* perilog: prologs and epilogs the scheduler waits for. In Flux the job
 * manager holds a job's start while a plugin's prolog runs
 * (flux_jobtap_prolog_start .. prolog_finish) and its clean-up while an
 * epilog runs. Here the scheduler starts and ends jobs, so the host asks
 * after job.state.run (or cleanup) whether any is active
 * (jobtap_host_job_perilog_wait) and, if so, waits until the runtime
 * tells it with ops.perilog_done.
 *
 * Callers: host (the API), event.c (perilog_sync, when a job's events
 * settle). Runtime mutex held. */
#ifndef JOBTAP_PERILOG_H
#define JOBTAP_PERILOG_H

#include "job.h"

/* If the host waits for the job's prologs or epilogs and none is active
 * any more (or the job left RUN while its prologs ran), tell it. */
void perilog_sync (struct job *job);

#endif
