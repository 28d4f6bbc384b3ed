/* A misbehaving jobtap plugin for t0960-bad-input.sh, steered by job names
 * (plain sbatch -J NAME drives it):
 *
 *   init           fails (returns -1 with a flux_log error) when
 *                  conf.fail-init is true: a reconfigure or `jobtap load`
 *                  with it must keep what was loaded before
 *   job.validate   "huge-update": a jobspec update whose value is a 100 kB
 *                  string; "huge-reject": a rejection with a 10 kB message;
 *                  "raise-validate": a fatal exception before the job exists
 *                  (the call fails: the plugin logs its errno)
 *   job.new        "huge-comment": a post-submit comment of 100 kB (more
 *                  than Slurm takes); "unknown-key": a post-submit update of
 *                  a key Slurm has no field for; "raise-new": a fatal
 *                  exception
 *   job.state.depend  "garbage-annotations": OUT annotations that are a
 *                  number; "thread": a dependency that the plugin's own
 *                  thread removes 0.3 s later, after raising a non-fatal
 *                  exception on the job, both through the API
 *   job.state.priority / job.priority.get
 *                  "prio-negative": -5; "prio-huge": 2^40; "spin...": no
 *                  answer (left to another plugin); else the urgency
 */
#include <flux/core.h>
#include <flux/jobtap.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HUGE_VALUE (100 * 1024)
#define HUGE_MESSAGE (10 * 1024)

static const char *job_name (flux_plugin_arg_t *args)
{
    const char *name = "";
    (void)flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN,
                                  "{s:{s:{s:{s?{s?s}}}}}", "jobspec",
                                  "attributes", "system", "job", "name",
                                  &name);
    return name;
}

static flux_jobid_t job_id (flux_plugin_arg_t *args)
{
    flux_jobid_t id = 0;
    (void)flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:I}", "id",
                                  &id);
    return id;
}

/* A string of n 'x' (caller frees). */
static char *filler (size_t n)
{
    char *s = malloc (n + 1);
    if (s) {
        memset (s, 'x', n);
        s[n] = '\0';
    }
    return s;
}

static int validate_cb (flux_plugin_t *p, const char *topic,
                        flux_plugin_arg_t *args, void *arg)
{
    const char *name = job_name (args);
    (void)topic;
    (void)arg;

    if (!strcmp (name, "huge-update")) {
        char *s = filler (HUGE_VALUE);
        if (s)
            flux_jobtap_jobspec_update_pack (p, "{s:s}",
                                             "attributes.system.duration", s);
        free (s);
    }
    else if (!strcmp (name, "huge-reject")) {
        char *s = filler (HUGE_MESSAGE);
        int rc = flux_jobtap_reject_job (p, args, "no: %s", s ? s : "");
        free (s);
        return rc;
    }
    else if (!strcmp (name, "errmsg-number")) {
        flux_plugin_arg_pack (args, FLUX_PLUGIN_ARG_OUT, "{s:i}", "errmsg",
                              42);
        return -1;
    }
    else if (!strcmp (name, "errmsg-huge")) {
        char *s = filler (HUGE_VALUE);
        if (s)
            flux_plugin_arg_pack (args, FLUX_PLUGIN_ARG_OUT, "{s:s}",
                                  "errmsg", s);
        free (s);
        return -1;
    }
    else if (!strcmp (name, "raise-validate")
             && flux_jobtap_raise_exception (p, FLUX_JOBTAP_CURRENT_JOB,
                                             "policy", 0,
                                             "raised in job.validate") < 0)
        flux_log (flux_jobtap_get_flux (p), LOG_ERR,
                  "bad-input: raise in job.validate: %s", strerror (errno));
    return 0;
}

static int new_cb (flux_plugin_t *p, const char *topic,
                   flux_plugin_arg_t *args, void *arg)
{
    const char *name = job_name (args);
    (void)topic;
    (void)arg;

    if (!strcmp (name, "huge-comment")) {
        char *s = filler (HUGE_VALUE);
        if (s)
            flux_jobtap_jobspec_update_pack (p, "{s:s}",
                                             "attributes.system.slurm.comment", s);
        free (s);
    }
    else if (!strcmp (name, "unknown-key"))
        flux_jobtap_jobspec_update_pack (p, "{s:i}",
                                         "attributes.system.no-such-key", 1);
    else if (!strcmp (name, "raise-new"))
        flux_jobtap_raise_exception (p, FLUX_JOBTAP_CURRENT_JOB, "policy", 0,
                                     "raised in job.new");
    return 0;
}

struct from_thread {
    flux_plugin_t *p;
    flux_jobid_t id;
};

/* The plugin's own thread: calls the API with no callback running. */
static void *thread_main (void *arg)
{
    struct from_thread *t = arg;
    usleep (300 * 1000);
    flux_jobtap_raise_exception (t->p, t->id, "from-thread", 1,
                                 "raised by the plugin's own thread");
    flux_jobtap_dependency_remove (t->p, t->id, "from-thread");
    free (t);
    return NULL;
}

static int depend_cb (flux_plugin_t *p, const char *topic,
                      flux_plugin_arg_t *args, void *arg)
{
    const char *name = job_name (args);
    (void)topic;
    (void)arg;

    if (!strcmp (name, "garbage-annotations"))
        return flux_plugin_arg_pack (args, FLUX_PLUGIN_ARG_OUT,
                                     "{s:i}", "annotations", 42);
    if (!strcmp (name, "thread")) {
        struct from_thread *t = malloc (sizeof (*t));
        pthread_t tid;
        if (!t)
            return -1;
        t->p = p;
        t->id = job_id (args);
        if (flux_jobtap_dependency_add (p, t->id, "from-thread") < 0
            || pthread_create (&tid, NULL, thread_main, t) != 0) {
            free (t);
            return -1;
        }
        pthread_detach (tid);
    }
    return 0;
}

static int priority_cb (flux_plugin_t *p, const char *topic,
                        flux_plugin_arg_t *args, void *arg)
{
    const char *name = job_name (args);
    int urgency = 16;
    json_int_t priority;
    (void)p;
    (void)topic;
    (void)arg;

    (void)flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s?i}",
                                  "urgency", &urgency);
    if (!strncmp (name, "spin", 4))
        return 0; /* left to the Lua policy */
    if (!strcmp (name, "prio-negative"))
        priority = -5;
    else if (!strcmp (name, "prio-huge"))
        priority = (json_int_t)1 << 40;
    else
        priority = urgency;
    return flux_plugin_arg_pack (args, FLUX_PLUGIN_ARG_OUT, "{s:I}",
                                 "priority", priority);
}

int flux_plugin_init (flux_plugin_t *p)
{
    int fail = 0;

    (void)flux_plugin_conf_unpack (p, "{s?b}", "fail-init", &fail);
    if (fail) {
        flux_log (flux_jobtap_get_flux (p), LOG_ERR,
                  "bad-input: failing init on purpose");
        return -1;
    }
    if (flux_plugin_set_name (p, "bad-input") < 0
        || flux_plugin_add_handler (p, "job.validate", validate_cb, NULL) < 0
        || flux_plugin_add_handler (p, "job.new", new_cb, NULL) < 0
        || flux_plugin_add_handler (p, "job.state.depend", depend_cb, NULL)
               < 0
        || flux_plugin_add_handler (p, "job.state.priority", priority_cb,
                                    NULL) < 0
        || flux_plugin_add_handler (p, "job.priority.get", priority_cb, NULL)
               < 0)
        return -1;
    return 0;
}
