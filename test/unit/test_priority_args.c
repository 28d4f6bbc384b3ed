/* priority_args.c: the priority topics' args, a pass's reused args and
 * which OUT priorities apply, on a runtime made here. */
#include <string.h>
#include <jansson.h>
#include <flux/core.h>
#include <flux/jobtap.h>

#include "core_util.h"
#include "host.h"
#include "job.h"
#include "jtplugin.h"
#include "log.h"
#include "priority_args.h"
#include "runtime.h"
#include "tap.h"

static struct runtime rt;
static char last_log[256];

static void log_sink (int level, const char *msg, void *arg)
{
    (void)level;
    (void)arg;
    snprintf (last_log, sizeof (last_log), "%s", msg);
}

static json_int_t out_priority (flux_plugin_arg_t *args)
{
    json_int_t priority = -100;
    (void)flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_OUT, "{s?I}",
                                  "priority", &priority);
    return priority;
}

static void test_args (void)
{
    struct job *job = core_job_in_table (&rt, 5, FLUX_JOB_STATE_PRIORITY);
    struct jt_plugin *builtin = core_plugin_make (&rt, ".priority-default");
    flux_plugin_arg_t *args;
    json_int_t id = 0;

    job->urgency = 20;
    args = priority_args (job, NULL, builtin);
    isint (out_priority (args), 20,
           "priority_args with the builtin: OUT priority is the urgency");
    flux_plugin_arg_destroy (args);
    args = priority_args (job, NULL, NULL);
    isint (out_priority (args), -100, "without it: OUT is empty");
    flux_plugin_arg_destroy (args);

    args = pass_priority_args (job, builtin);
    ok (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:I}", "id", &id)
                == 0
            && id == 5 && out_priority (args) == 20,
        "a pass's args: IN is the job's, OUT the builtin's answer");
    flux_plugin_arg_destroy (args);
    json_t *in = rt.pass_in;
    ok (in != NULL && rt.pass_out != NULL, "the pass keeps their objects");

    struct job *next = core_job_in_table (&rt, 6, FLUX_JOB_STATE_SCHED);
    next->urgency = 9;
    args = pass_priority_args (next, builtin);
    ok (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:I}", "id", &id)
                == 0
            && id == 6 && out_priority (args) == 9,
        "the next job's args are refilled with its own values");
    ok (rt.pass_in == in, "...in the same IN object");
    flux_plugin_arg_destroy (args);

    args = pass_priority_args (job, builtin);
    json_t *kept = NULL;
    (void)flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "o", &kept);
    json_incref (kept); /* as a plugin that keeps its args */
    flux_plugin_arg_destroy (args);
    args = pass_priority_args (next, builtin);
    ok (rt.pass_in != kept, "IN a plugin kept is not refilled: made anew");
    json_t *v = json_object_get (kept, "id");
    isint (json_integer_value (v), 5, "and what it kept still shows its job");
    json_decref (kept);
    flux_plugin_arg_destroy (args);

    pass_args_free (&rt);
    ok (rt.pass_in == NULL && rt.pass_out == NULL,
        "pass_args_free lets go of them");

    json_t *o = priority_object (7);
    isint (json_integer_value (json_object_get (o, "priority")), 7,
           "priority_object");
    json_decref (o);
    jt_retire (&rt, builtin);
}

static void test_applies (void)
{
    struct job *job = core_job_in_table (&rt, 7, FLUX_JOB_STATE_PRIORITY);

    last_log[0] = '\0';
    ok (priority_applies (job, "job.priority.get", 0), "0 applies");
    ok (priority_applies (job, "job.priority.get", 4294967295), "the maximum applies");
    ok (!priority_applies (job, "job.priority.get", -1)
            && last_log[0] == '\0',
        "-1 (none set) does not, silently");
    ok (!priority_applies (job, "job.state.priority", JOBTAP_PRIORITY_UNAVAIL)
            && last_log[0] == '\0',
        "unavailable does not, silently");
    ok (!priority_applies (job, "job.state.priority", -5), "-5 does not");
    is (last_log,
        "jobtap: job 7: job.state.priority: priority -5 is out of range "
        "(0..4294967295); ignored",
        "and is logged");
}

int main (void)
{
    core_runtime_init (&rt, NULL);
    runtime_log_sink (log_sink, NULL);

    test_args ();
    test_applies ();

    runtime_log_sink (NULL, NULL);
    core_runtime_fini (&rt);
    done_testing ();
}
