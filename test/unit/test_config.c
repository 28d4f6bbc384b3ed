/* jobtap.conf loading, errors, reload, settings and runtime load/remove. */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host.h"
#include "tap.h"
#include "util.h"

static jobtap_host_error_t err;

static int load (const char *text)
{
    int rc;
    test_reset ();
    jobtap_host_init (&test_ops, NULL);
    rc = jobtap_host_load_config (write_config ("jobtap.conf", text), &err);
    return rc;
}

static char *list (void)
{
    json_t *a = jobtap_host_plugin_list (true);
    char *s = json_dumps (a, JSON_COMPACT);
    json_decref (a);
    return s;
}

static void is_list (const char *want, const char *msg)
{
    char *s = list ();
    is (s, want, "%s", msg);
    free (s);
}

/* jobtap_host_config_status without its times, as compact text with
 * sorted keys; the times go to *loaded_at and *reload_at (0 if none). */
static char status_buf[1024];
static const char *status_text (double *loaded_at, double *reload_at)
{
    json_t *o = jobtap_host_config_status ();
    json_t *reload = json_object_get (o, "reload");
    *loaded_at = json_real_value (json_object_get (o, "loaded_at"));
    *reload_at = json_real_value (json_object_get (reload, "at"));
    json_object_del (o, "loaded_at");
    if (json_is_object (reload))
        json_object_del (reload, "at");
    char *s = json_dumps (o, JSON_COMPACT | JSON_SORT_KEYS);
    snprintf (status_buf, sizeof (status_buf), "%s", s ? s : "(null)");
    free (s);
    json_decref (o);
    return status_buf;
}

static void test_errors (void)
{
    char text[2048];
    const char *path;

    errno = 0;
    ok (jobtap_host_load_config (NULL, &err) < 0 && errno == EINVAL,
        "load_config before init fails");

    ok (load ("[job-manager]\nplugins = [\n  { load = \"x\" \n") < 0,
        "TOML syntax error fails");
    path = write_config ("jobtap.conf", "");
    (void)path;
    like (err.text, "jobtap.conf:[0-9]+:[0-9]+: ",
          "... message has file:line:col");
    jobtap_host_fini ();

    ok (load ("[job-manager]\nplugins = 1\n") < 0,
        "plugins not an array fails");
    like (err.text, "jobtap.conf: \\[job-manager.plugins\\] config must be "
                    "an array$", "... message");
    jobtap_host_fini ();

    ok (load ("[job-manager]\nplugins = [\n  { load = 1 },\n]\n") < 0,
        "load with a non-string fails");
    like (err.text, "jobtap.conf:3: \\[job-manager.plugins\\]\\[0\\]: "
                    "Expected string, got integer$", "... message");
    jobtap_host_fini ();

    snprintf (text, sizeof (text),
              "[job-manager]\nplugins = [\n"
              "  { load = \"%s\" },\n"
              "  { load = \"foo.so\" },\n]\n", plugin_path ("policy.so"));
    ok (load (text) < 0, "a missing plugin fails the load");
    like (err.text, "jobtap.conf:4: \\[job-manager.plugins\\]\\[1\\]: load: "
                    "foo.so: No such plugin found$",
          "... message names file, line and entry");
    is_list ("[]", "... and nothing stays loaded");
    ok (log_count ("policy: conf.update") == 1,
        "... (the first plugin had been loaded)");
    jobtap_host_fini ();

    ok (load ("[job-manager]\nplugins = [ { remove = \"nope.so\" } ]\n") < 0,
        "remove without a match fails");
    like (err.text, "\\[job-manager.plugins\\]\\[0\\]: remove nope.so: Failed "
                    "to find plugin to remove$", "... message");
    jobtap_host_fini ();

    ok (load ("[job-manager]\nplugins = [ { remove = \"all\" } ]\n") == 0,
        "remove all never fails");
    is_list ("[\".priority-default\",\".limit-job-size\",\".limit-duration\",\".dependency-slurm\",\".update-duration\"]",
             "... and keeps builtins");
    jobtap_host_fini ();

    ok (load ("[job-manager]\nplugins = [ { load = \".nope\" } ]\n") < 0,
        "an unknown builtin fails");
    like (err.text, "load: .nope: No such plugin found$", "... message");
    jobtap_host_fini ();

    snprintf (text, sizeof (text),
              "[job-manager]\nplugins = [ { load = \"%s\", conf = 5 } ]\n",
              plugin_path ("policy.so"));
    ok (load (text) < 0, "conf that is not a table fails");
    like (err.text, "load: jobtap: plugin conf must be a JSON object$",
          "... message");
    jobtap_host_fini ();

    snprintf (text, sizeof (text),
              "[job-manager]\nplugins = [ { load = \"%s\" }, { load = \"%s\" } ]\n",
              plugin_path ("policy.so"), plugin_path ("policy.so"));
    ok (load (text) < 0 && errno == EEXIST, "a duplicate load: EEXIST");
    like (err.text, "\\[1\\]: load: policy.so already loaded$", "... message");
    jobtap_host_fini ();

    snprintf (text, sizeof (text),
              "[job-manager]\nplugins = [ { load = \"%s\" } ]\n",
              plugin_path ("initfail.so"));
    ok (load (text) < 0, "a failing flux_plugin_init fails the load");
    like (err.text, "load: .*initfail.so: flux_plugin_init failed$",
          "... message");
    jobtap_host_fini ();

    snprintf (text, sizeof (text),
              "[test-policy]\nmode = \"bad\"\n"
              "[job-manager]\nplugins = [ { load = \"%s\" } ]\n",
              plugin_path ("policy.so"));
    ok (load (text) < 0, "conf.update failure fails the load");
    like (err.text, "load: Error parsing \\[test-policy\\]: bad mode$",
          "... with the plugin's errmsg");
    jobtap_host_fini ();
}

