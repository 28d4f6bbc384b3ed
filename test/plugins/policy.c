/* policy.so: a jobtap test plugin linked against NO library.  Its flux_*
 * and json_* symbols resolve from the host process at dlopen, as plugins
 * built for Flux's job manager expect.  Behaviour is driven by the job's
 * attributes.system.policy object. */
#include <flux/core.h>
#include <flux/jobtap.h>

static int aux_live;

struct tag {
    char text[64];
};

static void tag_destroy (void *arg)
{
    struct tag *t = arg;
    aux_live--;
    flux_log (NULL, LOG_INFO, "policy: aux destroyed: %s", t->text);
    free (t);
}

static json_t *policy_of (flux_plugin_arg_t *args)
{
    json_t *jobspec = NULL;
    json_t *policy = NULL;
    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:o}",
                                "jobspec", &jobspec) < 0)
        return NULL;
    json_unpack (jobspec, "{s:{s:{s:o}}}", "attributes", "system", "policy",
                 &policy);
    return policy;
}

static int create_cb (flux_plugin_t *p, const char *topic,
                      flux_plugin_arg_t *args, void *data)
{
    json_t *policy = policy_of (args);
    (void)topic;
    (void)data;
    if (json_is_true (json_object_get (policy, "create-reject")))
        return flux_jobtap_reject_job (p, args, "create-reject: nope");
    return 0;
}

static int validate_cb (flux_plugin_t *p, const char *topic,
                        flux_plugin_arg_t *args, void *data)
{
    json_t *policy = policy_of (args);
    const char *msg = NULL;
    json_int_t duration = 0;
    const char *tagtext = NULL;
    (void)topic;
    (void)data;

    if (json_unpack (policy, "{s:s}", "reject", &msg) == 0)
        return flux_jobtap_reject_job (p, args, "policy: %s", msg);
    if (json_is_true (json_object_get (policy, "reject-default")))
        return flux_jobtap_reject_job (p, args, NULL);
    if (json_is_true (json_object_get (policy, "fail-bare")))
        return -1;
    if (json_unpack (policy, "{s:I}", "duration", &duration) == 0
        && flux_jobtap_jobspec_update_pack (p, "{s:I}",
                                            "attributes.system.duration",
                                            duration) < 0)
        return flux_jobtap_reject_job (p, args, "update failed");
    if (json_unpack (policy, "{s:s}", "tag", &tagtext) == 0) {
        struct tag *t = calloc (1, sizeof (*t));
        if (!t)
            return -1;
        snprintf (t->text, sizeof (t->text), "%s", tagtext);
        if (flux_jobtap_job_aux_set (p, FLUX_JOBTAP_CURRENT_JOB, "tag", t,
                                     tag_destroy) < 0) {
            free (t);
            return flux_jobtap_reject_job (p, args, "aux_set failed");
        }
        aux_live++;
    }
    return 0;
}

static int new_cb (flux_plugin_t *p, const char *topic,
                   flux_plugin_arg_t *args, void *data)
{
    flux_jobid_t id;
    struct tag *t;
    (void)topic;
    (void)data;
    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:I}", "id", &id)
        < 0)
        return -1;
    if ((t = flux_jobtap_job_aux_get (p, FLUX_JOBTAP_CURRENT_JOB, "tag")))
        flux_log (NULL, LOG_INFO, "policy: job.new %ju has tag %s",
                  (uintmax_t)id, t->text);
    return 0;
}

static int dep_cb (flux_plugin_t *p, const char *topic,
                   flux_plugin_arg_t *args, void *data)
{
    flux_jobid_t id;
    const char *value = "";
    char desc[128];
    (void)topic;
    (void)data;
    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:I s:{s?s}}",
                                "id", &id,
                                "dependency", "value", &value) < 0)
        return flux_jobtap_reject_job (p, args,
                                       "failed to unpack dependency args");
    if (!strcmp (value, "bad"))
        return flux_jobtap_reject_job (p, args, "bad dependency value");
    snprintf (desc, sizeof (desc), "test=%s", value);
    if (flux_jobtap_dependency_add (p, id, desc) < 0)
        return flux_jobtap_reject_job (p, args, "dependency_add: %s",
                                       strerror (errno));
    return 0;
}

static int priority_cb (flux_plugin_t *p, const char *topic,
                        flux_plugin_arg_t *args, void *data)
{
    json_t *policy = policy_of (args);
    json_int_t prio;
    (void)topic;
    (void)data;
    if (json_is_true (json_object_get (policy, "priority-unavail")))
        return flux_jobtap_priority_unavail (p, args);
    if (json_unpack (policy, "{s:I}", "priority", &prio) == 0)
        return flux_plugin_arg_pack (args, FLUX_PLUGIN_ARG_OUT, "{s:I}",
                                     "priority", prio);
    return 0;
}

static int update_cb (flux_plugin_t *p, const char *topic,
                      flux_plugin_arg_t *args, void *data)
{
    const char *value = NULL;
    json_int_t userid = -1;
    (void)topic;
    (void)data;
    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN,
                                "{s:{s:I} s:s}",
                                "cred", "userid", &userid,
                                "value", &value) < 0)
        return flux_jobtap_reject_job (p, args, "update: %s",
                                       flux_plugin_arg_strerror (args));
    if (!strcmp (value, "fail"))
        return flux_jobtap_reject_job (p, args, "rejecting update: %s", value);
    if (!strcmp (value, "extra"))
        return flux_plugin_arg_pack (args, FLUX_PLUGIN_ARG_OUT,
                                     "{s:i s:{s:s}}",
                                     "validated", 1,
                                     "updates",
                                       "attributes.system.extra", "yes");
    return 0;
}

