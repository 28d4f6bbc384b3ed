/* fail-priority.so: a C jobtap plugin whose job.priority.get fails for
 * every job, logging an error each time: the C side of bench/runaway.sh. */
#include <stdint.h>
#include <flux/core.h>
#include <flux/jobtap.h>

static int priority_get (flux_plugin_t *p,
                         const char *topic,
                         flux_plugin_arg_t *args,
                         void *arg)
{
    flux_jobid_t id = 0;
    (void)topic;
    (void)arg;
    (void)flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:I}", "id", &id);
    flux_log (flux_jobtap_get_flux (p), LOG_ERR,
              "fail-priority: no priority for job %ju", (uintmax_t)id);
    return -1;
}

int flux_plugin_init (flux_plugin_t *p)
{
    return flux_plugin_add_handler (p, "job.priority.get", priority_get, NULL);
}
