/* A jobtap plugin for the integration tests: it subscribes to each job in
 * job.new and unsubscribes from inside its second job.event.* callback,
 * as flux-core's own subscribe test plugin does.  Each event it hears is
 * logged as "unsubscribe: job N heard EVENT". */
#include <flux/core.h>
#include <flux/jobtap.h>
#include <inttypes.h>
#include <stdint.h>

static int job_new (flux_plugin_t *p, const char *topic,
                    flux_plugin_arg_t *args, void *arg)
{
    (void)topic;
    (void)args;
    (void)arg;
    if (flux_jobtap_job_subscribe (p, FLUX_JOBTAP_CURRENT_JOB) < 0)
        flux_log_error (flux_jobtap_get_flux (p), "unsubscribe: subscribe");
    return 0;
}

static int job_event (flux_plugin_t *p, const char *topic,
                      flux_plugin_arg_t *args, void *arg)
{
    flux_jobid_t id;
    int heard;
    (void)arg;

    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:I}",
                                "id", &id) < 0)
        return -1;
    heard = (int)(intptr_t)flux_jobtap_job_aux_get (p, id, "heard") + 1;
    flux_jobtap_job_aux_set (p, id, "heard", (void *)(intptr_t)heard, NULL);
    flux_log (flux_jobtap_get_flux (p), LOG_INFO,
              "unsubscribe: job %ju heard %s", (uintmax_t)id,
              topic + sizeof ("job.event.") - 1);
    if (heard == 2)
        flux_jobtap_job_unsubscribe (p, id);
    return 0;
}

int flux_plugin_init (flux_plugin_t *p)
{
    if (flux_plugin_add_handler (p, "job.new", job_new, NULL) < 0
        || flux_plugin_add_handler (p, "job.event.*", job_event, NULL) < 0)
        return -1;
    return 0;
}
