/* api.c: the flux_jobtap_* calls about plugins (handle, services, load
 * sort order, reprioritizing, rejections and errors, calls between
 * plugins), with in-process plugins on a runtime made here. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flux/core.h>
#include <flux/jobtap.h>

#include "core_util.h"
#include "dispatch.h"
#include "flux_handle.h"
#include "host.h"
#include "job.h"
#include "jtplugin.h"
#include "log.h"
#include "loader.h"
#include "runtime.h"
#include "tap.h"

static struct runtime rt;
static struct jobtap_host_ops ops;

static void op_set_priority (uint64_t id, int64_t priority, void *arg)
{
    (void)arg;
    core_trace ("priority %ju %jd", (uintmax_t)id, (intmax_t)priority);
}

static void log_sink (int level, const char *msg, void *arg)
{
    (void)level;
    (void)msg;
    (void)arg;
}

/* OUT errmsg of args, or "(none)". */
static const char *errmsg_of (flux_plugin_arg_t *args)
{
    static char buf[512];
    const char *s = NULL;
    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_OUT, "{s:s}",
                                "errmsg", &s) < 0)
        s = "(none)";
    snprintf (buf, sizeof (buf), "%s", s);
    return buf;
}

static void svc_cb (flux_t *h, flux_msg_handler_t *mh,
                    const flux_msg_t *msg, void *arg)
{
    (void)h;
    (void)mh;
    (void)msg;
    (void)arg;
}

static void test_not_jobtap (void)
{
    flux_plugin_t *p = flux_plugin_create ();
    flux_plugin_arg_t *args = flux_plugin_arg_create ();

    errno = 0;
    ok (flux_jobtap_get_flux (p) == NULL && errno == EINVAL,
        "get_flux of a non-jobtap plugin is EINVAL");
    errno = 0;
    ok (flux_jobtap_service_register (p, "m", svc_cb, NULL) == -1
            && errno == EINVAL,
        "service_register is EINVAL");
    errno = 0;
    ok (flux_jobtap_set_load_sort_order (p, "state") == -1 && errno == EINVAL,
        "set_load_sort_order is EINVAL");
    errno = 0;
    ok (flux_jobtap_reprioritize_all (p) == -1 && errno == EINVAL,
        "reprioritize_all is EINVAL");
    errno = 0;
    ok (flux_jobtap_reprioritize_job (p, 1, 5) == -1 && errno == EINVAL,
        "reprioritize_job is EINVAL");
    errno = 0;
    ok (flux_jobtap_priority_unavail (p, args) == -1 && errno == EINVAL,
        "priority_unavail is EINVAL");
    errno = 0;
    ok (flux_jobtap_call (p, 1, "x.y", args) == -1 && errno == EINVAL,
        "flux_jobtap_call is EINVAL");
    ok (flux_jobtap_reject_job (p, args, NULL) == -1,
        "reject_job of a non-jobtap plugin returns -1");
    is (errmsg_of (args), "rejected by job-manager plugin 'none'",
        "its default message names no plugin");
    flux_plugin_arg_destroy (args);
    flux_plugin_destroy (p);
}

static void test_errors (struct jt_plugin *jt)
{
    flux_plugin_arg_t *args = flux_plugin_arg_create ();
    char big[400];
    const char *msg;

    ok (flux_jobtap_get_flux (jt->p) == rt.h && rt.h != NULL,
        "get_flux gives the runtime's handle");
    ok (flux_jobtap_reject_job (jt->p, args, NULL) == -1,
        "reject_job without a message returns -1");
    is (errmsg_of (args), "rejected by job-manager plugin 'api.so'",
        "its default message names the plugin");
    ok (flux_jobtap_reject_job (jt->p, args, "no %s %d", "way", 7) == -1,
        "reject_job with a message returns -1");
    is (errmsg_of (args), "no way 7", "the message is formatted");
    ok (flux_jobtap_error (jt->p, args, "error %d", 1) == -1,
        "flux_jobtap_error returns -1");
    is (errmsg_of (args), "error 1", "and sets errmsg");

    memset (big, 'x', sizeof (big) - 1);
    big[sizeof (big) - 1] = '\0';
    flux_jobtap_error (jt->p, args, "%s", big);
    msg = errmsg_of (args);
    isint (strlen (msg), 159, "a long message is cut to fit flux_error_t");
    ok (msg[158] == '+' && msg[157] == 'x',
        "and ends in '+' to show the cut");
    flux_plugin_arg_destroy (args);

    args = flux_plugin_arg_create ();
    ok (flux_jobtap_error (jt->p, args, NULL) == -1,
        "flux_jobtap_error with no format returns -1");
    is (errmsg_of (args), "(none)", "and sets no errmsg");
    ok (flux_jobtap_error (jt->p, args, "%s", "") == -1,
        "an empty message returns -1");
    is (errmsg_of (args), "(none)", "and sets no errmsg");
    ok (flux_jobtap_priority_unavail (jt->p, args) == 0,
        "priority_unavail works on a jobtap plugin");
    json_int_t prio = 0;
    flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_OUT, "{s:I}", "priority",
                            &prio);
    isint (prio, -2, "it sets OUT priority to 'unavailable' (-2)");
    flux_plugin_arg_destroy (args);
}