static int inactive_cb (flux_plugin_t *p, const char *topic,
                        flux_plugin_arg_t *args, void *data)
{
    flux_job_result_t result;
    flux_jobid_t id = 0;
    (void)data;
    flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:I}", "id", &id);
    if (flux_jobtap_get_job_result (p, FLUX_JOBTAP_CURRENT_JOB, &result) == 0)
        flux_log (NULL, LOG_INFO, "policy: %s %ju result=%s", topic,
                  (uintmax_t)id, flux_job_resulttostr (result, "l"));
    return 0;
}

static int conf_cb (flux_plugin_t *p, const char *topic,
                    flux_plugin_arg_t *args, void *data)
{
    const char *value = NULL;
    (void)topic;
    (void)data;
    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN,
                                "{s:{s?{s?s}}}",
                                "conf", "test-policy", "mode", &value) < 0)
        return flux_jobtap_error (p, args, "policy: %s",
                                  flux_plugin_arg_strerror (args));
    if (value && !strcmp (value, "bad"))
        return flux_jobtap_error (p, args, "Error parsing [test-policy]: bad mode");
    flux_log (NULL, LOG_INFO, "policy: conf.update mode=%s",
              value ? value : "(none)");
    return 0;
}

static int query_cb (flux_plugin_t *p, const char *topic,
                     flux_plugin_arg_t *args, void *data)
{
    (void)p;
    (void)topic;
    (void)data;
    return flux_plugin_arg_pack (args, FLUX_PLUGIN_ARG_OUT, "{s:i}",
                                 "aux_live", aux_live);
}

static void release_cb (flux_t *h, flux_msg_handler_t *mh,
                        const flux_msg_t *msg, void *arg)
{
    flux_plugin_t *p = arg;
    json_int_t id, prio;
    (void)mh;
    if (flux_request_unpack (msg, NULL, "{s:I s:I}", "id", &id,
                             "priority", &prio) < 0) {
        flux_respond_error (h, msg, EPROTO, flux_msg_last_error (msg));
        return;
    }
    if (flux_jobtap_reprioritize_job (p, id, prio) < 0) {
        flux_respond_error (h, msg, errno, NULL);
        return;
    }
    flux_respond (h, msg, NULL);
}

static void undep_cb (flux_t *h, flux_msg_handler_t *mh,
                      const flux_msg_t *msg, void *arg)
{
    flux_plugin_t *p = arg;
    json_int_t id;
    const char *desc;
    (void)mh;
    if (flux_request_unpack (msg, NULL, "{s:I s:s}", "id", &id,
                             "description", &desc) < 0
        || flux_jobtap_dependency_remove (p, id, desc) < 0) {
        flux_respond_error (h, msg, errno, "dependency_remove failed");
        return;
    }
    flux_respond_pack (h, msg, "{s:s}", "removed", desc);
}

static void raise_cb (flux_t *h, flux_msg_handler_t *mh,
                      const flux_msg_t *msg, void *arg)
{
    flux_plugin_t *p = arg;
    json_int_t id;
    int severity = 0;
    (void)mh;
    if (flux_request_unpack (msg, NULL, "{s:I s?i}", "id", &id,
                             "severity", &severity) < 0
        || flux_jobtap_raise_exception (p, id, "test", severity,
                                        "raised by %s", "policy") < 0) {
        flux_respond_error (h, msg, errno, NULL);
        return;
    }
    flux_respond (h, msg, "{}");
}

static void update_svc_cb (flux_t *h, flux_msg_handler_t *mh,
                           const flux_msg_t *msg, void *arg)
{
    flux_plugin_t *p = arg;
    json_int_t id;
    (void)mh;
    if (flux_request_unpack (msg, NULL, "{s:I}", "id", &id) < 0
        || flux_jobtap_jobspec_update_id_pack (p, id, "{s:s}",
                                               "attributes.system.svc",
                                               "set") < 0) {
        flux_respond_error (h, msg, errno, NULL);
        return;
    }
    flux_respond (h, msg, NULL);
}

static const struct flux_plugin_handler tab[] = {
    { "job.create", create_cb, NULL },
    { "job.validate", validate_cb, NULL },
    { "job.new", new_cb, NULL },
    { "job.dependency.test", dep_cb, NULL },
    { "job.state.priority", priority_cb, NULL },
    { "job.priority.get", priority_cb, NULL },
    { "job.update.attributes.system.policy-test", update_cb, NULL },
    { "job.inactive-add", inactive_cb, NULL },
    { "conf.update", conf_cb, NULL },
    { "plugin.query", query_cb, NULL },
    { NULL, NULL, NULL },
};

int flux_plugin_init (flux_plugin_t *p)
{
    if (flux_plugin_register (p, "policy", tab) < 0
        || flux_jobtap_service_register (p, "release", release_cb, p) < 0
        || flux_jobtap_service_register (p, "undep", undep_cb, p) < 0
        || flux_jobtap_service_register_ex (p, "raise", FLUX_ROLE_USER,
                                            raise_cb, p) < 0
        || flux_jobtap_service_register (p, "update", update_svc_cb, p) < 0)
        return -1;
    return 0;
}
