/* Helpers of the module unit tests (core_util.h). */
#include <ftw.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <flux/core.h>

#include "core_util.h"
#include "compact.h"
#include "spec.h"
#include "update_memo.h"
#include "dispatch.h"
#include "host.h"
#include "job.h"
#include "jtplugin.h"
#include "plugin_container.h"
#include "runtime.h"
#include "tap.h"

struct job *core_job_in_table (struct runtime *rt, flux_jobid_t id, int state)
{
    struct job *job = job_create (rt, NULL, 1000, 16, 1.0);
    if (!job)
        bail_out ("job_create failed");
    job->id = id;
    job->state = state;
    table_insert (job);
    return job;
}

struct jt_plugin *core_plugin_make (struct runtime *rt, const char *name)
{
    struct jt_plugin *jt = calloc (1, sizeof (*jt));
    struct jt_plugin **pp;

    if (!jt || !(jt->p = flux_plugin_create ())
        || !(jt->list_name = strdup (name))
        || flux_plugin_aux_set (jt->p, "flux::jobtap", jt, NULL) < 0)
        bail_out ("plugin_make %s failed", name);
    jt->rt = rt;
    for (pp = &rt->plugins; *pp; pp = &(*pp)->next)
        ;
    *pp = jt;
    plugin_handlers_changed ();
    return jt;
}

static char conf_dir[256];
static char conf_path[300];

void core_host_setup (const struct jobtap_host_ops *ops,
                      void *arg,
                      const char *toml)
{
    jobtap_host_error_t err;
    const char *path = NULL;

    if (toml) {
        FILE *f;
        const char *tmp = getenv ("TMPDIR");
        snprintf (conf_dir, sizeof (conf_dir), "%s/core_util.XXXXXX",
                  tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp (conf_dir))
            bail_out ("mkdtemp failed");
        snprintf (conf_path, sizeof (conf_path), "%s/jobtap.conf", conf_dir);
        if (!(f = fopen (conf_path, "w")) || fputs (toml, f) < 0
            || fclose (f) != 0)
            bail_out ("cannot write %s", conf_path);
        path = conf_path;
    }
    if (jobtap_host_init (ops, arg) < 0)
        bail_out ("jobtap_host_init failed");
    if (jobtap_host_load_config (path, &err) < 0)
        bail_out ("jobtap_host_load_config: %s", err.text);
}

void core_host_teardown (void)
{
    jobtap_host_fini ();
    if (conf_path[0]) {
        unlink (conf_path);
        rmdir (conf_dir);
        conf_path[0] = conf_dir[0] = '\0';
    }
}

static char trace[8192];

void core_trace (const char *fmt, ...)
{
    char buf[512];
    size_t len = strlen (trace);
    va_list ap;

    va_start (ap, fmt);
    vsnprintf (buf, sizeof (buf), fmt, ap);
    va_end (ap);
    snprintf (trace + len, sizeof (trace) - len, "%s%s", len ? "; " : "",
              buf);
}

const char *core_trace_text (void)
{
    return trace;
}

void core_trace_reset (void)
{
    trace[0] = '\0';
}

int core_trace_count (const char *what)
{
    int n = 0;
    size_t len = strlen (what);

    for (const char *s = trace; len && (s = strstr (s, what)); s += len)
        n++;
    return n;
}

void core_trace_hold (uint64_t id, const char *reason, void *arg)
{
    (void)arg;
    core_trace ("hold %ju %s", (uintmax_t)id, reason);
}

void core_trace_release (uint64_t id, void *arg)
{
    (void)arg;
    core_trace ("release %ju", (uintmax_t)id);
}

void core_trace_set_priority (uint64_t id, int64_t priority, void *arg)
{
    (void)arg;
    core_trace ("priority %ju %jd", (uintmax_t)id, (intmax_t)priority);
}

void core_trace_cancel (uint64_t id,
                        const char *type,
                        const char *note,
                        void *arg)
{
    (void)arg;
    core_trace ("cancel %ju %s %s", (uintmax_t)id, type, note);
}

void core_runtime_init (struct runtime *rt, struct jobtap_host_ops *ops)
{
    static struct jobtap_host_ops none;
    static struct job_table jobs;
    static struct dispatch dispatch;
    static struct compact_memo memo;
    static struct update_memo update_memo;

    rt->ops = ops ? ops : &none;
    rt->jobs = &jobs;
    rt->dispatch = &dispatch;
    rt->compact_memo = &memo;
    rt->update_memo = &update_memo;
}

void core_runtime_fini (struct runtime *rt)
{
    jobs_free_all (rt);
    dispatch_clear (rt);
    compact_memo_clear (rt->compact_memo);
    update_memo_clear (rt->update_memo);
    spec_memo_clear (rt);
}

static char log_text[16384];

void core_log (int level, const char *msg, void *arg)
{
    size_t len = strlen (log_text);
    (void)level;
    (void)arg;
    snprintf (log_text + len, sizeof (log_text) - len, "%s\n", msg);
}

const char *core_log_text (void)
{
    return log_text;
}

void core_log_reset (void)
{
    log_text[0] = '\0';
}

const struct jobtap_host_ops core_kept_ops = {
    .log = core_log,
    .hold = core_trace_hold,
    .release = core_trace_release,
    .set_priority = core_trace_set_priority,
    .keep_eventlog = true,
};

char *core_slurp (const char *path)
{
    FILE *f = fopen (path, "r");
    char *s = NULL;
    size_t len = 0;
    if (!f)
        return NULL;
    if (getdelim (&s, &len, '\0', f) < 0) {
        free (s);
        s = strdup ("");
    }
    fclose (f);
    return s;
}

static int rm_one (const char *p,
                   const struct stat *st,
                   int flag,
                   struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove (p);
}

void core_rm_tree (const char *path)
{
    nftw (path, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}
