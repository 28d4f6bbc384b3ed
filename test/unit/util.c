#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"
#include "tap.h"

json_t *test_log;
json_t *test_actions;

static void action (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));
static void action (const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (buf, sizeof (buf), fmt, ap);
    va_end (ap);
    if (!test_actions)
        test_actions = json_array ();
    json_array_append_new (test_actions, json_string (buf));
}

static void op_log (int level, const char *msg, void *arg)
{
    (void)arg;
    if (!test_log)
        test_log = json_array ();
    json_array_append_new (test_log, json_string (msg));
    if (getenv ("TEST_VERBOSE"))
        diag ("log[%d]: %s", level, msg);
}

static void op_hold (uint64_t id, const char *reason, void *arg)
{
    (void)arg;
    action ("hold %ju %s", (uintmax_t)id, reason);
}

static void op_release (uint64_t id, void *arg)
{
    (void)arg;
    action ("release %ju", (uintmax_t)id);
}

static void op_set_priority (uint64_t id, int64_t prio, void *arg)
{
    (void)arg;
    action ("priority %ju %jd", (uintmax_t)id, (intmax_t)prio);
}

static void op_cancel (uint64_t id, const char *type, const char *note,
                       void *arg)
{
    (void)arg;
    action ("cancel %ju %s %s", (uintmax_t)id, type, note);
}

static void op_update (uint64_t id, json_t *updates, const char *plugin,
                       void *arg)
{
    (void)plugin;
    char *s = json_dumps (updates, JSON_COMPACT | JSON_SORT_KEYS);
    (void)arg;
    action ("update %ju %s", (uintmax_t)id, s);
    free (s);
}

const struct jobtap_host_ops test_ops = {
    .log = op_log,
    .hold = op_hold,
    .release = op_release,
    .set_priority = op_set_priority,
    .cancel = op_cancel,
    .jobspec_update = op_update,
    .event = NULL,
    .keep_eventlog = true,
};

void test_reset (void)
{
    json_decref (test_log);
    json_decref (test_actions);
    test_log = json_array ();
    test_actions = json_array ();
}

static bool match (const char *s, const char *re)
{
    regex_t r;
    bool m;
    if (regcomp (&r, re, REG_EXTENDED | REG_NOSUB) != 0)
        return false;
    m = regexec (&r, s, 0, NULL, 0) == 0;
    regfree (&r);
    return m;
}

int log_count (const char *re)
{
    size_t i;
    json_t *v;
    int n = 0;
    json_array_foreach (test_log, i, v)
        if (match (json_string_value (v), re))
            n++;
    return n;
}

const char *log_find (const char *re)
{
    size_t i;
    json_t *v;
    json_array_foreach (test_log, i, v)
        if (match (json_string_value (v), re))
            return json_string_value (v);
    return NULL;
}

char *actions_str (void)
{
    size_t i, len = 1;
    json_t *v;
    char *s;
    json_array_foreach (test_actions, i, v)
        len += strlen (json_string_value (v)) + 2;
    if (!(s = calloc (1, len)))
        return NULL;
    json_array_foreach (test_actions, i, v) {
        if (i > 0)
            strcat (s, "; ");
        strcat (s, json_string_value (v));
    }
    return s;
}

static char tmpdir[256];

static void cleanup_tmpdir (void)
{
    char cmd[300];
    if (tmpdir[0]) {
        snprintf (cmd, sizeof (cmd), "rm -rf '%s'", tmpdir);
        if (system (cmd) != 0)
            fprintf (stderr, "cleanup failed\n");
    }
}

const char *write_config (const char *name, const char *text)
{
    static char paths[8][512];
    static int slot;
    char *path = paths[slot++ % 8];
    FILE *f;

    if (!tmpdir[0]) {
        snprintf (tmpdir, sizeof (tmpdir), "/tmp/jobtap-unit-XXXXXX");
        if (!mkdtemp (tmpdir))
            bail_out ("mkdtemp failed");
        atexit (cleanup_tmpdir);
    }
    snprintf (path, 512, "%s/%s", tmpdir, name);
    if (!(f = fopen (path, "w")))
        bail_out ("cannot write %s", path);
    fputs (text, f);
    fclose (f);
    return path;
}

const char *plugin_path (const char *name)
{
    static char paths[8][512];
    static int slot;
    char *path = paths[slot++ % 8];
    snprintf (path, 512, "%s/%s", TEST_PLUGIN_DIR, name);
    return path;
}

json_t *jobspec_make (const char *fmt, ...)
{
    json_t *system;
    json_t *js;
    va_list ap;
    va_start (ap, fmt);
    system = fmt ? json_vpack_ex (NULL, 0, fmt, ap) : json_object ();
    va_end (ap);
    js = json_pack ("{s:i s:[{s:s s:i}] s:[] s:{s:o}}",
                    "version", 1,
                    "resources", "type", "slot", "count", 1,
                    "tasks",
                    "attributes", "system", system);
    return js;
}
