/* jobtap-run: try a jobtap.conf (C and Lua plugins) outside Slurm.
 *
 * Loads the config through the runtime's host interface, feeds it jobs
 * described by sbatch-like options or jobspec JSON files, and prints every
 * decision: accepted/rejected (with the message), jobspec updates,
 * priority, holds and dependencies.  With -f, a script of commands drives
 * jobs through their states (see usage()).
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>

#include "host.h"

static int verbose;
static uint64_t next_id = 1;
static const char *default_queue;

static void usage (FILE *f)
{
    fprintf (f,
"Usage: jobtap-run [-C JOBTAP.CONF] [-v] [JOB OPTIONS] [JOBSPEC.json ...]\n"
"       jobtap-run [-C JOBTAP.CONF] [-v] -f SCRIPT   (- for stdin)\n"
"\n"
"Submit one job built from the job options, or one job per JSON file,\n"
"and print what the plugins decide.\n"
"\n"
"Job options (as sbatch):\n"
"  -N, --nodes=N           -n, --ntasks=N        -c, --cpus-per-task=N\n"
"  -t, --time=TIME         -p, --partition=NAME  -A, --account=NAME\n"
"  -J, --job-name=NAME     --wckey=NAME          -d, --dependency=LIST\n"
"  -H, --hold (urgency 0)  --urgency=N           --uid=N\n"
"  --id=N (job id to use)  --default-queue=NAME (what Slurm fills in)\n"
"\n"
"Script commands, one per line (# starts a comment):\n"
"  submit [JOB OPTIONS] [JOBSPEC.json]   run ID   finish ID [RESULT]\n"
"  inactive ID   urgency ID N   reprioritize   reload   show ID\n");
}

static void out (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));
static void out (const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    vprintf (fmt, ap);
    va_end (ap);
    putchar ('\n');
    fflush (stdout);
}

/* --- host callbacks: print the actions ---------------------------------- */

static void op_log (int level, const char *msg, void *arg)
{
    (void)arg;
    if (level <= LOG_WARNING || (level <= LOG_INFO && verbose > 0)
        || verbose > 1)
        fprintf (stderr, "jobtap-run: %s: %s\n",
                 level <= LOG_ERR ? "error"
                 : level <= LOG_WARNING ? "warning"
                 : level <= LOG_INFO ? "info" : "debug",
                 msg);
}

static void op_hold (uint64_t id, const char *reason, void *arg)
{
    (void)arg;
    out ("job %ju: held: %s", (uintmax_t)id, reason);
}

static void op_release (uint64_t id, void *arg)
{
    (void)arg;
    out ("job %ju: released", (uintmax_t)id);
}

static void op_set_priority (uint64_t id, int64_t priority, void *arg)
{
    (void)arg;
    out ("job %ju: priority %jd", (uintmax_t)id, (intmax_t)priority);
}

static void op_cancel (uint64_t id, const char *type, const char *note,
                       void *arg)
{
    (void)arg;
    out ("job %ju: canceled: exception %s%s%s", (uintmax_t)id, type,
         note && *note ? ": " : "", note ? note : "");
}

static int cmp_str (const void *a, const void *b)
{
    return strcmp (*(const char *const *)a, *(const char *const *)b);
}

/* In key order, so the output is stable. */
static void print_updates (uint64_t id, json_t *updates)
{
    size_t n = json_object_size (updates), i = 0;
    const char **keys = calloc (n + 1, sizeof (*keys));
    const char *k;
    json_t *v;

    if (!keys)
        return;
    json_object_foreach (updates, k, v)
        keys[i++] = k;
    qsort (keys, n, sizeof (*keys), cmp_str);
    for (i = 0; i < n; i++) {
        char *s = json_dumps (json_object_get (updates, keys[i]),
                              JSON_ENCODE_ANY | JSON_COMPACT);
        out ("job %ju: update %s = %s", (uintmax_t)id, keys[i], s ? s : "?");
        free (s);
    }
    free (keys);
}

static void op_jobspec_update (uint64_t id, json_t *updates, void *arg)
{
    (void)arg;
    print_updates (id, updates);
}

