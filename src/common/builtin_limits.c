/* The builtins .limit-job-size and .limit-duration: Flux's [policy] and
 * [queues] limits on job.validate (a submission, and an update's
 * resulting jobspec), with Flux's rejections.  Each reads the whole
 * config on conf.update (policy.h) and takes job.validate only while a
 * limit it applies is set, so with none they cost a job nothing. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <jansson.h>
#include <flux/core.h>
#include <flux/jobtap.h>

#include "builtins.h"
#include "log.h"
#include "policy.h"

static const char *aux_key = "policy";

static struct policy *policy_of (flux_plugin_t *p)
{
    return flux_plugin_aux_get (p, aux_key);
}

/* Read the config into the plugin's policy and take job.validate while
 * has_limits says a limit is set. */
static int limits_conf_update (flux_plugin_t *p,
                               flux_plugin_arg_t *args,
                               bool (*has_limits) (const struct policy *),
                               flux_plugin_f validate)
{
    jobtap_host_error_t err;
    json_t *conf = NULL;
    struct policy *pol;

    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:o}", "conf",
                                &conf)
        < 0)
        return flux_jobtap_error (p, args, "%s: %s", flux_plugin_get_name (p),
                                  flux_plugin_arg_strerror (args));
    if (!(pol = policy_create (conf, NULL, 0, &err)))
        return flux_jobtap_error (p, args, "%s", err.text);
    /* the old policy goes with the handler that reads it, whatever
     * happens next */
    (void)flux_plugin_remove_handler (p, "job.validate");
    if (flux_plugin_aux_set (p, aux_key, pol, (flux_free_f)policy_destroy)
        < 0) {
        policy_destroy (pol);
        return flux_jobtap_error (p, args, "out of memory");
    }
    if (has_limits (pol)
        && flux_plugin_add_handler (p, "job.validate", validate, NULL) < 0)
        return flux_jobtap_error (p, args, "out of memory");
    return 0;
}

/* What a jobspec asks for, counted as Flux's job-size limit counts it:
 * nodes, slots (times nodes), cores and GPUs per slot. */
struct counts {
    int nnodes, nslots, slot_size, slot_gpus;
    char error[256];
};

static int count_level (json_t *level, int depth, int factor, struct counts *c)
{
    size_t i;
    json_t *v;

    if (!json_is_array (level)) {
        snprintf (c->error, sizeof (c->error), "level %d: must be an array",
                  depth);
        return -1;
    }
    json_array_foreach (level, i, v)
    {
        const char *type = NULL;
        int count = 0, exclusive = 0;
        json_t *with = NULL;
        json_error_t je;

        if (json_unpack_ex (v, &je, 0, "{s:s s:i s?b s?o}", "type", &type,
                            "count", &count, "exclusive", &exclusive, "with",
                            &with)
            < 0) {
            snprintf (c->error, sizeof (c->error), "level %d: %s", depth,
                      je.text);
            return -1;
        }
        if (count <= 0) {
            snprintf (c->error, sizeof (c->error),
                      "Invalid count %d for type '%s'", count, type);
            return -1;
        }
        if (!strcmp (type, "node"))
            c->nnodes = factor * count;
        else if (!strcmp (type, "slot"))
            c->nslots = count;
        else if (!strcmp (type, "core"))
            c->slot_size = count;
        else if (!strcmp (type, "gpu"))
            c->slot_gpus = count;
        if (with && count_level (with, depth + 1, factor * count, c) < 0)
            return -1;
    }
    return 0;
}

static int count_jobspec (json_t *jobspec, struct counts *c)
{
    json_t *resources = NULL;
    double duration;
    int version;
    json_error_t je;

    memset (c, 0, sizeof (*c));
    if (json_unpack_ex (jobspec, &je, 0, "{s:i s:o}", "version", &version,
                        "resources", &resources)
        < 0) {
        snprintf (c->error, sizeof (c->error), "at top level: %s", je.text);
        return -1;
    }
    if (json_unpack_ex (jobspec, &je, 0, "{s:{s:{s:F}}}", "attributes",
                        "system", "duration", &duration)
        < 0) {
        snprintf (c->error, sizeof (c->error),
                  "at top level: getting duration: %s", je.text);
        return -1;
    }
    if (count_level (resources, 0, 1, c) < 0)
        return -1;
    if (c->nslots <= 0 || c->slot_size <= 0) {
        snprintf (c->error, sizeof (c->error), "Unable to determine slot %s",
                  c->nslots <= 0 ? "count" : "size");
        return -1;
    }
    if (c->nnodes)
        c->nslots *= c->nnodes;
    return 0;
}

static int size_validate (flux_plugin_t *p,
                          const char *topic,
                          flux_plugin_arg_t *args,
                          void *data)
{
    struct policy_request r = {.queue = NULL};
    jobtap_host_error_t err;
    json_t *jobspec = NULL;
    struct counts c;
    json_error_t je;
    (void)topic;
    (void)data;

    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:o}", "jobspec",
                                &jobspec)
        < 0)
        return flux_jobtap_reject_job (p, args,
                                       "limit-job-size: error unpacking "
                                       "job.validate arguments: %s",
                                       flux_plugin_arg_strerror (args));
    if (count_jobspec (jobspec, &c) < 0)
        return flux_jobtap_reject_job (p, args, "%s", c.error);
    if (json_unpack_ex (jobspec, &je, 0, "{s:{s?{s?s}}}", "attributes",
                        "system", "queue", &r.queue)
        < 0)
        return flux_jobtap_reject_job (p, args,
                                       "Error parsing jobspec "
                                       "attributes.system.queue: %s",
                                       je.text);
    r.nnodes = c.nnodes;
    r.ncores = c.nslots * c.slot_size;
    r.ngpus = c.nslots * c.slot_gpus;
    if (policy_check_size (policy_of (p), &r, &err) < 0)
        return flux_jobtap_reject_job (p, args, "%s", err.text);
    return 0;
}

static int size_conf_update (flux_plugin_t *p,
                             const char *topic,
                             flux_plugin_arg_t *args,
                             void *data)
{
    (void)topic;
    (void)data;
    return limits_conf_update (p, args, policy_limits_size, size_validate);
}

int builtin_limit_job_size_init (flux_plugin_t *p)
{
    return flux_plugin_add_handler (p, "conf.update", size_conf_update, NULL);
}

static int duration_validate (flux_plugin_t *p,
                              const char *topic,
                              flux_plugin_arg_t *args,
                              void *data)
{
    struct policy_request r = {.duration = 0., .queue = NULL};
    jobtap_host_error_t err;
    (void)topic;
    (void)data;

    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN,
                                "{s?{s?{s?{s?F s?s}}}}", "jobspec",
                                "attributes", "system", "duration",
                                &r.duration, "queue", &r.queue)
        < 0)
        return flux_jobtap_reject_job (p, args,
                                       "limit-duration: error unpacking "
                                       "job.validate arguments: %s",
                                       flux_plugin_arg_strerror (args));
    if (policy_check_duration (policy_of (p), &r, &err) < 0)
        return flux_jobtap_reject_job (p, args, "%s", err.text);
    return 0;
}

static int duration_conf_update (flux_plugin_t *p,
                                 const char *topic,
                                 flux_plugin_arg_t *args,
                                 void *data)
{
    (void)topic;
    (void)data;
    return limits_conf_update (p, args, policy_limits_duration,
                               duration_validate);
}

int builtin_limit_duration_init (flux_plugin_t *p)
{
    return flux_plugin_add_handler (p, "conf.update", duration_conf_update,
                                    NULL);
}
