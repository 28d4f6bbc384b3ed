/* A jobtap plugin for the integration tests, steered by job names so the
 * tests drive it with plain sbatch:
 *
 *   job.validate   stores the job name as job aux "validated-name";
 *                  a job with no time limit gets conf.default-duration;
 *                  durations over conf.max-duration (seconds) are rejected
 *                  with "duration Xs exceeds the limit of Ys"; "rename-me" is
 *                  renamed "renamed"; "to-<queue>" moves to <queue>;
 *                  "bad-update" asks for an update Slurm has no field for;
 *                  "bank-<x>" moves to bank <x>, "project-<x>" to project
 *                  <x>; "reject-silently" is
 *                  rejected with no message
 *   job.create     logs "job.create id=N name=NAME"
 *   job.new        logs "job.new id=N userid=U urgency=U name=N aux=A
 *                  state=S" (S: the state, e.g. new; A:
 *                  the validated-name aux, or "(none)"); "reprioritize-all"
 *                  calls flux_jobtap_reprioritize_all"
 *   job.state.depend   "wait-<x>" gets dependency "wait for release-<x>";
 *                  "raise-fatal" gets a fatal exception "policy: not today"
 *   job.dependency.release  -d release:<x> gives the job that dependency
 *                  too (a Flux dependency scheme given with sbatch -d)
 *   job.new of "release-<x>" removes that dependency from every waiting job;
 *                  job.new of a "wait-<x>" job in DEPEND (a restart, where
 *                  job.state.depend is not called again) remembers it
 *   job.new of a restored "slow-restore-<S>" job (a restart) sleeps S
 *                  seconds after its log line: a slow plugin while the
 *                  agent's pass restores jobs, Slurm's locks held
 *   job.state.priority / job.priority.get
 *                  "prio-<N>" gets priority N; "unavail-<x>" has its
 *                  priority unavailable until "avail-<x>" is submitted,
 *                  which gives it 4242; "bad-priority" answers a string
 *                  ("bad-priority-at-state" in job.state.priority only)
 *                  (a misbehaving plugin); else the value in conf.priority-file
 *                  (if readable) or the urgency
 *   job.update.attributes.system.job.name
 *                  names starting with "bad" are refused with
 *                  "job name <name> is not allowed"
 *   job.update     logs "job.update id=N <updates>"
 */
#include <flux/core.h>
#include <flux/jobtap.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static double max_duration = 0.;
static double default_duration = 0.;
static const char *priority_file = NULL;

static const char *job_name (flux_plugin_arg_t *args)
{
    const char *name = "";
    (void)flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN,
                                  "{s:{s:{s:{s?{s?s}}}}}", "jobspec",
                                  "attributes", "system", "job", "name",
                                  &name);
    return name;
}

static int validate (flux_plugin_t *p, const char *topic,
                     flux_plugin_arg_t *args, void *arg)
{
    double duration = 0.;
    const char *name = job_name (args);
    (void)topic;
    (void)arg;

    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN,
                                "{s:{s:{s:{s?F}}}}", "jobspec",
                                "attributes", "system", "duration",
                                &duration) < 0)
        return flux_jobtap_reject_job (p, args, "cannot read duration");
    if (duration == 0 && default_duration > 0) {
        flux_jobtap_jobspec_update_pack (p, "{s:f}",
                                         "attributes.system.duration",
                                         default_duration);
        duration = default_duration;
    }
    if (max_duration > 0 && (duration == 0 || duration > max_duration))
        return flux_jobtap_reject_job (p, args,
                                       "duration %gs exceeds the limit of %gs",
                                       duration, max_duration);
    if (!strcmp (name, "rename-me"))
        flux_jobtap_jobspec_update_pack (p, "{s:s}",
                                         "attributes.system.job.name",
                                         "renamed");
    if (!strncmp (name, "to-", 3))
        flux_jobtap_jobspec_update_pack (p, "{s:s}",
                                         "attributes.system.queue", name + 3);
    if (!strncmp (name, "bank-", 5))
        flux_jobtap_jobspec_update_pack (p, "{s:s}", "attributes.system.bank",
                                         name + 5);
    if (!strncmp (name, "project-", 8))
        flux_jobtap_jobspec_update_pack (p, "{s:s}",
                                         "attributes.system.project",
                                         name + 8);
    char *copy = strdup (name);
    if (!copy || flux_jobtap_job_aux_set (p, FLUX_JOBTAP_CURRENT_JOB,
                                          "validated-name", copy, free) < 0) {
        free (copy);
        return flux_jobtap_reject_job (p, args, "cannot store job aux");
    }
    if (!strcmp (name, "reject-silently"))
        return -1;
    if (!strcmp (name, "bad-update"))
        flux_jobtap_jobspec_update_pack (p, "{s:s}",
                                         "attributes.system.frobnicate",
                                         "yes");
    return 0;
}

