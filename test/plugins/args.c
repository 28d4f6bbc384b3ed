/* args.so: catch-all "job.*" that logs each topic and checks the standard
 * IN args; subscribes to job events at job.new. */
#include <string.h>

#include <flux/core.h>
#include <flux/jobtap.h>

static int cb (flux_plugin_t *p, const char *topic, flux_plugin_arg_t *args,
               void *data)
{
    json_t *jobspec;
    json_int_t id, userid, priority;
    int urgency, state;
    double t_submit;
    (void)data;

    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN,
                                "{s:o s:I s:I s:i s:i s:I s:f}",
                                "jobspec", &jobspec,
                                "id", &id,
                                "userid", &userid,
                                "urgency", &urgency,
                                "state", &state,
                                "priority", &priority,
                                "t_submit", &t_submit) < 0) {
        flux_log (NULL, LOG_ERR, "args-check: %s: %s", topic,
                  flux_plugin_arg_strerror (args));
        return -1;
    }
    flux_log (NULL, LOG_INFO, "args-check: %s: state=%s prio=%jd: OK", topic,
              flux_job_statetostr (state, "L"), (intmax_t)priority);
    if (!strcmp (topic, "job.validate")) {
        json_int_t duration = -1;
        (void)json_unpack (jobspec, "{s:{s:{s:I}}}", "attributes", "system",
                           "duration", &duration);
        flux_log (NULL, LOG_INFO, "args-jobspec: job.validate duration=%jd",
                  (intmax_t)duration);
    }
    if (!strcmp (topic, "job.new")
        && flux_jobtap_job_subscribe (p, FLUX_JOBTAP_CURRENT_JOB) < 0)
        flux_log_error (NULL, "args-check: subscribe");
    /* the catch-all also sees job.update.* and job.dependency.*: allow */
    return 0;
}

int flux_plugin_init (flux_plugin_t *p)
{
    return flux_plugin_add_handler (p, "job.*", cb, NULL);
}