static void test_services (struct jt_plugin *jt)
{
    errno = 0;
    ok (flux_jobtap_service_register (jt->p, "m", svc_cb, NULL) == -1
            && errno == EINVAL,
        "service_register by a plugin without a name is EINVAL");
    flux_plugin_set_name (jt->p, "svc");
    ok (flux_jobtap_service_register (jt->p, "m", svc_cb, jt) == 0,
        "service_register of method m works");
    ok (jt->services && !strcmp (jt->services->topic, "job-manager.svc.m")
            && jt->services->rolemask == 0 && jt->services->cb == svc_cb
            && jt->services->arg == jt,
        "its topic is job-manager.<name>.<method>, owner only");
    ok (flux_jobtap_service_register_ex (jt->p, NULL, FLUX_ROLE_USER, svc_cb,
                                         NULL) == 0,
        "service_register_ex with no method works");
    ok (jt->services && !strcmp (jt->services->topic, "job-manager.svc")
            && jt->services->rolemask == FLUX_ROLE_USER,
        "its topic is job-manager.<name>, with the rolemask given");
    errno = 0;
    ok (flux_jobtap_service_register (jt->p, "m", NULL, NULL) == -1
            && errno == EINVAL,
        "a NULL callback is EINVAL");
    flux_plugin_set_name (jt->p, ".builtin");
    ok (flux_jobtap_service_register (jt->p, "q", svc_cb, NULL) == 0
            && !strcmp (jt->services->topic, "job-manager.builtin.q"),
        "a builtin's leading '.' is dropped from the topic");
    flux_plugin_set_name (jt->p, "a/b");
    errno = 0;
    ok (flux_jobtap_service_register (jt->p, "q", svc_cb, NULL) == -1
            && errno == EINVAL,
        "a name with '/' is EINVAL");
    flux_plugin_set_name (jt->p, "api");
}

static void test_sort_order (struct jt_plugin *jt)
{
    ok (jt->sort_mode == NULL, "a plugin has no load sort order at first");
    ok (flux_jobtap_set_load_sort_order (jt->p, "none") == 0
            && jt->sort_mode == NULL,
        "\"none\" keeps none");
    ok (flux_jobtap_set_load_sort_order (jt->p, "-state") == 0
            && !strcmp (jt->sort_mode, "-state"),
        "\"-state\" is kept");
    ok (flux_jobtap_set_load_sort_order (jt->p, "state") == 0
            && !strcmp (jt->sort_mode, "state"),
        "\"state\" replaces it");
    errno = 0;
    ok (flux_jobtap_set_load_sort_order (jt->p, "State") == -1
            && errno == EINVAL && !strcmp (jt->sort_mode, "state"),
        "an unknown mode is EINVAL and changes nothing");
    errno = 0;
    ok (flux_jobtap_set_load_sort_order (jt->p, NULL) == -1
            && errno == EINVAL,
        "a NULL mode is EINVAL");
}

static int cb_priority (flux_plugin_t *p, const char *topic,
                        flux_plugin_arg_t *args, void *arg)
{
    json_int_t id = 0;
    (void)p;
    (void)topic;
    (void)arg;
    flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:I}", "id", &id);
    return flux_plugin_arg_pack (args, FLUX_PLUGIN_ARG_OUT, "{s:I}",
                                 "priority", 100 * id);
}

static int cb_custom (flux_plugin_t *p, const char *topic,
                      flux_plugin_arg_t *args, void *arg)
{
    int x = 0;
    flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s?i}", "x", &x);
    core_trace ("%s %s x=%d id=%s", (const char *)arg, topic, x,
                flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:I}",
                                        "id", &(json_int_t){ 0 }) == 0
                    ? "yes"
                    : "no");
    if (x == 7)
        return flux_plugin_arg_pack (args, FLUX_PLUGIN_ARG_OUT, "{s:i}",
                                     "test", 42);
    if (x == 13)
        return flux_jobtap_error (p, args, "unlucky");
    return 0;
}

