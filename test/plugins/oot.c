/* oot.so: built out of tree with only `pkg-config --cflags --libs
 * slurm-jobtap`.  Rejects jobs named "oot-reject", reports its conf. */
#include <flux/core.h>
#include <flux/jobtap.h>

static int validate_cb (flux_plugin_t *p, const char *topic,
                        flux_plugin_arg_t *args, void *data)
{
    const char *name = NULL;
    (void)topic;
    (void)data;
    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN,
                                "{s:{s:{s:{s?{s?s}}}}}",
                                "jobspec", "attributes", "system", "job",
                                "name", &name) < 0)
        return 0;
    if (name && !strcmp (name, "oot-reject"))
        return flux_jobtap_reject_job (p, args, "oot: job name not allowed");
    return 0;
}

int flux_plugin_init (flux_plugin_t *p)
{
    const char *greeting = "none";
    if (flux_plugin_conf_unpack (p, "{s:s}", "greeting", &greeting) < 0
        && errno != ENOENT)
        greeting = "unpack-error";
    flux_log (NULL, LOG_INFO, "oot: init greeting=%s", greeting);
    return flux_plugin_add_handler (p, "job.validate", validate_cb, NULL);
}