static void op_event (uint64_t id, json_t *entry, void *arg)
{
    const char *name = NULL;
    json_t *ctx = NULL;
    (void)arg;
    if (json_unpack (entry, "{s:s s?o}", "name", &name, "context", &ctx) < 0)
        return;
    /* the interesting ones; -v shows all */
    if (verbose || !strcmp (name, "exception") || !strcmp (name, "memo")
        || !strcmp (name, "dependency-add")
        || !strcmp (name, "dependency-remove")) {
        char *s = ctx ? json_dumps (ctx, JSON_COMPACT) : NULL;
        out ("job %ju: event %s%s%s", (uintmax_t)id, name, s ? " " : "",
             s ? s : "");
        free (s);
    }
}

static const struct jobtap_host_ops ops = {
    .log = op_log,
    .hold = op_hold,
    .release = op_release,
    .set_priority = op_set_priority,
    .cancel = op_cancel,
    .jobspec_update = op_jobspec_update,
    .event = op_event,
    .keep_eventlog = true, /* the run report shows it */
};

/* --- building a jobspec from sbatch-like options ------------------------ */

struct jobopts {
    long nodes, ntasks, cpus;
    long duration;          /* -1: not given */
    const char *queue, *bank, *name, *wckey, *deps;
    const char *file;
    long uid;
    int urgency;
    uint64_t id;
};

/* Slurm time formats: MIN, MIN:SEC, H:M:S, D-H, D-H:M, D-H:M:S. */
static long parse_time (const char *s)
{
    long d = 0, v[3] = { 0, 0, 0 };
    int n = 0;
    const char *p = s;
    char *end;

    if (!strcasecmp (s, "unlimited") || !strcasecmp (s, "infinite"))
        return 0;
    if (strchr (s, '-')) {
        d = strtol (s, &end, 10);
        if (*end != '-')
            return -1;
        p = end + 1;
    }
    while (*p && n < 3) {
        v[n++] = strtol (p, &end, 10);
        if (end == p)
            return -1;
        p = *end == ':' ? end + 1 : end;
        if (*end && *end != ':')
            return -1;
    }
    if (strchr (s, '-')) {
        /* D-H[:M[:S]] */
        return d * 86400 + v[0] * 3600 + v[1] * 60 + v[2];
    }
    if (n == 1)
        return v[0] * 60;
    if (n == 2)
        return v[0] * 60 + v[1];
    return v[0] * 3600 + v[1] * 60 + v[2];
}

static json_t *parse_dependencies (const char *list)
{
    json_t *a = json_array ();
    char *copy = strdup (list), *save = NULL;

    for (char *tok = strtok_r (copy, ",", &save); tok;
         tok = strtok_r (NULL, ",", &save)) {
        char *colon = strchr (tok, ':');
        if (!strcmp (tok, "singleton")) {
            json_array_append_new (a, json_pack ("{s:s s:s}", "scheme",
                                                 "singleton", "value", ""));
            continue;
        }
        if (!colon) { /* a bare id is afterany */
            json_array_append_new (a, json_pack ("{s:s s:s}", "scheme",
                                                 "afterany", "value", tok));
            continue;
        }
        *colon = '\0';
        char *save2 = NULL;
        for (char *v = strtok_r (colon + 1, ":", &save2); v;
             v = strtok_r (NULL, ":", &save2))
            json_array_append_new (a, json_pack ("{s:s s:s}", "scheme", tok,
                                                 "value", v));
    }
    free (copy);
    return a;
}

static char *lower (const char *s)
{
    char *c = strdup (s);
    for (char *p = c; *p; p++)
        if (*p >= 'A' && *p <= 'Z')
            *p += 'a' - 'A';
    return c;
}