static void test_reprioritize (struct jt_plugin *jt)
{
    struct job *a = core_job_in_table (&rt, 2, FLUX_JOB_STATE_SCHED);
    struct job *b = core_job_in_table (&rt, 3, FLUX_JOB_STATE_PRIORITY);
    struct job *c = core_job_in_table (&rt, 4, FLUX_JOB_STATE_INACTIVE);

    core_trace_reset ();
    ok (flux_jobtap_reprioritize_job (jt->p, 2, 55) == 0,
        "reprioritize_job of a SCHED job works");
    isint (a->priority, 55, "its priority is set");
    is (core_trace_text (), "priority 2 55", "the host is told");
    errno = 0;
    ok (flux_jobtap_reprioritize_job (jt->p, 99, 1) == -1 && errno == ENOENT,
        "reprioritize_job of an unknown job is ENOENT");
    errno = 0;
    ok (flux_jobtap_reprioritize_job (jt->p, 4, 1) == -1 && errno == ENOENT,
        "reprioritize_job of an inactive job is ENOENT");

    if (flux_plugin_add_handler (jt->p, "job.priority.get", cb_priority, NULL)
        < 0)
        bail_out ("add_handler failed");
    core_trace_reset ();
    ok (flux_jobtap_reprioritize_all (jt->p) == 0, "reprioritize_all works");
    ok (a->priority == 200 && b->priority == 300 && b->state
            == FLUX_JOB_STATE_SCHED,
        "PRIORITY and SCHED jobs get the plugin's priority");
    ok (c->priority == -1, "the inactive job is left alone");
    ok (strstr (core_trace_text (), "priority 2 200")
            && strstr (core_trace_text (), "priority 3 300"),
        "the host is told both");
    flux_plugin_remove_handler (jt->p, "job.priority.get");
}

static void test_call (struct jt_plugin *jt, struct jt_plugin *other)
{
    flux_plugin_arg_t *args = flux_plugin_arg_create ();

    if (flux_plugin_add_handler (jt->p, "custom.*", cb_custom, "api") < 0
        || flux_plugin_add_handler (other->p, "custom.hello", cb_custom,
                                    "other") < 0)
        bail_out ("add_handler failed");
    flux_plugin_arg_pack (args, FLUX_PLUGIN_ARG_IN, "{s:i}", "x", 1);
    core_trace_reset ();
    isint (flux_jobtap_call (jt->p, 2, "custom.hello", args), 2,
           "flux_jobtap_call returns how many plugins handled the topic");
    is (core_trace_text (),
        "api custom.hello x=1 id=no; other custom.hello x=1 id=no",
        "each plugin got it in load order, with the args as given");
    isint (flux_jobtap_call (jt->p, 2, "custom.nobody.else", args), 1,
           "a topic only the glob handles reaches one plugin");
    isint (flux_jobtap_call (jt->p, 2, "other.topic", args), 0,
           "a topic nobody handles returns 0");
    errno = 0;
    ok (flux_jobtap_call (jt->p, 2, "job.state.sched", args) == -1
            && errno == EINVAL,
        "job.* topics cannot be called (EINVAL)");
    errno = 0;
    ok (flux_jobtap_call (jt->p, 77, "custom.hello", args) == -1
            && errno == ENOENT,
        "an unknown job is ENOENT");
    flux_plugin_arg_pack (args, FLUX_PLUGIN_ARG_IN, "{s:i}", "x", 7);
    int v = 0;
    ok (flux_jobtap_call (jt->p, FLUX_JOBTAP_CURRENT_JOB, "custom.hello",
                          args) == -1 && errno == ENOENT,
        "CURRENT_JOB outside a callback is ENOENT");
    stack_push (table_find (&rt, 2));
    ok (flux_jobtap_call (jt->p, FLUX_JOBTAP_CURRENT_JOB, "custom.hello",
                          args) == 2,
        "CURRENT_JOB inside a callback names the current job");
    stack_pop (&rt);
    ok (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_OUT, "{s:i}", "test",
                                &v) == 0 && v == 42,
        "OUT args a callee sets are visible to the caller");
    flux_plugin_arg_pack (args, FLUX_PLUGIN_ARG_IN, "{s:i}", "x", 13);
    ok (flux_jobtap_call (jt->p, 2, "custom.hello", args) == -1,
        "a callback's failure fails the call");
    is (errmsg_of (args), "unlucky", "with its errmsg in the args");
    flux_plugin_arg_destroy (args);
}

int main (void)
{
    core_runtime_init (&rt, &ops);
    struct jt_plugin *jt, *other;

    ops.set_priority = op_set_priority;
    runtime_log_sink (log_sink, NULL);
    if (!(rt.h = flux_handle_create (&rt)))
        bail_out ("flux_handle_create failed");
    jt = core_plugin_make (&rt, "api.so");
    other = core_plugin_make (&rt, "other.so");

    test_not_jobtap ();
    test_errors (jt);
    test_services (jt);
    test_sort_order (jt);
    test_reprioritize (jt);
    test_call (jt, other);

    loader_unload_all (&rt);
    jobs_free_all (&rt);
    flux_handle_destroy (rt.h);
    core_runtime_fini (&rt);
    runtime_log_sink (NULL, NULL);
    done_testing ();
}