static void test_load (void)
{
    char text[2048];
    char link[600];
    const char *path;

    /* relative names are searched in the config file's directory */
    path = write_config ("rel.conf", "");
    char *dup = strdup (path);
    snprintf (link, sizeof (link), "%s/mine.so", dirname (dup));
    free (dup);
    unlink (link);
    if (symlink (plugin_path ("policy.so"), link) < 0)
        bail_out ("symlink failed");
    ok (load ("[job-manager]\nplugins = [ { load = \"mine.so\" } ]\n"
              "[slurm-jobtap]\nfoo = 1\nbar = { baz = \"x\" }\n") == 0,
        "a relative name is found beside the config file");
    is_list ("[\".priority-default\",\".limit-job-size\",\".limit-duration\",\".dependency-slurm\",\".update-duration\",\"mine.so\"]",
             "list name is the basename");
    json_t *settings = jobtap_host_settings ();
    ok (json_integer_value (json_object_get (settings, "foo")) == 1
            && json_object_get (settings, "bar"),
        "[slurm-jobtap] settings are available, unknown keys kept");
    json_decref (settings);

    ok (jobtap_host_load_config (write_config ("jobtap.conf", ""), &err) == 0,
        "load_config with the same path again is a no-op");
    errno = 0;
    ok (jobtap_host_load_config (write_config ("other.conf", ""), &err) < 0
            && errno == EEXIST,
        "load_config with another path: EEXIST");

    jobtap_host_init (NULL, NULL);
    jobtap_host_fini ();
    is_list ("[\".priority-default\",\".limit-job-size\",\".limit-duration\",\".dependency-slurm\",\".update-duration\",\"mine.so\"]",
             "a second init/fini pair keeps the shared runtime");
    ok (jobtap_host_plugin_remove ("mine.so", &err) == 0, "remove by name");
    errno = 0;
    ok (jobtap_host_plugin_remove ("mine.so", &err) < 0 && errno == ENOENT,
        "remove again: ENOENT");
    is (err.text, "mine.so: Failed to find plugin to remove", "... message");
    ok (jobtap_host_plugin_load (plugin_path ("args.so"), NULL, &err) == 0
            && jobtap_host_plugin_load (plugin_path ("policy.so"), NULL, &err)
                   == 0,
        "load at run time");
    ok (jobtap_host_plugin_remove ("a*", &err) == 0, "remove by glob");
    is_list ("[\".priority-default\",\".limit-job-size\",\".limit-duration\",\".dependency-slurm\",\".update-duration\",\"policy.so\"]",
             "... removed args.so only");
    ok (jobtap_host_plugin_remove (".*", &err) == 0,
        "remove builtins with a .* glob");
    is_list ("[\"policy.so\"]", "... builtins gone");
    jobtap_host_fini ();
    is_list ("[]", "the last fini unloads everything");

    /* no priority plugin at all: the job waits in PRIORITY, held */
    ok (load ("[job-manager]\nplugins = [ { remove = \".priority-default\" } ]"
              "\n") == 0,
        "remove .priority-default");
    uint64_t token;
    json_t *js = jobspec_make (NULL);
    jobtap_host_submit (js, 1, 16, 1.0, 0, NULL, &token, &err);
    json_decref (js);
    jobtap_host_job_new (token, 10, 1, 16, 1.0, NULL, &err);
    char *s = actions_str ();
    is (s, "hold 10 jobtap: priority unavailable",
        "without a priority plugin the job is held in PRIORITY");
    free (s);
    json_array_clear (test_actions);
    snprintf (text, sizeof (text), "%s", plugin_path ("cxx.so"));
    ok (jobtap_host_plugin_load (text, NULL, &err) == 0,
        "loading a priority plugin at run time");
    s = actions_str ();
    is (s, "release 10; priority 10 16000",
        "... reprioritizes pending jobs on load");
    free (s);
    jobtap_host_fini ();
}