/* The same shape the Slurm adapter builds (docs/jobspec.md). */
static json_t *jobspec_build (const struct jobopts *o)
{
    long ntasks = o->ntasks > 0 ? o->ntasks : (o->nodes > 0 ? o->nodes : 1);
    long cpus = o->cpus > 0 ? o->cpus : 1;
    long per_slot, slots;
    json_t *slot, *resources, *count, *system, *js;
    const char *name = o->name ? o->name : "wrap";

    if (o->nodes > 0) {
        per_slot = (ntasks + o->nodes - 1) / o->nodes;
        slots = per_slot * o->nodes;
    }
    else
        per_slot = slots = ntasks;
    slot = json_pack ("{s:s s:I s:s s:[{s:s s:I}]}",
                      "type", "slot",
                      "count", (json_int_t)per_slot,
                      "label", "task",
                      "with", "type", "core", "count", (json_int_t)cpus);
    if (o->nodes > 0)
        resources = json_pack ("[{s:s s:I s:[o]}]", "type", "node", "count",
                               (json_int_t)o->nodes, "with", slot);
    else
        resources = json_pack ("[o]", slot);
    if (ntasks == slots)
        count = json_pack ("{s:i}", "per_slot", 1);
    else
        count = json_pack ("{s:I}", "total", (json_int_t)ntasks);
    system = json_pack ("{s:I s:{s:s}}",
                        "duration", (json_int_t)(o->duration > 0 ? o->duration
                                                                 : 0),
                        "job", "name", name);
    const char *queue = o->queue ? o->queue : default_queue;
    if (queue)
        json_object_set_new (system, "queue", json_string (queue));
    if (o->bank) {
        char *b = lower (o->bank);
        json_object_set_new (system, "bank", json_string (b));
        free (b);
    }
    if (o->wckey) {
        char *w = lower (o->wckey);
        json_object_set_new (system, "project", json_string (w));
        free (w);
    }
    if (o->deps) {
        json_object_set_new (system, "dependencies",
                             parse_dependencies (o->deps));
        json_object_set_new (system, "slurm",
                             json_pack ("{s:s}", "dependency", o->deps));
    }
    js = json_pack ("{s:i s:o s:[{s:[s] s:s s:o}] s:{s:o}}",
                    "version", 1,
                    "resources", resources,
                    "tasks", "command", name, "slot", "task", "count", count,
                    "attributes", "system", system);
    return js;
}

enum { OPT_WCKEY = 256, OPT_URGENCY, OPT_UID, OPT_ID, OPT_DEFQ };

static const struct option longopts[] = {
    { "config", required_argument, NULL, 'C' },
    { "script", required_argument, NULL, 'f' },
    { "verbose", no_argument, NULL, 'v' },
    { "help", no_argument, NULL, 'h' },
    { "nodes", required_argument, NULL, 'N' },
    { "ntasks", required_argument, NULL, 'n' },
    { "cpus-per-task", required_argument, NULL, 'c' },
    { "time", required_argument, NULL, 't' },
    { "partition", required_argument, NULL, 'p' },
    { "account", required_argument, NULL, 'A' },
    { "job-name", required_argument, NULL, 'J' },
    { "dependency", required_argument, NULL, 'd' },
    { "hold", no_argument, NULL, 'H' },
    { "wckey", required_argument, NULL, OPT_WCKEY },
    { "urgency", required_argument, NULL, OPT_URGENCY },
    { "uid", required_argument, NULL, OPT_UID },
    { "id", required_argument, NULL, OPT_ID },
    { "default-queue", required_argument, NULL, OPT_DEFQ },
    { NULL, 0, NULL, 0 },
};

/* -c is cpus-per-task as in sbatch, so the config is -C/--config. */
static const char *shortopts = "+C:f:vhN:n:c:t:p:A:J:d:H";

static void jobopts_init (struct jobopts *o)
{
    memset (o, 0, sizeof (*o));
    o->duration = -1;
    o->uid = (long)getuid ();
    o->urgency = 16;
}

/* Parse job options from argv (getopt state reset).  Returns the index of
 * the first non-option, or -1 on error.  config/script/verbose go to the
 * pointers when non-NULL. */
static int parse_jobopts (int argc, char **argv, struct jobopts *o,
                          const char **config, const char **script)
{
    int c;
    optind = 0;
    while ((c = getopt_long (argc, argv, shortopts, longopts, NULL)) != -1) {
        switch (c) {
            case 'C': if (config) *config = optarg; break;
            case 'f': if (script) *script = optarg; break;
            case 'v': verbose++; break;
            case 'h': usage (stdout); exit (0);
            case 'N': o->nodes = strtol (optarg, NULL, 10); break;
            case 'n': o->ntasks = strtol (optarg, NULL, 10); break;
            case 'c': o->cpus = strtol (optarg, NULL, 10); break;
            case 't':
                if ((o->duration = parse_time (optarg)) < 0) {
                    fprintf (stderr, "jobtap-run: invalid time %s\n", optarg);
                    return -1;
                }
                break;
            case 'p': o->queue = optarg; break;
            case 'A': o->bank = optarg; break;
            case 'J': o->name = optarg; break;
            case 'd': o->deps = optarg; break;
            case 'H': o->urgency = 0; break;
            case OPT_WCKEY: o->wckey = optarg; break;
            case OPT_URGENCY: o->urgency = (int)strtol (optarg, NULL, 10); break;
            case OPT_UID: o->uid = strtol (optarg, NULL, 10); break;
            case OPT_ID: o->id = strtoull (optarg, NULL, 10); break;
            case OPT_DEFQ: default_queue = optarg; break;
            default: usage (stderr); return -1;
        }
    }
    return optind;
}

