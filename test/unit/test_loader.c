/* loader.c: loading builtins and DSOs, load errors, removal by name,
 * glob and "all", conf.update rejections, and the replay of existing jobs
 * to a newly loaded plugin, on a runtime made here.  The DSOs are test
 * plugins linked against no library: they resolve flux_* from this
 * executable, which exports its symbols (test/unit/meson.build). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flux/core.h>
#include <flux/jobtap.h>

#include "core_util.h"
#include "dispatch.h"
#include "host.h"
#include "job.h"
#include "jtplugin.h"
#include "log.h"
#include "loader.h"
#include "runtime.h"
#include "tap.h"

static struct runtime rt;

static void log_sink (int level, const char *msg, void *arg)
{
    (void)level;
    (void)arg;
    (void)msg;
}

static int nplugins (void)
{
    int n = 0;
    for (struct jt_plugin *jt = rt.plugins; jt; jt = jt->next)
        n++;
    return n;
}

static const char *names (void)
{
    static char buf[512];
    buf[0] = '\0';
    for (struct jt_plugin *jt = rt.plugins; jt; jt = jt->next)
        snprintf (buf + strlen (buf), sizeof (buf) - strlen (buf), "%s%s",
                  buf[0] ? " " : "", jt->list_name);
    return buf;
}

static const char *path_of (const char *name)
{
    static char buf[512];
    snprintf (buf, sizeof (buf), "%s/%s", TEST_PLUGIN_DIR, name);
    return buf;
}

static void test_builtins (void)
{
    jobtap_host_error_t err;
    struct jt_plugin *jt;

    ok ((jt = loader_load (&rt, ".priority-default", NULL, NULL, &err))
            != NULL,
        "loader_load of the builtin .priority-default works");
    ok (jt && !strcmp (jt->list_name, ".priority-default") && !jt->path
            && jt->rt == &rt,
        "its list name is its own, it has no path and knows its runtime");
    ok (jt && loader_find (&rt, ".priority-default") == jt,
        "loader_find finds it");
    ok (jt && flux_plugin_match_handler (jt->p, "job.priority.get") != NULL,
        "its init registered its handlers");
    errno = 0;
    ok (loader_load (&rt, ".priority-default", NULL, NULL, &err) == NULL,
        "loading it again fails");
    is (err.text, ".priority-default already loaded", "with its reason");
    isint (errno, EEXIST, "errno is EEXIST");
    errno = 0;
    ok (loader_load (&rt, ".nope", NULL, NULL, &err) == NULL,
        "an unknown builtin fails");
    is (err.text, ".nope: No such plugin found", "with its reason");
    isint (errno, ENOENT, "errno is ENOENT");
    json_t *conf = json_array ();
    ok (loader_load (&rt, ".dependency-slurm", conf, NULL, &err) == NULL,
        "a plugin conf that is not an object fails");
    is (err.text, "jobtap: plugin conf must be a JSON object",
        "with its reason");
    json_decref (conf);
    ok (loader_load_builtins (&rt, &err) == -1,
        "loader_load_builtins with one loaded fails");
    is (err.text, ".priority-default: .priority-default already loaded",
        "naming the builtin");
    is (names (), ".priority-default", "only .priority-default is loaded");
    ok (loader_load (&rt, ".limit-job-size", NULL, NULL, &err) != NULL
            && loader_load (&rt, ".limit-duration", NULL, NULL, &err) != NULL
            && loader_load (&rt, ".dependency-slurm", NULL, NULL, &err)
                   != NULL
            && loader_load (&rt, ".update-duration", NULL, NULL, &err)
                   != NULL,
        "the other builtins load");
}

static void test_dso_errors (void)
{
    jobtap_host_error_t err;

    errno = 0;
    ok (loader_load (&rt, "missing.so", NULL, TEST_PLUGIN_DIR, &err) == NULL,
        "a name found in no directory fails");
    is (err.text, "missing.so: No such plugin found", "with its reason");
    isint (errno, ENOENT, "errno is ENOENT");
    ok (loader_load (&rt, "/nonexistent/x.so", NULL, NULL, &err) == NULL,
        "a missing path fails");
    is (err.text, "/nonexistent/x.so: No such file or directory",
        "with its reason");
    ok (loader_load (&rt, "/nonexistent/p.lua", NULL, NULL, &err) == NULL,
        "a missing Lua policy fails");
    is (err.text, "/nonexistent/p.lua: No such file or directory",
        "with its reason");
    ok (loader_load (&rt, path_of ("undefined.so"), NULL, NULL, &err)
            == NULL,
        "a DSO with an undefined symbol fails (RTLD_NOW)");
    like (err.text,
          "^dlopen: .*undefined.so: undefined symbol: "
          "slurm_jobtap_test_no_such_symbol$",
          "with dlopen's message naming the symbol");
    ok (loader_load (&rt, "undefined.so", NULL, TEST_PLUGIN_DIR, &err)
            == NULL,
        "the same DSO by name from a directory fails");
    like (err.text,
          "^dlopen: .*undefined.so: undefined symbol: "
          "slurm_jobtap_test_no_such_symbol$",
          "with dlopen's message, not 'No such plugin found'");
    isint (nplugins (), 5, "failed loads leave only the builtins");
}

static void test_dso (void)
{
    jobtap_host_error_t err;
    struct jt_plugin *jt;

    ok ((jt = loader_load (&rt, "noinit.so", NULL, TEST_PLUGIN_DIR, &err))
            != NULL,
        "a DSO without flux_plugin_init loads by name from a directory");
    ok (jt && !strcmp (jt->list_name, "noinit.so"),
        "its list name is its file name");
    is (jt ? jt->path : NULL, path_of ("noinit.so"), "its path is kept");
    is (jt ? jt_internal_name (jt) : NULL, "noinit",
        "its name is its file name without suffix");
    ok (loader_load (&rt, path_of ("noinit.so"), NULL, NULL, &err) == NULL,
        "the same DSO by path is already loaded");
    is (err.text, "noinit.so already loaded", "with its reason");

    /* policy.so rejects the instance config [test-policy] mode = "bad" */
    json_decref (rt.config);
    rt.config = json_pack ("{s:{s:s}}", "test-policy", "mode", "bad");
    ok (loader_load (&rt, "policy.so", NULL, TEST_PLUGIN_DIR, &err) == NULL,
        "a plugin rejecting the config fails to load");
    is (err.text, "Error parsing [test-policy]: bad mode",
        "with the plugin's conf.update message");
    ok (loader_find (&rt, "policy.so") == NULL, "it is not in the list");
    json_decref (rt.config);
    rt.config = json_object ();
}