static void test_reload (void)
{
    char text[2048];
    const char *path;

    snprintf (text, sizeof (text),
              "[test-policy]\nmode = \"one\"\n"
              "[slurm-jobtap]\nx = 1\n"
              "[job-manager]\nplugins = [ { load = \"%s\" } ]\n",
              plugin_path ("policy.so"));
    ok (load (text) == 0, "load");
    path = write_config ("jobtap.conf", "");
    char want[1200];
    double loaded0, loaded, at0, at;
    snprintf (want, sizeof (want),
              "{\"configured\":true,\"path\":\"%s\",\"reload\":null}", path);
    is (status_text (&loaded0, &at0), want,
        "status after the load: its path, no reload yet");
    ok (loaded0 > 1e9 && at0 == 0, "... and when it was loaded");
    snprintf (text, sizeof (text),
              "[test-policy]\nmode = \"two\"\n"
              "[slurm-jobtap]\nx = 2\n"
              "[job-manager]\nplugins = [ { load = \"%s\" } ]\n",
              plugin_path ("policy.so"));
    write_config ("jobtap.conf", text);
    usleep (2000);
    ok (jobtap_host_reload (&err) == 0, "reload with the same plugins");
    snprintf (want, sizeof (want),
              "{\"configured\":true,\"path\":\"%s\",\"reload\":{\"ok\":true}}",
              path);
    is (status_text (&loaded, &at), want, "status: the reload took");
    ok (loaded > loaded0 && at == loaded, "... the new config loaded then");
    loaded0 = loaded;
    ok (log_count ("policy: conf.update mode=two") == 1,
        "... calls conf.update with the new config");
    json_t *settings = jobtap_host_settings ();
    ok (json_integer_value (json_object_get (settings, "x")) == 2,
        "... and updates the settings");
    json_decref (settings);

    snprintf (text, sizeof (text),
              "[test-policy]\nmode = \"bad\"\n"
              "[slurm-jobtap]\nx = 3\n"
              "[job-manager]\nplugins = [ { load = \"%s\" } ]\n",
              plugin_path ("policy.so"));
    write_config ("jobtap.conf", text);
    ok (jobtap_host_reload (&err) < 0, "reload with a rejected config fails");
    is (err.text, "policy.so: Error parsing [test-policy]: bad mode",
        "... with the plugin's message");
    snprintf (want, sizeof (want),
              "{\"configured\":true,\"path\":\"%s\",\"reload\":{\"error\":"
              "\"policy.so: Error parsing [test-policy]: bad mode\",\"ok\":false}}",
              path);
    is (status_text (&loaded, &at), want, "status: the reload was refused, why");
    ok (loaded == loaded0 && at > loaded0,
        "... the config in use is still the one loaded before");
    settings = jobtap_host_settings ();
    ok (json_integer_value (json_object_get (settings, "x")) == 2,
        "... and keeps the previous settings");
    json_decref (settings);

    write_config ("jobtap.conf", "[job-manager\n");
    ok (jobtap_host_reload (&err) < 0, "reload with a TOML error fails");
    like (err.text, "jobtap.conf:1:", "... with file and line");
    like (status_text (&loaded, &at),
          "\"reload\":\\{\"error\":\"[^\"]*jobtap.conf:1:13: Error while parsing table header[^\"]+\",\"ok\":false\\}",
          "status: the TOML error, with file and line");
    is_list ("[\".priority-default\",\".limit-job-size\",\".limit-duration\",\".dependency-slurm\",\".update-duration\",\"policy.so\"]",
             "... plugins unchanged");

    snprintf (text, sizeof (text),
              "[job-manager]\nplugins = [ { load = \"%s\" }, "
              "{ load = \"%s\" } ]\n",
              plugin_path ("policy.so"), plugin_path ("cxx.so"));
    write_config ("jobtap.conf", text);
    ok (jobtap_host_reload (&err) == 0, "reload with a new plugin list");
    is_list ("[\".priority-default\",\".limit-job-size\",\".limit-duration\",\".dependency-slurm\",\".update-duration\",\"policy.so\","
             "\"cxx.so\"]", "... new list in effect");

    snprintf (text, sizeof (text),
              "[job-manager]\nplugins = [ { load = \"%s\" }, "
              "{ load = \"nope.so\" } ]\n",
              plugin_path ("policy.so"));
    write_config ("jobtap.conf", text);
    ok (jobtap_host_reload (&err) < 0, "reload with a broken list fails");
    like (err.text, "\\[1\\]: load: nope.so: No such plugin found$",
          "... message");
    is_list ("[\".priority-default\",\".limit-job-size\",\".limit-duration\",\".dependency-slurm\",\".update-duration\",\"policy.so\","
             "\"cxx.so\"]", "... previous plugin set restored");
    jobtap_host_fini ();
}