static void print_job_state (uint64_t id)
{
    json_t *info = jobtap_host_job_info (id);
    json_int_t prio = -1, state = 0;
    json_t *deps = NULL;

    if (!info)
        return;
    if (json_unpack (info, "{s:I s:I s:o}", "priority", &prio, "state",
                     &state, "dependencies", &deps) == 0) {
        const char *sname = "?";
        switch (state) {
            case JOBTAP_STATE_NEW: sname = "NEW"; break;
            case JOBTAP_STATE_DEPEND: sname = "DEPEND"; break;
            case JOBTAP_STATE_PRIORITY: sname = "PRIORITY"; break;
            case JOBTAP_STATE_SCHED: sname = "SCHED"; break;
            case JOBTAP_STATE_RUN: sname = "RUN"; break;
            case JOBTAP_STATE_CLEANUP: sname = "CLEANUP"; break;
            case JOBTAP_STATE_INACTIVE: sname = "INACTIVE"; break;
        }
        char *d = json_dumps (deps, JSON_COMPACT);
        if (prio == JOBTAP_PRIORITY_UNAVAIL)
            out ("job %ju: state %s, priority unavailable, dependencies %s",
                 (uintmax_t)id, sname, d ? d : "[]");
        else if (prio < 0)
            out ("job %ju: state %s, no priority, dependencies %s",
                 (uintmax_t)id, sname, d ? d : "[]");
        else
            out ("job %ju: state %s, priority %jd, dependencies %s",
                 (uintmax_t)id, sname, (intmax_t)prio, d ? d : "[]");
        free (d);
    }
    json_decref (info);
}

static int submit (struct jobopts *o, const char *file)
{
    json_t *js, *updates = NULL;
    json_error_t jerr;
    jobtap_host_error_t err;
    uint64_t token, id = o->id ? o->id : next_id;

    if (file) {
        if (!(js = json_load_file (file, 0, &jerr))) {
            fprintf (stderr, "jobtap-run: %s:%d: %s\n", file, jerr.line,
                     jerr.text);
            return -1;
        }
    }
    else
        js = jobspec_build (o);
    if (id >= next_id)
        next_id = id + 1;
    if (jobtap_host_submit (js, (uint32_t)o->uid, o->urgency,
                            (double)time (NULL), 0, &updates, &token, &err)
        < 0) {
        out ("job %ju: rejected: %s", (uintmax_t)id, err.text);
        json_decref (js);
        return 1;
    }
    out ("job %ju: accepted", (uintmax_t)id);
    /* apply the updates as the adapter would before the job exists */
    if (updates) {
        print_updates (id, updates);
        const char *k;
        json_t *v;
        json_object_foreach (updates, k, v) {
            /* dotted key into the jobspec copy */
            char *path = strdup (k), *save = NULL, *tok, *next;
            json_t *cur = js;
            tok = strtok_r (path, ".", &save);
            while (tok && (next = strtok_r (NULL, ".", &save))) {
                json_t *child = json_object_get (cur, tok);
                if (!json_is_object (child)) {
                    child = json_object ();
                    json_object_set_new (cur, tok, child);
                }
                cur = child;
                tok = next;
            }
            if (tok)
                json_object_set (cur, tok, v);
            free (path);
        }
        json_decref (updates);
    }
    if (jobtap_host_job_new (token, id, (uint32_t)o->uid, o->urgency,
                             (double)time (NULL), js, &err) < 0) {
        out ("job %ju: job.new failed: %s", (uintmax_t)id, err.text);
        json_decref (js);
        return 1;
    }
    json_decref (js);
    print_job_state (id);
    return 0;
}

static int result_of (const char *s)
{
    if (!s || !strcmp (s, "completed"))
        return JOBTAP_RESULT_COMPLETED;
    if (!strcmp (s, "failed"))
        return JOBTAP_RESULT_FAILED;
    if (!strcmp (s, "canceled"))
        return JOBTAP_RESULT_CANCELED;
    if (!strcmp (s, "timeout"))
        return JOBTAP_RESULT_TIMEOUT;
    return -1;
}

