/* jobtap-run: try a jobtap.conf (C and Lua plugins) outside Slurm.
 *
 * Loads the config through the runtime's host interface, feeds it jobs
 * described by sbatch-like options or jobspec JSON files, and prints every
 * decision: accepted/rejected (with the message), jobspec updates,
 * priority, holds and dependencies.  With -f, a script of commands drives
 * jobs through their states (see usage()).
 */
#include <errno.h>
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
#include "jobopts.h"
#include "jobspec_resize.h"
#include "jobspec_update.h"

static struct runopts run;
static uint64_t next_id = 1;

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
    if (level <= LOG_WARNING || (level <= LOG_INFO && run.verbose > 0)
        || run.verbose > 1)
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

static void op_jobspec_update (uint64_t id,
                               json_t *updates,
                               const char *plugin,
                               void *arg)
{
    (void)arg;
    (void)plugin;
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
    if (run.verbose || !strcmp (name, "exception") || !strcmp (name, "memo")
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

static void print_jobspec (uint64_t id, json_t *js)
{
    char *s = json_dumps (js, JSON_COMPACT | JSON_SORT_KEYS);
    out ("job %ju: jobspec %s", (uintmax_t)id, s ? s : "?");
    free (s);
}

/* A resources or tasks update of a job built from options: refused as
 * slurmctld refuses it (a job from a JSON file has no Slurm request to
 * check against). */
static int resize_check (const struct jobopts *o,
                         json_t *checked,
                         jobtap_host_error_t *err)
{
    struct jobspec_fields now, out;

    if (!json_object_get (checked, "resources")
        && !json_object_get (checked, "tasks"))
        return 0;
    jobopts_fields (o, &run, &now);
    return jobspec_resize (&now, checked, &out, err);
}

/* Submit as job_submit/jobtap does: the runtime decides, then the updates
 * the plugins asked for must have a Slurm equivalent, or slurmctld would
 * refuse the job.  The runtime keeps the updated jobspec for job.new. */
static int submit (struct jobopts *o, const char *file)
{
    json_t *js, *updates = NULL, *checked;
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
    else if (!(js = jobopts_jobspec (o, &run))) {
        fprintf (stderr, "jobtap-run: out of memory\n");
        return -1;
    }
    if (id >= next_id)
        next_id = id + 1;
    if (run.print_jobspec)
        print_jobspec (id, js);
    if (jobtap_host_submit (js, (uint32_t)o->uid, o->urgency,
                            (double)time (NULL), JOBTAP_SUBMIT_TAKE_JOBSPEC,
                            &updates, &token, &err)
        < 0) {
        out ("job %ju: rejected: %s", (uintmax_t)id, err.text);
        return 1;
    }
    if (updates && json_object_size (updates) > 0) {
        if (!(checked = jobspec_updates_check (updates, &err))
            || (!file && resize_check (o, checked, &err) < 0)) {
            json_decref (checked);
            jobtap_host_submit_abort (token);
            out ("job %ju: rejected: %s", (uintmax_t)id, err.text);
            json_decref (updates);
            return 1;
        }
        json_decref (checked);
    }
    out ("job %ju: accepted", (uintmax_t)id);
    if (updates) {
        print_updates (id, updates);
        json_decref (updates);
    }
    if (jobtap_host_job_new (token, id, (uint32_t)o->uid, o->urgency,
                             (double)time (NULL), NULL, &err) < 0) {
        out ("job %ju: job.new failed: %s", (uintmax_t)id, err.text);
        return 1;
    }
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
            int i = jobopts_parse (argc - 1, argv + 1, &o, &run);
            if (i < 0)
                rc = -1;
            else
                rc = submit (&o, i < argc - 1 ? argv[1 + i] : NULL) < 0 ? -1
                                                                         : 0;
            jobopts_free (&o);
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
    jobtap_host_error_t err;
    struct jobopts o;
    int rc = 0;

    runopts_init (&run);
    jobopts_init (&o);
    int first = jobopts_parse (argc, argv, &o, &run);
    if (first < 0) {
        jobopts_free (&o);
        return 2;
    }
    if (jobtap_host_init (&ops, NULL) < 0) {
        fprintf (stderr, "jobtap-run: init: %s\n", strerror (errno));
        jobopts_free (&o);
        return 2;
    }
    if (jobtap_host_load_config (run.config, &err) < 0) {
        fprintf (stderr, "jobtap-run: %s\n", err.text);
        jobtap_host_fini ();
        jobopts_free (&o);
        return 2;
    }
    run.policy_queue = jobtap_host_policy_default_queue ();
    if (run.script)
        rc = run_script (run.script);
    else if (first >= argc) {
        int r = submit (&o, NULL);
        rc = r < 0 ? 2 : r;
    }
    else {
        /* exit 1 if any job was rejected, 2 on errors */
        o.id = 0;
        for (int i = first; i < argc; i++) {
            int r = submit (&o, argv[i]);
            if (r < 0)
                rc = 2;
            else if (r > 0 && rc == 0)
                rc = 1;
        }
    }
    jobtap_host_fini ();
    jobopts_free (&o);
    free (run.policy_queue);
    return rc;
}

/* vi: ts=4 sw=4 expandtab
 */