/* A config with no plugin list, reloaded: only the settings change (the
 * check that the list is unchanged once leaked an empty array a reload,
 * which the valgrind and ASan runs of this test see). */
static void test_reload_no_plugins (void)
{
    ok (load ("[slurm-jobtap]\nx = 1\n") == 0, "load without plugins");
    write_config ("jobtap.conf", "[slurm-jobtap]\nx = 2\n");
    ok (jobtap_host_reload (&err) == 0 && jobtap_host_reload (&err) == 0,
        "reload without plugins, twice");
    json_t *settings = jobtap_host_settings ();
    ok (json_integer_value (json_object_get (settings, "x")) == 2,
        "... updates the settings");
    json_decref (settings);
    is_list ("[\".priority-default\",\".limit-job-size\",\".limit-duration\",\".dependency-slurm\",\".update-duration\"]",
             "... builtins only");
    jobtap_host_fini ();
}

static void test_sort_order (void)
{
    const char *modes[] = { "state", "-state" };
    const char *want[] = { "order: 3 DEPEND|order: 1 SCHED|order: 2 SCHED",
                           "order: 1 SCHED|order: 2 SCHED|order: 3 DEPEND" };
    for (int m = 0; m < 2; m++) {
        char text[1024];
        char got[1024] = "";
        uint64_t token;
        size_t i;
        json_t *v;

        snprintf (text, sizeof (text),
                  "[job-manager]\nplugins = [ { load = \"%s\" } ]\n",
                  plugin_path ("policy.so"));
        load (text);
        for (int id = 2; id >= 1; id--) {
            json_t *js = jobspec_make (NULL);
            jobtap_host_submit (js, 1, 16, 1.0, 0, NULL, &token, &err);
            jobtap_host_job_new (token, id, 1, 16, 1.0, NULL, &err);
            json_decref (js);
        }
        json_t *js = jobspec_make ("{s:[{s:s s:s}]}", "dependencies",
                                   "scheme", "test", "value", "x");
        jobtap_host_submit (js, 1, 16, 1.0, 0, NULL, &token, &err);
        jobtap_host_job_new (token, 3, 1, 16, 1.0, NULL, &err);
        json_decref (js);
        test_reset ();
        json_t *conf = json_pack ("{s:s}", "sort", modes[m]);
        ok (jobtap_host_plugin_load (plugin_path ("order.so"), conf, &err) == 0,
            "load order.so with sort=%s", modes[m]);
        json_decref (conf);
        json_array_foreach (test_log, i, v) {
            const char *s = json_string_value (v);
            if (!strncmp (s, "order: ", 7)) {
                if (got[0])
                    strcat (got, "|");
                strcat (got, s);
            }
        }
        is (got, want[m], "load-time replay order for sort=%s", modes[m]);
        jobtap_host_fini ();
    }
}