struct waiter {
    flux_jobid_t id;
    char key[64];
    long granted; /* priority given by "avail-<key>", or -1 */
};
#define MAX_WAITERS 4096
static struct waiter waiters[MAX_WAITERS];
static struct waiter unavail[MAX_WAITERS];

static void remember (struct waiter *set, flux_jobid_t id, const char *key)
{
    for (int i = 0; i < MAX_WAITERS; i++)
        if (set[i].id == 0 || set[i].id == id) {
            set[i].id = id;
            set[i].granted = -1;
            snprintf (set[i].key, sizeof (set[i].key), "%s", key);
            return;
        }
}

static int create (flux_plugin_t *p, const char *topic,
                   flux_plugin_arg_t *args, void *arg)
{
    flux_jobid_t id;
    (void)topic;
    (void)arg;
    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:I}", "id", &id)
        < 0)
        return -1;
    flux_log (flux_jobtap_get_flux (p), LOG_INFO,
              "slurm-policy: job.create id=%ju name=%s", (uintmax_t)id,
              job_name (args));
    return 0;
}

static int new_job (flux_plugin_t *p, const char *topic,
                    flux_plugin_arg_t *args, void *arg)
{
    flux_jobid_t id;
    uint32_t userid;
    int urgency, state = 0;
    const char *name = job_name (args);
    (void)topic;
    (void)arg;

    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:I s:i s:i s?i}",
                                "id", &id, "userid", &userid, "urgency",
                                &urgency, "state", &state) < 0)
        return -1;
    if (state == FLUX_JOB_STATE_DEPEND && !strncmp (name, "wait-", 5))
        remember (waiters, id, name + 5);
    const char *release_key = flux_jobtap_job_aux_get (p, FLUX_JOBTAP_CURRENT_JOB,
                                                       "release-key");
    if (release_key)
        remember (waiters, id, release_key);
    const char *aux = flux_jobtap_job_aux_get (p, FLUX_JOBTAP_CURRENT_JOB,
                                               "validated-name");
    flux_log (flux_jobtap_get_flux (p), LOG_INFO,
              "slurm-policy: job.new id=%ju userid=%u urgency=%d name=%s "
              "aux=%s state=%s",
              (uintmax_t)id, userid, urgency, name, aux ? aux : "(none)",
              flux_job_statetostr (state, "l"));
    if (state > FLUX_JOB_STATE_NEW && !strncmp (name, "slow-restore-", 13))
        sleep ((unsigned)atoi (name + 13));
    if (!strcmp (name, "reprioritize-all") &&
        flux_jobtap_reprioritize_all (p) < 0)
        flux_log_error (flux_jobtap_get_flux (p),
                        "slurm-policy: reprioritize_all");
    if (!strncmp (name, "release-", 8)) {
        for (int i = 0; i < MAX_WAITERS; i++)
            if (waiters[i].id && !strcmp (waiters[i].key, name + 8)) {
                char desc[128];
                snprintf (desc, sizeof (desc), "wait for release-%s",
                          waiters[i].key);
                if (flux_jobtap_dependency_remove (p, waiters[i].id, desc) < 0)
                    flux_log_error (flux_jobtap_get_flux (p),
                                    "slurm-policy: dependency_remove");
                waiters[i].id = 0;
            }
    }
    if (!strncmp (name, "avail-", 6)) {
        for (int i = 0; i < MAX_WAITERS; i++)
            if (unavail[i].id && unavail[i].granted < 0 &&
                !strcmp (unavail[i].key, name + 6)) {
                unavail[i].granted = 4242;
                if (flux_jobtap_reprioritize_job (p, unavail[i].id, 4242) < 0)
                    flux_log_error (flux_jobtap_get_flux (p),
                                    "slurm-policy: reprioritize_job");
            }
    }
    return 0;
}

static int depend (flux_plugin_t *p, const char *topic,
                   flux_plugin_arg_t *args, void *arg)
{
    flux_jobid_t id;
    const char *name = job_name (args);
    (void)topic;
    (void)arg;

    if (!strcmp (name, "raise-fatal"))
        return flux_jobtap_raise_exception (p, FLUX_JOBTAP_CURRENT_JOB,
                                            "policy", 0, "not today");
    if (strncmp (name, "wait-", 5) != 0)
        return 0;
    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:I}", "id", &id)
        < 0)
        return -1;
    char desc[128];
    snprintf (desc, sizeof (desc), "wait for release-%s", name + 5);
    remember (waiters, id, name + 5);
    return flux_jobtap_dependency_add (p, id, desc);
}

/* -d release:<x>: the job waits for a "release-<x>" job; job.new
 * remembers it under its id (a submission's id is only final there). */
