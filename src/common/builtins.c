/* Builtin jobtap plugins, loaded before any configured plugin. */
#include <flux/core.h>
#include <flux/jobtap.h>

#include "builtins.h"

/* .priority-default: priority = urgency, as Flux's builtin. */
static int priority_cb (flux_plugin_t *p,
                        const char *topic,
                        flux_plugin_arg_t *args,
                        void *data)
{
    int urgency = FLUX_JOB_URGENCY_DEFAULT;
    (void)topic;
    (void)data;
    if (flux_plugin_arg_unpack (args,
                                FLUX_PLUGIN_ARG_IN,
                                "{s:i}",
                                "urgency", &urgency) < 0)
        return flux_jobtap_error (p, args, "priority-default: %s",
                                  flux_plugin_arg_strerror (args));
    return flux_plugin_arg_pack (args,
                                 FLUX_PLUGIN_ARG_OUT,
                                 "{s:I}",
                                 "priority", (json_int_t)urgency);
}

int builtin_priority_default_init (flux_plugin_t *p)
{
    static const struct flux_plugin_handler tab[] = {
        { "job.state.priority", priority_cb, NULL },
        { "job.priority.get", priority_cb, NULL },
        { NULL, NULL, NULL },
    };
    return flux_plugin_register (p, NULL, tab);
}

/* .dependency-slurm: Slurm's own dependency schemes.  Slurm enforces
 * them, so accepting the scheme is all we do: no jobtap dependency is
 * added and the job is never held here. */
static int slurm_dep_cb (flux_plugin_t *p,
                         const char *topic,
                         flux_plugin_arg_t *args,
                         void *data)
{
    (void)p;
    (void)topic;
    (void)args;
    (void)data;
    return 0;
}

int builtin_dependency_slurm_init (flux_plugin_t *p)
{
    static const struct flux_plugin_handler tab[] = {
        { "job.dependency.after", slurm_dep_cb, NULL },
        { "job.dependency.afterany", slurm_dep_cb, NULL },
        { "job.dependency.afterok", slurm_dep_cb, NULL },
        { "job.dependency.afternotok", slurm_dep_cb, NULL },
        { "job.dependency.aftercorr", slurm_dep_cb, NULL },
        { "job.dependency.afterburstbuffer", slurm_dep_cb, NULL },
        { "job.dependency.singleton", slurm_dep_cb, NULL },
        { NULL, NULL, NULL },
    };
    return flux_plugin_register (p, NULL, tab);
}

/* .update-duration: as Flux's, the instance owner's duration update (a
 * Slurm operator's TimeLimit) counts as validated, so job.validate does
 * not judge it, unless the plugin's conf says owner-allow-any = 0.  A
 * running job's limit follows Slurm's own rules (a user may shorten it),
 * not Flux's owner-only one. */
static int update_duration_cb (flux_plugin_t *p,
                               const char *topic,
                               flux_plugin_arg_t *args,
                               void *data)
{
    double duration;
    int rolemask = 0, owner_allow_any = 1;
    (void)topic;
    (void)data;

    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:F s:{s:i}}",
                                "value", &duration, "cred", "rolemask",
                                &rolemask)
        < 0)
        return flux_jobtap_error (p, args, "plugin args unpack failed");
    if (duration < 0.)
        return flux_jobtap_error (p, args, "duration must not be negative");
    (void)flux_plugin_conf_unpack (p, "{s:i}", "owner-allow-any",
                                   &owner_allow_any);
    if ((rolemask & FLUX_ROLE_OWNER) && owner_allow_any)
        return flux_plugin_arg_pack (args, FLUX_PLUGIN_ARG_OUT, "{s:i}",
                                     "validated", 1);
    return 0;
}

int builtin_update_duration_init (flux_plugin_t *p)
{
    return flux_plugin_add_handler (p, "job.update.attributes.system.duration",
                                    update_duration_cb, NULL);
}