/* Hostile entries and settings: a misspelt key is an error in an entry
 * that then does nothing (its plugin would be dropped without a word), a
 * log line in one that loads or removes (Flux ignores it) and in
 * [slurm-jobtap]; a runtime setting of the wrong type is logged. */
static void test_hostile (void)
{
    char text[2048];

    snprintf (text, sizeof (text),
              "[job-manager]\nplugins = [ { lod = \"%s\" } ]\n",
              plugin_path ("policy.so"));
    ok (load (text) < 0, "an entry with a misspelt key fails");
    like (err.text, "jobtap.conf:2: \\[job-manager.plugins\\]\\[0\\]: "
                    "unknown key \"lod\" \\(an entry takes load, conf and "
                    "remove\\)$", "... naming the key");
    jobtap_host_fini ();

    snprintf (text, sizeof (text),
              "[job-manager]\nplugins = [ { load = \"%s\", cnf = {} } ]\n",
              plugin_path ("policy.so"));
    ok (load (text) == 0, "an entry that loads, with a misspelt key, loads");
    ok (log_count ("^jobtap: .*jobtap.conf:2: \\[job-manager.plugins\\]\\[0\\]: "
                   "unknown key \"cnf\" ignored \\(an entry takes load, "
                   "conf and remove\\)$") == 1,
        "... and the key is logged, as Flux would only ignore it");
    jobtap_host_fini ();

    ok (load ("[slurm-jobtap]\npriority_mode = \"x\"\ninactive-max = \"many\"\n"
              "keep-eventlog = 1\nprovisional-max = 64\n") == 0,
        "hostile [slurm-jobtap] settings do not stop a load");
    ok (log_count ("^jobtap: \\[slurm-jobtap\\] unknown setting "
                   "\"priority_mode\" ignored$") == 1,
        "an unknown setting is logged");
    ok (log_count ("^jobtap: \\[slurm-jobtap\\] inactive-max must be an "
                   "integer; using the default$") == 1,
        "a runtime setting of the wrong type is logged");
    ok (log_count ("^jobtap: \\[slurm-jobtap\\] keep-eventlog must be a "
                   "boolean; using the default$") == 1,
        "... a boolean too");
    ok (log_count ("provisional-max") == 0, "a good setting is not");
    jobtap_host_fini ();
}

int main (void)
{
    test_errors ();
    test_load ();
    test_reload ();
    test_reload_no_plugins ();
    test_sort_order ();
    test_hostile ();
    json_decref (test_log);
    json_decref (test_actions);
    done_testing ();
}
