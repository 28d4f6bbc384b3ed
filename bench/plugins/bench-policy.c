/* The benchmark policy as a C jobtap plugin: reject durations over
 * conf.max-duration (default one day), and send jobs that did not pick a
 * partition (the shim shows them in conf.slurm-default) to
 * conf.default-queue. The same policy as bench/policies/bench-policy.lua
 * and the job_submit.lua that bench/throughput.sh writes.
 *
 * BENCH_NAME lets the build make several copies, to stack N plugins. */
#include <flux/core.h>
#include <flux/jobtap.h>
#include <string.h>

#ifndef BENCH_NAME
#define BENCH_NAME "bench-policy"
#endif

static double max_duration = 86400.;
static const char *default_queue = "batch";
static const char *slurm_default = "debug";

static int validate (flux_plugin_t *p, const char *topic,
                     flux_plugin_arg_t *args, void *arg)
{
    double duration = 0.;
    const char *queue = NULL;
    (void)topic;
    (void)arg;

    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN,
                                "{s:{s:{s:{s?F s?s}}}}", "jobspec",
                                "attributes", "system", "duration",
                                &duration, "queue", &queue) < 0)
        return flux_jobtap_reject_job (p, args, "cannot read the jobspec");
    if (duration > max_duration)
        return flux_jobtap_reject_job (p, args,
                                       "duration %gs exceeds the limit of %gs",
                                       duration, max_duration);
    if (!queue || !strcmp (queue, slurm_default))
        return flux_jobtap_jobspec_update_pack (p, "{s:s}",
                                                "attributes.system.queue",
                                                default_queue);
    return 0;
}

/* With conf.priority = true: a priority, so reprioritize has per-job work
 * in this plugin (bench/micro). Off by default: the policy under test in
 * bench/throughput has no priority part. */
static int priority (flux_plugin_t *p, const char *topic,
                     flux_plugin_arg_t *args, void *arg)
{
    int urgency = 16;
    (void)p;
    (void)topic;
    (void)arg;
    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:i}", "urgency",
                                &urgency) < 0)
        return -1;
    return flux_plugin_arg_pack (args, FLUX_PLUGIN_ARG_OUT, "{s:I}",
                                 "priority", (json_int_t)urgency * 1000);
}

static const struct flux_plugin_handler tab[] = {
    {"job.validate", validate, NULL},
    {0},
};

/* job-manager.<name>.ping: an empty answer, for the control socket's round
 * trip (bench/control.sh). */
static void ping (flux_t *h,
                  flux_msg_handler_t *mh,
                  const flux_msg_t *msg,
                  void *arg)
{
    (void)mh;
    (void)arg;
    flux_respond (h, msg, NULL);
}

int flux_plugin_init (flux_plugin_t *p)
{
    int with_priority = 0;
    if (flux_plugin_conf_unpack (p, "{s?F s?s s?s s?b}", "max-duration",
                                 &max_duration, "default-queue",
                                 &default_queue, "slurm-default",
                                 &slurm_default, "priority",
                                 &with_priority) < 0 &&
        errno != ENOENT)
        return -1;
    if (flux_plugin_register (p, BENCH_NAME, tab) < 0 ||
        flux_jobtap_service_register (p, "ping", ping, NULL) < 0)
        return -1;
    if (with_priority &&
        (flux_plugin_add_handler (p, "job.state.priority", priority, NULL) < 0
         || flux_plugin_add_handler (p, "job.priority.get", priority, NULL)
                < 0))
        return -1;
    return 0;
}