static int dependency_release (flux_plugin_t *p, const char *topic,
                               flux_plugin_arg_t *args, void *arg)
{
    const char *value;
    flux_jobid_t id;
    char desc[128], *key;
    (void)topic;
    (void)arg;

    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:I s:{s:s}}",
                                "id", &id, "dependency", "value", &value) < 0)
        return flux_jobtap_reject_job (p, args, "release: no value");
    snprintf (desc, sizeof (desc), "wait for release-%s", value);
    if (flux_jobtap_dependency_add (p, id, desc) < 0
        || !(key = strdup (value))
        || flux_jobtap_job_aux_set (p, FLUX_JOBTAP_CURRENT_JOB, "release-key",
                                    key, free) < 0)
        return flux_jobtap_reject_job (p, args, "release: %s",
                                       strerror (errno));
    return 0;
}

static long file_priority (void)
{
    long v = -1;
    FILE *f;
    if (!priority_file || !(f = fopen (priority_file, "r")))
        return -1;
    if (fscanf (f, "%ld", &v) != 1)
        v = -1;
    fclose (f);
    return v;
}

static int priority (flux_plugin_t *p, const char *topic,
                     flux_plugin_arg_t *args, void *arg)
{
    flux_jobid_t id;
    int urgency;
    const char *name = job_name (args);
    long v;
    (void)arg;

    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:I s:i}", "id",
                                &id, "urgency", &urgency) < 0)
        return -1;
    if (!strcmp (name, "bad-priority"))
        return flux_plugin_arg_pack (args, FLUX_PLUGIN_ARG_OUT, "{s:s}",
                                     "priority", "high");
    /* flux-core's test.c "priority type error": a string in
     * job.state.priority, no answer in job.priority.get */
    if (!strcmp (name, "bad-priority-at-state"))
        return strcmp (topic, "job.state.priority")
                   ? 0
                   : flux_plugin_arg_pack (args, FLUX_PLUGIN_ARG_OUT, "{s:s}",
                                           "priority", "high");
    if (!strncmp (name, "prio-", 5))
        return flux_plugin_arg_pack (args, FLUX_PLUGIN_ARG_OUT, "{s:I}",
                                     "priority",
                                     (json_int_t)strtoll (name + 5, NULL, 10));
    if (!strncmp (name, "unavail-", 8)) {
        for (int i = 0; i < MAX_WAITERS; i++)
            if (unavail[i].id == id) {
                if (unavail[i].granted < 0)
                    return flux_jobtap_priority_unavail (p, args);
                return flux_plugin_arg_pack (args, FLUX_PLUGIN_ARG_OUT,
                                             "{s:I}", "priority",
                                             (json_int_t)unavail[i].granted);
            }
        remember (unavail, id, name + 8);
        return flux_jobtap_priority_unavail (p, args);
    }
    if ((v = file_priority ()) >= 0)
        return flux_plugin_arg_pack (args, FLUX_PLUGIN_ARG_OUT, "{s:I}",
                                     "priority", (json_int_t)v);
    return flux_plugin_arg_pack (args, FLUX_PLUGIN_ARG_OUT, "{s:i}",
                                 "priority", urgency);
}

static int update_name (flux_plugin_t *p, const char *topic,
                        flux_plugin_arg_t *args, void *arg)
{
    const char *value;
    (void)topic;
    (void)arg;
    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:s}", "value",
                                &value) < 0)
        return flux_jobtap_error (p, args, "job name must be a string");
    if (!strncmp (value, "bad", 3))
        return flux_jobtap_error (p, args, "job name %s is not allowed",
                                  value);
    return 0;
}

static int job_update (flux_plugin_t *p, const char *topic,
                       flux_plugin_arg_t *args, void *arg)
{
    flux_jobid_t id;
    json_t *updates;
    (void)topic;
    (void)arg;
    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:I s:o}", "id",
                                &id, "updates", &updates) < 0)
        return -1;
    char *s = json_dumps (updates, JSON_COMPACT | JSON_SORT_KEYS);
    flux_log (flux_jobtap_get_flux (p), LOG_INFO,
              "slurm-policy: job.update id=%ju %s", (uintmax_t)id,
              s ? s : "?");
    free (s);
    return 0;
}

static const struct flux_plugin_handler tab[] = {
    {"job.update.attributes.system.job.name", update_name, NULL},
    {"job.update", job_update, NULL},
    {"job.create", create, NULL},
    {"job.validate", validate, NULL},
    {"job.new", new_job, NULL},
    {"job.state.depend", depend, NULL},
    {"job.dependency.release", dependency_release, NULL},
    {"job.state.priority", priority, NULL},
    {"job.priority.get", priority, NULL},
    {0},
};

int flux_plugin_init (flux_plugin_t *p)
{
    if (flux_plugin_conf_unpack (p, "{s?F s?F s?s}", "max-duration",
                                 &max_duration, "default-duration",
                                 &default_duration, "priority-file",
                                 &priority_file) < 0 &&
        errno != ENOENT)
        return -1;
    return flux_plugin_register (p, "slurm-policy", tab);
}
