/* api.so: exposes its plugin handle and a hook, so unit tests can call
 * flux_jobtap_* as this plugin, both outside and inside callbacks. */
#include <flux/core.h>
#include <flux/jobtap.h>

flux_plugin_t *api_plugin;
int (*api_hook) (flux_plugin_t *p, const char *topic, flux_plugin_arg_t *args);

static int cb (flux_plugin_t *p, const char *topic, flux_plugin_arg_t *args,
               void *data)
{
    (void)data;
    return api_hook ? api_hook (p, topic, args) : 0;
}

static const struct flux_plugin_handler tab[] = {
    { "job.create", cb, NULL },
    { "job.validate", cb, NULL },
    { "job.new", cb, NULL },
    { "job.dependency.api", cb, NULL },
    { "job.state.*", cb, NULL },
    { "job.event.*", cb, NULL },
    { "job.inactive-add", cb, NULL },
    { "job.inactive-remove", cb, NULL },
    { "job.destroy", cb, NULL },
    { "job.update", cb, NULL },
    { "api.*", cb, NULL },
    { NULL, NULL, NULL },
};

int flux_plugin_init (flux_plugin_t *p)
{
    api_plugin = p;
    return flux_plugin_register (p, "api", tab);
}
