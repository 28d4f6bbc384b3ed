/* libFuzzer harness: jobtap.conf load and reload (src/common/jobtap_conf.c,
 * policy.c, src/toml/toml.cpp).
 *
 * The input is a config, then a NUL byte and the config a reload finds
 * (the same one when there is no NUL).  Each input gets a fresh runtime:
 * the first text is loaded; when that works the file is replaced by the
 * second and reloaded.  Checks: a failed load or reload says why; a
 * failed reload leaves the settings and the plugin list as they were.
 * Inputs naming a path ('/') are skipped: a plugin entry would dlopen it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "host.h"

static char path[64];

static void quiet (int level, const char *msg, void *arg)
{
    (void)level, (void)msg, (void)arg;
}

static const struct jobtap_host_ops ops = {.log = quiet};

int LLVMFuzzerInitialize (int *argc, char ***argv)
{
    static char dir[] = "/tmp/fuzz-conf.XXXXXX";
    (void)argc, (void)argv;
    if (!mkdtemp (dir)) {
        perror ("mkdtemp");
        exit (1);
    }
    snprintf (path, sizeof (path), "%s/jobtap.conf", dir);
    return 0;
}

static void fail (const char *what, const char *detail)
{
    fprintf (stderr, "fuzz_conf: %s: %s\n", what, detail ? detail : "");
    abort ();
}

static void write_file (const uint8_t *text, size_t len)
{
    FILE *f = fopen (path, "w");
    if (!f || fwrite (text, 1, len, f) != len || fclose (f) != 0)
        fail ("write", path);
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    jobtap_host_error_t err = {.text = ""};
    const uint8_t *nul = memchr (data, '\0', size);
    size_t first = nul ? (size_t)(nul - data) : size;
    const uint8_t *second = nul ? nul + 1 : data;
    size_t second_len = nul ? size - first - 1 : size;

    if (memchr (data, '/', size))
        return 0;
    write_file (data, first);
    if (jobtap_host_init (&ops, NULL) < 0)
        fail ("jobtap_host_init", NULL);
    if (jobtap_host_load_config (path, &err) < 0) {
        if (!err.text[0])
            fail ("a failed load with no message", NULL);
        json_t *list = jobtap_host_plugin_list (true);
        if (json_array_size (list) != 0)
            fail ("a failed load left plugins loaded", NULL);
        json_decref (list);
    }
    else {
        json_t *settings = jobtap_host_settings ();
        json_t *list = jobtap_host_plugin_list (true);
        write_file (second, second_len);
        err.text[0] = '\0';
        if (jobtap_host_reload (&err) < 0) {
            if (!err.text[0])
                fail ("a failed reload with no message", NULL);
            json_t *settings2 = jobtap_host_settings ();
            json_t *list2 = jobtap_host_plugin_list (true);
            if (!json_equal (settings, settings2))
                fail ("a failed reload changed the settings", err.text);
            if (!json_equal (list, list2))
                fail ("a failed reload changed the plugins", err.text);
            json_decref (settings2);
            json_decref (list2);
        }
        json_decref (settings);
        json_decref (list);
    }
    jobtap_host_fini ();
    return 0;
}
