/* A jobtap plugin for t0920: a policy on an attribute users set with
 * --setattr (spank_jobtap.so), as a Flux site's plugin reads
 * attributes.system.KEY:
 *
 *   job.validate  attributes.system.bank-check "deny" rejects the job with
 *                 "setattr-policy: bank-check denies this job"
 *   job.new       logs "setattr-policy: job.new id=N KEY=VALUE" (VALUE as
 *                 compact JSON, so its type shows) for bank-check and limit
 *                 when the job has them
 */
#include <flux/core.h>
#include <flux/jobtap.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* attributes.system.<key> of the job, or NULL. */
static json_t *attribute (flux_plugin_arg_t *args, const char *key)
{
    json_t *system = NULL;
    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:{s:{s:o}}}",
                                "jobspec", "attributes", "system", &system)
        < 0)
        return NULL;
    return json_object_get (system, key);
}

static int validate (flux_plugin_t *p, const char *topic,
                     flux_plugin_arg_t *args, void *arg)
{
    json_t *v = attribute (args, "bank-check");
    (void)topic;
    (void)arg;

    if (json_is_string (v) && !strcmp (json_string_value (v), "deny"))
        return flux_jobtap_reject_job (p, args,
                                       "setattr-policy: bank-check denies "
                                       "this job");
    return 0;
}

static int new_job (flux_plugin_t *p, const char *topic,
                    flux_plugin_arg_t *args, void *arg)
{
    static const char *keys[] = {"bank-check", "limit"};
    flux_jobid_t id;
    (void)topic;
    (void)arg;

    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:I}", "id", &id)
        < 0)
        return -1;
    for (size_t i = 0; i < sizeof (keys) / sizeof (keys[0]); i++) {
        json_t *v = attribute (args, keys[i]);
        char *s = v ? json_dumps (v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
        if (s)
            flux_log (flux_jobtap_get_flux (p), LOG_INFO,
                      "setattr-policy: job.new id=%ju %s=%s", (uintmax_t)id,
                      keys[i], s);
        free (s);
    }
    return 0;
}

static const struct flux_plugin_handler tab[] = {
    {"job.validate", validate, NULL},
    {"job.new", new_job, NULL},
    {0},
};

int flux_plugin_init (flux_plugin_t *p)
{
    return flux_plugin_register (p, "setattr-policy", tab);
}
