/* Prologs and epilogs the scheduler waits for (perilog.h). */
#include <errno.h>
#include <stdlib.h>
#include <jansson.h>
#include <flux/jobtap.h>

#include "host.h"
#include "job.h"
#include "log.h"
#include "perilog.h"
#include "runtime.h"
#include "state.h"

int jobtap_host_job_perilog_wait (uint64_t id)
{
    struct runtime *rt = host_runtime ();
    struct job *job;
    int rc = -1;

    runtime_lock ();
    if (!(job = table_find_bound (rt, id)))
        goto out;
    rc = 0;
    if (job->perilog_active > 0 && job->state == FLUX_JOB_STATE_RUN) {
        job->perilog_wait = PERILOG_WAIT_PROLOG;
        rc = 1;
    }
    else if (job->perilog_active > 0
             && job->state == FLUX_JOB_STATE_CLEANUP) {
        job->perilog_wait = PERILOG_WAIT_EPILOG;
        rc = 1;
    }
out:
    runtime_unlock ();
    return rc;
}

/* A prolog ends badly when one finished with a status, or when the job
 * left RUN meanwhile (a fatal exception: its note says why). */
static const char *prolog_failure (struct job *job, int *status)
{
    const char *note = NULL;

    if (job->state != FLUX_JOB_STATE_RUN) {
        json_t *ctx = json_object_get (job->end_event, "context");
        note = json_string_value (json_object_get (ctx, "note"));
        *status = job->prolog_status ? job->prolog_status : 1;
        return note && *note ? note
                             : job->prolog_note ? job->prolog_note
                                                : "job left RUN during its "
                                                  "prolog";
    }
    *status = job->prolog_status;
    return job->prolog_status ? job->prolog_note : NULL;
}

bool perilog_prolog_failed (struct job *job)
{
    return job->perilog_wait == PERILOG_WAIT_PROLOG
           && job->state == FLUX_JOB_STATE_RUN && job->prolog_status != 0
           && job->perilog_active == 0;
}

bool perilog_settle (struct job *job, struct perilog_done *done)
{
    done->status = 0;
    done->note = NULL;
    switch (job->perilog_wait) {
    case PERILOG_WAIT_PROLOG:
        if (job->perilog_active > 0 && job->state == FLUX_JOB_STATE_RUN)
            return false;
        done->note = prolog_failure (job, &done->status);
        break;
    case PERILOG_WAIT_EPILOG:
        if (job->perilog_active > 0)
            return false;
        break;
    default:
        return false;
    }
    done->epilog = job->perilog_wait == PERILOG_WAIT_EPILOG;
    job->perilog_wait = PERILOG_WAIT_NONE;
    /* the host starts the job once its prologs are done */
    done->start = !done->epilog && done->status == 0
                  && job->state == FLUX_JOB_STATE_RUN
                  && !posted_test (job, "start");
    return true;
}
