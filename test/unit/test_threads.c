/* Concurrent callers: many threads drive jobs through the host interface
 * while others reprioritize, list and call services (one recursive lock). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host.h"
#include "tap.h"
#include "util.h"

#define NTHREADS 4
#define NJOBS 100

static int failures[NTHREADS];
static volatile int done;

static void *worker (void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int i = 0; i < NJOBS; i++) {
        jobtap_host_error_t err;
        uint64_t id = 1 + t * NJOBS + i;
        uint64_t token = 0;
        json_t *js = json_pack ("{s:{s:{s:{s:s s:i}}}}", "attributes",
                                "system", "policy", "tag", "thr",
                                "priority", i);
        if (jobtap_host_submit (js, 1, 16, 1.0, 0, NULL, &token, &err) < 0
            || jobtap_host_job_new (token, id, 1, 16, 1.0, NULL, &err) < 0
            || jobtap_host_job_urgency (id, 20) < 0
            || jobtap_host_job_run (id, NULL) < 0
            || jobtap_host_job_finish (id, JOBTAP_RESULT_COMPLETED, 0, NULL)
                   < 0
            || jobtap_host_job_inactive (id) < 0)
            failures[t]++;
        json_decref (js);
        if (i % 10 == 0) {
            /* a submit that is refused later */
            js = json_pack ("{s:{s:{s:{s:s}}}}", "attributes", "system",
                            "policy", "tag", "abort");
            if (jobtap_host_submit (js, 1, 16, 1.0, 0, NULL, &token, &err)
                == 0)
                jobtap_host_submit_abort (token);
            json_decref (js);
        }
    }
    return NULL;
}

static void *meddler (void *arg)
{
    (void)arg;
    while (!done) {
        size_t n = 0;
        uint64_t *ids = jobtap_host_job_ids (&n);
        for (size_t i = 0; i < n; i++) {
            int64_t p;
            json_t *info;
            jobtap_host_job_priority (ids[i], &p);
            if ((info = jobtap_host_job_info (ids[i])))
                json_decref (info);
        }
        free (ids);
        jobtap_host_reprioritize_all ();
        json_t *q = jobtap_host_plugin_query ("policy.so", NULL);
        json_decref (q);
    }
    return NULL;
}

int main (void)
{
    pthread_t th[NTHREADS], m;
    jobtap_host_error_t err;
    char text[1024];
    int total = 0;

    test_reset ();
    snprintf (text, sizeof (text),
              "[slurm-jobtap]\ninactive-max = 50\n"
              "[job-manager]\nplugins = [ { load = \"%s\" } ]\n",
              plugin_path ("policy.so"));
    jobtap_host_init (&test_ops, NULL);
    if (jobtap_host_load_config (write_config ("thr.conf", text), &err) < 0)
        bail_out ("%s", err.text);
    pthread_create (&m, NULL, meddler, NULL);
    for (int i = 0; i < NTHREADS; i++)
        pthread_create (&th[i], NULL, worker, (void *)(intptr_t)i);
    for (int i = 0; i < NTHREADS; i++) {
        pthread_join (th[i], NULL);
        total += failures[i];
    }
    done = 1;
    pthread_join (m, NULL);
    isint (total, 0, "every job went through its life without error");
    isint (log_count ("^policy: aux destroyed: thr$"), NTHREADS * NJOBS,
           "every job's aux was destroyed exactly once");
    isint (log_count ("^policy: aux destroyed: abort$"),
           NTHREADS * (NJOBS / 10), "aborted submits released their aux");
    size_t n = 0, active = 0;
    uint64_t *ids = jobtap_host_job_ids (&n);
    ok (ids != NULL, "the job ids are listed (%zu inactive jobs kept)", n);
    for (size_t i = 0; i < n; i++)
        if (jobtap_host_job_state (ids[i]) != JOBTAP_STATE_INACTIVE)
            active++;
    isint (active, 0, "no active jobs remain");
    free (ids);
    ok (jobtap_host_job_info (1) == NULL,
        "old inactive jobs were purged (inactive-max)");
    jobtap_host_fini ();
    json_decref (test_log);
    json_decref (test_actions);
    done_testing ();
}