static int cb_conf (flux_plugin_t *p, const char *topic,
                    flux_plugin_arg_t *args, void *arg)
{
    const char *mode = "";
    (void)topic;
    (void)arg;
    flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:{s?s}}", "conf",
                            "mode", &mode);
    if (!strcmp (mode, "say"))
        return flux_jobtap_error (p, args, "mode %s refused", mode);
    if (!strcmp (mode, "bare"))
        return -1;
    return 0;
}

static int cb_trace (flux_plugin_t *p, const char *topic,
                     flux_plugin_arg_t *args, void *arg)
{
    json_int_t id = -1;
    (void)p;
    (void)arg;
    flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:I}", "id", &id);
    core_trace ("%s %jd", topic, (intmax_t)id);
    return 0;
}

static void test_conf_update (void)
{
    jobtap_host_error_t err;
    struct jt_plugin *jt = core_plugin_make (&rt, "strict.so");
    json_t *c;

    if (flux_plugin_add_handler (jt->p, "conf.update", cb_conf, NULL) < 0)
        bail_out ("add_handler failed");
    c = json_pack ("{s:s}", "mode", "ok");
    ok (conf_update (jt, c, &err) == 0, "conf_update of an accepted config");
    json_decref (c);
    c = json_pack ("{s:s}", "mode", "bare");
    errno = 0;
    ok (conf_update (jt, c, &err) == -1 && errno == EINVAL,
        "a bare conf.update rejection fails with EINVAL");
    is (err.text, "config rejected by strict.so jobtap plugin",
        "with a message naming the plugin (its list name, unnamed)");
    flux_plugin_set_name (jt->p, "strict");
    ok (conf_update (jt, c, &err) == -1, "again, the plugin named");
    is (err.text, "config rejected by strict jobtap plugin",
        "the message has the plugin's own name");
    json_decref (c);
    c = json_pack ("{s:s}", "mode", "say");
    ok (conf_update (jt, c, &err) == -1, "a rejection with errmsg fails");
    is (err.text, "mode say refused", "with the plugin's message");
    json_decref (c);
    if (loader_remove (&rt, "strict.so", &err) < 0)
        bail_out ("remove strict.so: %s", err.text);
}

static struct job *job_in_table (flux_jobid_t id, int state, json_t *spec)
{
    struct job *job = job_create (&rt, spec, 1000, 16, 1.0);
    json_decref (spec);
    if (!job)
        bail_out ("job_create failed");
    job->id = id;
    job->state = state;
    table_insert (job);
    return job;
}

