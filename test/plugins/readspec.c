/* readspec.so: reads a few members of the jobspec with a format of
 * scalars, as most policies do, and logs what it saw; with conf
 * set-queue, job.validate then updates the queue, and job.new reads the
 * jobspec again. */
#include <string.h>
#include <flux/core.h>
#include <flux/jobtap.h>

static const char *set_queue;

static int read_cb (flux_plugin_t *p, const char *topic,
                    flux_plugin_arg_t *args, void *data)
{
    double duration = -1.;
    const char *queue = "(none)", *name = "(none)";
    (void)data;
    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN,
                                "{s:{s:{s:{s?F s?s s?{s?s}}}}}", "jobspec",
                                "attributes", "system", "duration", &duration,
                                "queue", &queue, "job", "name", &name)
        < 0) {
        flux_log (NULL, LOG_INFO, "readspec: %s: %s", topic,
                  flux_plugin_arg_strerror (args));
        return -1;
    }
    flux_log (NULL, LOG_INFO, "readspec: %s duration=%g queue=%s name=%s",
              topic, duration, queue, name);
    if (set_queue && !strcmp (topic, "job.validate"))
        return flux_jobtap_jobspec_update_pack (p, "{s:s}",
                                                "attributes.system.queue",
                                                set_queue);
    return 0;
}

int flux_plugin_init (flux_plugin_t *p)
{
    if (flux_plugin_conf_unpack (p, "{s:s}", "set-queue", &set_queue) < 0)
        set_queue = NULL;
    if (flux_plugin_add_handler (p, "job.validate", read_cb, NULL) < 0
        || flux_plugin_add_handler (p, "job.new", read_cb, NULL) < 0)
        return -1;
    return 0;
}
