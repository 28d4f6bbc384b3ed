/* flux_t, logging, job state strings and ENOSYS stand-ins (messages
 * and RPCs: test_msg.c; the reactor: test_reactor.c). */
#include <errno.h>
#include <string.h>

#include <flux/core.h>
#include <flux/jobtap.h>

#include "host.h"
#include "tap.h"
#include "util.h"

static int freed;
static void free_cb (void *arg)
{
    (void)arg;
    freed++;
}

int main (void)
{
    flux_job_state_t st;
    flux_job_result_t res;

    test_reset ();
    jobtap_host_init (&test_ops, NULL);

    is (flux_job_statetostr (FLUX_JOB_STATE_PRIORITY, "L"), "PRIORITY",
        "statetostr L");
    is (flux_job_statetostr (FLUX_JOB_STATE_PRIORITY, "l"), "priority",
        "statetostr l");
    is (flux_job_statetostr (FLUX_JOB_STATE_SCHED, "S"), "S", "statetostr S");
    is (flux_job_statetostr (FLUX_JOB_STATE_RUN, "s"), "r", "statetostr s");
    is (flux_job_statetostr (1234, "L"), "(unknown)", "unknown state");
    ok (flux_job_strtostate ("depend", &st) == 0
            && st == FLUX_JOB_STATE_DEPEND,
        "strtostate");
    errno = 0;
    ok (flux_job_strtostate ("bogus", &st) < 0 && errno == EINVAL,
        "strtostate bogus: EINVAL");
    is (flux_job_resulttostr (FLUX_JOB_RESULT_TIMEOUT, "l"), "timeout",
        "resulttostr");
    ok (flux_job_strtoresult ("CANCELED", &res) == 0
            && res == FLUX_JOB_RESULT_CANCELED,
        "strtoresult");
    ok (FLUX_JOBTAP_CURRENT_JOB == 0xFFFFFFFFFFFFFFFFULL,
        "FLUX_JOBTAP_CURRENT_JOB is FLUX_JOBID_ANY");
    ok (FLUX_JOB_PRIORITY_MAX == 4294967295U, "FLUX_JOB_PRIORITY_MAX");

    flux_log (NULL, LOG_INFO, "hello %d", 42);
    ok (log_find ("^hello 42$") != NULL, "flux_log with a NULL handle logs");
    errno = ENOENT;
    flux_log_error (NULL, "oops");
    is (log_find ("^oops"), "oops: No such file or directory",
        "flux_log_error appends strerror (errno)");
    ok (errno == ENOENT, "... and preserves errno");

    flux_t *h = NULL;
    errno = 0;
    ok (flux_aux_set (h, "x", (void *)1, NULL) < 0 && errno == EINVAL,
        "flux_aux_set (NULL): EINVAL");

    errno = 0;
    ok (flux_get_reactor (NULL) == NULL && errno == EINVAL,
        "flux_get_reactor (NULL): EINVAL (test_reactor.c has the rest)");
    errno = 0;
    ok (flux_rpc_pack (NULL, "x", 0, 0, "{}") == NULL && errno == EINVAL,
        "flux_rpc_pack (NULL handle): EINVAL, as Flux");
    errno = 0;
    ok (flux_attr_get (NULL, "rank") == NULL && errno == ENOSYS,
        "flux_attr_get: ENOSYS");
    errno = 0;
    ok (flux_timer_watcher_create (NULL, 1., 0., NULL, NULL) == NULL
            && errno == EINVAL,
        "flux_timer_watcher_create (NULL): EINVAL");
    errno = 0;
    flux_watcher_start (NULL);
    flux_watcher_stop (NULL);
    flux_watcher_destroy (NULL);
    isint (errno, 0, "watcher start/stop/destroy on NULL are no-ops");

    /* handle aux via a real handle from a loaded plugin's point of view */
    jobtap_host_error_t err;
    if (jobtap_host_load_config (NULL, &err) < 0)
        bail_out ("%s", err.text);
    json_t *l = jobtap_host_plugin_list (true);
    isint (json_array_size (l), 5, "builtins-only config loads the five builtins");
    json_decref (l);

    ok (flux_request_decode (NULL, NULL, NULL) < 0 && errno == EINVAL,
        "flux_request_decode (NULL): EINVAL");
    is (flux_msg_last_error (NULL), "msg object is NULL",
        "flux_msg_last_error (NULL)");
    ok (flux_respond_error (NULL, NULL, EPERM, "x") < 0 && errno == EINVAL,
        "flux_respond_error (NULL msg): EINVAL");

    (void)free_cb;
    (void)freed;
    jobtap_host_fini ();
    json_decref (test_log);
    json_decref (test_actions);
    done_testing ();
}