static void test_replay (void)
{
    jobtap_host_error_t err;
    struct job *dep, *sched, *gone;
    struct jt_plugin *jt;

    dep = job_in_table (1, FLUX_JOB_STATE_DEPEND,
                        json_pack ("{s:{s:{s:[{s:s s:s}]}}}", "attributes",
                                   "system", "dependencies", "scheme", "test",
                                   "value", "v1"));
    sched = job_in_table (2, FLUX_JOB_STATE_SCHED,
                          json_pack ("{s:{s:{s:{s:i}}}}", "attributes",
                                     "system", "policy", "priority", 77));
    sched->priority = 16;
    gone = job_in_table (3, FLUX_JOB_STATE_INACTIVE,
                         json_pack ("{s:{s:{s:[{s:s s:s}]}}}", "attributes",
                                    "system", "dependencies", "scheme",
                                    "test", "value", "v3"));
    gone->priority = 16;

    ok ((jt = loader_load (&rt, "policy.so", NULL, TEST_PLUGIN_DIR, &err))
            != NULL,
        "policy.so (linked against no library) loads");
    is (jt ? jt_internal_name (jt) : NULL, "policy",
        "its name is the one it registered");
    is (names (), ".priority-default .limit-job-size .limit-duration .dependency-slurm .update-duration noinit.so policy.so",
        "plugins are in load order");
    ok (json_object_get (dep->deps, "test=v1") != NULL,
        "the DEPEND job was replayed: job.dependency.test added its "
        "dependency");
    isint (sched->priority, 77,
           "the SCHED job was reprioritized with the new plugin");
    ok (gone->deps == NULL && gone->priority == 16,
        "the INACTIVE job was not replayed");

    /* create_and_new_on: what the replay gives each job */
    struct jt_plugin *t = core_plugin_make (&rt, "trace.so");
    if (flux_plugin_add_handler (t->p, "job.*", cb_trace, NULL) < 0)
        bail_out ("add_handler failed");
    core_trace_reset ();
    stack_push (sched);
    create_and_new_on (t, sched);
    stack_pop (&rt);
    is (core_trace_text (), "job.create 2; job.new 2",
        "create_and_new_on calls job.create then job.new on the plugin");
}

static int cmp_up (const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

static int cmp_down (const void *a, const void *b)
{
    return *(const int *)b - *(const int *)a;
}

static void test_sort (void)
{
    struct jt_plugin *jt = loader_find (&rt, "trace.so");
    int v[4] = { 3, 1, 4, 2 };

    sort_for_plugin (jt, v, 4, sizeof (int), cmp_up, cmp_down);
    ok (v[0] == 3 && v[1] == 1 && v[2] == 4 && v[3] == 2,
        "no load sort order keeps the order");
    jt->sort_mode = strdup ("state");
    sort_for_plugin (jt, v, 4, sizeof (int), cmp_up, cmp_down);
    ok (v[0] == 1 && v[1] == 2 && v[2] == 3 && v[3] == 4,
        "\"state\" sorts up");
    free (jt->sort_mode);
    jt->sort_mode = strdup ("-state");
    sort_for_plugin (jt, v, 4, sizeof (int), cmp_up, cmp_down);
    ok (v[0] == 4 && v[1] == 3 && v[2] == 2 && v[3] == 1,
        "\"-state\" sorts down");
}

static void test_remove (void)
{
    jobtap_host_error_t err;

    errno = 0;
    ok (loader_remove (&rt, "nothing.so", &err) == -1 && errno == ENOENT,
        "removing an unknown name fails with ENOENT");
    is (err.text, "Failed to find plugin to remove", "with its reason");
    ok (loader_remove (&rt, "x*", &err) == -1,
        "a glob matching nothing fails");
    ok (loader_remove (&rt, "trace.so", &err) == 0, "remove by name works");
    is (names (), ".priority-default .limit-job-size .limit-duration .dependency-slurm .update-duration noinit.so policy.so",
        "only that plugin is gone");
    ok (loader_remove (&rt, "p*.so", &err) == 0, "remove by glob works");
    is (names (), ".priority-default .limit-job-size .limit-duration .dependency-slurm .update-duration noinit.so",
        "the matching plugin is gone");
    ok (loader_remove (&rt, "*", &err) == 0, "the glob * works");
    is (names (), ".priority-default .limit-job-size .limit-duration .dependency-slurm .update-duration",
        "it does not match builtins (leading '.')");
    ok (loader_remove (&rt, "all", &err) == 0,
        "\"all\" with only builtins loaded succeeds");
    is (names (), ".priority-default .limit-job-size .limit-duration .dependency-slurm .update-duration", "builtins stay");
    core_plugin_make (&rt, "one.so");
    core_plugin_make (&rt, "two.so");
    ok (loader_remove (&rt, "all", &err) == 0, "\"all\" works");
    is (names (), ".priority-default .limit-job-size .limit-duration .dependency-slurm .update-duration",
        "it removes every plugin but the builtins");
    ok (loader_remove (&rt, ".dependency-slurm", &err) == 0,
        "a builtin can be removed by its name");
    is (names (), ".priority-default .limit-job-size .limit-duration "
        ".update-duration", "it is gone");
    ok (loader_remove (&rt, ".limit-*", &err) == 0,
        "builtins can be removed by a glob naming them");
    is (names (), ".priority-default .update-duration",
        "both limits are gone");
    loader_unload_all (&rt);
    isint (nplugins (), 0, "loader_unload_all unloads the builtins too");
}

int main (void)
{
    core_runtime_init (&rt, NULL);
    runtime_log_sink (log_sink, NULL);
    rt.config = json_object ();

    test_builtins ();
    test_dso_errors ();
    test_dso ();
    test_conf_update ();
    test_replay ();
    test_sort ();
    test_remove ();

    core_runtime_fini (&rt);
    json_decref (rt.config);
    runtime_log_sink (NULL, NULL);
    done_testing ();
}