/* Split a script line into argv (whitespace, "double quotes"). */
static int split (char *line, char **argv, int max)
{
    int n = 0;
    char *p = line;
    argv[n++] = "jobtap-run";
    while (*p && n < max - 1) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p || *p == '#')
            break;
        if (*p == '"') {
            argv[n++] = ++p;
            while (*p && *p != '"')
                p++;
        }
        else {
            argv[n++] = p;
            while (*p && *p != ' ' && *p != '\t')
                p++;
        }
        if (*p)
            *p++ = '\0';
    }
    argv[n] = NULL;
    return n;
}

static int run_script (const char *path)
{
    FILE *f = strcmp (path, "-") ? fopen (path, "r") : stdin;
    char line[4096];
    int lineno = 0, errors = 0;

    if (!f) {
        fprintf (stderr, "jobtap-run: %s: %s\n", path, strerror (errno));
        return 2;
    }
    while (fgets (line, sizeof (line), f)) {
        char *argv[64];
        lineno++;
        line[strcspn (line, "\n")] = '\0';
        int argc = split (line, argv, 64);
        if (argc < 2)
            continue;
        const char *cmd = argv[1];
        uint64_t id = argc > 2 ? strtoull (argv[2], NULL, 10) : 0;
        int rc = 0;
        if (!strcmp (cmd, "submit")) {
            struct jobopts o;
            jobopts_init (&o);
            int i = parse_jobopts (argc - 1, argv + 1, &o, NULL, NULL);
            if (i < 0)
                rc = -1;
            else
                rc = submit (&o, i < argc - 1 ? argv[1 + i] : NULL) < 0 ? -1
                                                                         : 0;
        }
        else if (!strcmp (cmd, "run"))
            rc = jobtap_host_job_run (id, NULL);
        else if (!strcmp (cmd, "finish")) {
            int r = result_of (argc > 3 ? argv[3] : NULL);
            rc = r < 0 ? -1
                       : jobtap_host_job_finish (id, r,
                                                 r == JOBTAP_RESULT_FAILED
                                                     ? 256 : 0,
                                                 NULL);
        }
        else if (!strcmp (cmd, "inactive"))
            rc = jobtap_host_job_inactive (id);
        else if (!strcmp (cmd, "urgency") && argc > 3)
            rc = jobtap_host_job_urgency (id, atoi (argv[3]));
        else if (!strcmp (cmd, "reprioritize"))
            rc = jobtap_host_reprioritize_all ();
        else if (!strcmp (cmd, "reload")) {
            jobtap_host_error_t err;
            if ((rc = jobtap_host_reload (&err)) < 0)
                out ("reload failed: %s", err.text);
            else
                out ("reloaded");
            rc = 0;
        }
        else if (!strcmp (cmd, "show")) {
            print_job_state (id);
            continue;
        }
        else {
            fprintf (stderr, "jobtap-run: %s:%d: unknown command %s\n", path,
                     lineno, cmd);
            rc = -1;
        }
        if (rc < 0) {
            fprintf (stderr, "jobtap-run: %s:%d: %s failed: %s\n", path,
                     lineno, cmd, strerror (errno));
            errors++;
        }
        else if (strcmp (cmd, "submit") && strcmp (cmd, "reload")
                 && strcmp (cmd, "reprioritize"))
            print_job_state (id);
    }
    if (f != stdin)
        fclose (f);
    return errors ? 2 : 0;
}

int main (int argc, char **argv)
{
    const char *config = NULL, *script = NULL;
    jobtap_host_error_t err;
    struct jobopts o;
    int rc = 0;

    jobopts_init (&o);
    int first = parse_jobopts (argc, argv, &o, &config, &script);
    if (first < 0)
        return 2;
    if (jobtap_host_init (&ops, NULL) < 0) {
        fprintf (stderr, "jobtap-run: init: %s\n", strerror (errno));
        return 2;
    }
    if (jobtap_host_load_config (config, &err) < 0) {
        fprintf (stderr, "jobtap-run: %s\n", err.text);
        jobtap_host_fini ();
        return 2;
    }
    if (script)
        rc = run_script (script);
    else if (first >= argc) {
        int r = submit (&o, NULL);
        rc = r < 0 ? 2 : r;
    }
    else {
        /* exit 1 if any job was rejected, 2 on errors */
        for (int i = first; i < argc; i++) {
            struct jobopts fo = o;
            fo.id = 0;
            int r = submit (&fo, argv[i]);
            if (r < 0)
                rc = 2;
            else if (r > 0 && rc == 0)
                rc = 1;
        }
    }
    jobtap_host_fini ();
    return rc;
}

/* vi: ts=4 sw=4 expandtab
 */
