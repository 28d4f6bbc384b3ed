/* lifecycle.so: a test plugin in the manner of flux-core's perilog-test
 * and begin-time plugins. It records the states each job passes through
 * (with the R it got at job.state.run), starts a prolog in job.state.run
 * and an epilog in job.state.cleanup when its conf asks, and finishes
 * them from outside through its services:
 *
 *   conf: {"prolog": bool, "epilog": bool,
 *          "prolog-seconds": N   a prolog a timer finishes after N s,
 *          "hold-seconds": N,    a dependency a timer removes after N s
 *          "hold-urgency": bool, urgency 0 at depend (flux-core's
 *                                submit-hold)
 *          "raise-at-run": bool, a fatal exception (type "probe") raised
 *                                in job.state.run, after the prolog
 *                                started (flux-core's perilog-test
 *                                prolog-exception)
 *          "at-new": {key: value}} jobspec updates made at job.new
 *   job.new of a job restored in RUN with its prolog active (a restart)
 *   starts the prolog-seconds timer again: a plugin's timers are not
 *   kept, the job's events are
 *   lifecycle.finish {"id", "which": "prolog"|"epilog", "status"?}
 *   lifecycle.raise {"id", "note"}     a fatal exception on the job
 *   lifecycle.urgency {"id", "urgency"}
 *   lifecycle.update {"id", "updates": {dotted key: value}}
 *                                      flux_jobtap_jobspec_update_id_pack
 *   plugin.query: also {"conf": the conf it was loaded with}
 *   lifecycle.seen {"id"}  -> {"states": ["depend", ...], "R": R|null,
 *                              "run_at": the run event's timestamp,
 *                              "end": "finish" | "exception TYPE"
 *                              (the event that brought cleanup),
 *                              "removed": true after job.inactive-remove}
 *
 * Each state is also logged: "lifecycle: job N: <state>". */
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>
#include <stdio.h>
#include <string.h>
#include <jansson.h>
#include <flux/core.h>
#include <flux/jobtap.h>

static bool want_prolog, want_epilog;
static double prolog_seconds, hold_seconds;
static bool hold_urgency, raise_at_run;
static json_t *at_new; /* jobspec updates made at job.new, or NULL */

/* A timer on the reactor for one job: finishes its prolog, or removes the
 * dependency that holds it (flux-core's perilog-test and begin-time). */
struct job_timer {
    flux_plugin_t *p;
    flux_jobid_t id;
    bool prolog;
};

static void timer_cb (flux_reactor_t *r, flux_watcher_t *w, int revents,
                      void *arg)
{
    struct job_timer *t = arg;
    (void)r;
    (void)revents;

    if (t->prolog)
        (void)flux_jobtap_prolog_finish (t->p, t->id, "lifecycle", 0);
    else
        (void)flux_jobtap_dependency_remove (t->p, t->id, "lifecycle-timer");
    flux_watcher_destroy (w);
    free (t);
}

static int start_timer (flux_plugin_t *p, flux_jobid_t id, double seconds,
                        bool prolog)
{
    flux_reactor_t *r = flux_get_reactor (flux_jobtap_get_flux (p));
    struct job_timer *t = calloc (1, sizeof (*t));
    flux_watcher_t *w;

    if (!r || !t
        || !(w = flux_timer_watcher_create (r, seconds, 0., timer_cb, t))) {
        free (t);
        return -1;
    }
    t->p = p;
    t->id = id;
    t->prolog = prolog;
    flux_watcher_start (w);
    return 0;
}
static json_t *seen; /* id (as text) -> {"states": [...], "R": R} */

static json_t *record_of (flux_jobid_t id)
{
    char key[32];
    json_t *rec;

    snprintf (key, sizeof (key), "%ju", (uintmax_t)id);
    if (!(rec = json_object_get (seen, key))) {
        rec = json_pack ("{s:[] s:n}", "states", "R");
        json_object_set_new (seen, key, rec);
    }
    return rec;
}

static int state_cb (flux_plugin_t *p,
                     const char *topic,
                     flux_plugin_arg_t *args,
                     void *arg)
{
    flux_jobid_t id;
    json_t *R = NULL;
    const char *state = topic + strlen ("job.state.");
    (void)arg;

    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:I s?o}", "id",
                                &id, "R", &R)
        < 0)
        return -1;
    json_t *rec = record_of (id);
    json_array_append_new (json_object_get (rec, "states"),
                           json_string (state));
    flux_log (flux_jobtap_get_flux (p), LOG_INFO, "lifecycle: job %ju: %s",
              (uintmax_t)id, state);
    if (!strcmp (state, "run")) {
        double t = 0;
        (void)flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN,
                                      "{s?{s?F}}", "entry", "timestamp", &t);
        json_object_set_new (rec, "run_at", json_real (t));
        if (R)
            json_object_set (rec, "R", R);
        if ((want_prolog || prolog_seconds > 0)
            && flux_jobtap_prolog_start (p, "lifecycle") < 0)
            return -1;
        if (prolog_seconds > 0 && start_timer (p, id, prolog_seconds, true) < 0)
            return -1;
        if (raise_at_run
            && flux_jobtap_raise_exception (p, FLUX_JOBTAP_CURRENT_JOB,
                                            "probe", 0, "raised at run") < 0)
            return -1;
    }
    /* flux-core's submit-hold: every job held at urgency 0 */
    if (!strcmp (state, "depend") && hold_urgency
        && flux_jobtap_event_post_pack (p, FLUX_JOBTAP_CURRENT_JOB, "urgency",
                                        "{s:i s:i}", "userid", (int)getuid (),
                                        "urgency", FLUX_JOB_URGENCY_HOLD) < 0)
        return -1;
    if (!strcmp (state, "depend") && hold_seconds > 0
        && (flux_jobtap_dependency_add (p, id, "lifecycle-timer") < 0
            || start_timer (p, id, hold_seconds, false) < 0))
        return -1;
    if (!strcmp (state, "cleanup")) {
        const char *name = NULL, *type = NULL;
        char end[128];
        (void)flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN,
                                      "{s?{s?s s?{s?s}}}", "entry", "name",
                                      &name, "context", "type", &type);
        snprintf (end, sizeof (end), "%s%s%s", name ? name : "?",
                  type ? " " : "", type ? type : "");
        json_object_set_new (rec, "end", json_string (end));
        if (want_epilog && flux_jobtap_epilog_start (p, "lifecycle") < 0)
            return -1;
    }
    return 0;
}

/* Flux purges inactive jobs; here Slurm purges the record (MinJobAge). */
static int remove_cb (flux_plugin_t *p,
                      const char *topic,
                      flux_plugin_arg_t *args,
                      void *arg)
{
    flux_jobid_t id;
    (void)topic;
    (void)arg;

    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:I}", "id", &id)
        < 0)
        return -1;
    json_object_set_new (record_of (id), "removed", json_true ());
    flux_log (flux_jobtap_get_flux (p), LOG_INFO,
              "lifecycle: job %ju: inactive-remove", (uintmax_t)id);
    return 0;
}

/* Defaults filled in at job.new, as flux-accounting fills in a bank. */
static int new_cb (flux_plugin_t *p,
                   const char *topic,
                   flux_plugin_arg_t *args,
                   void *arg)
{
    flux_jobid_t id;
    int state = 0;
    (void)topic;
    (void)arg;
    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:I s?i}", "id",
                                &id, "state", &state) < 0)
        return -1;
    if (state == FLUX_JOB_STATE_RUN && prolog_seconds > 0
        && flux_jobtap_job_event_posted (p, id, "prolog-start") > 0
        && flux_jobtap_job_event_posted (p, id, "prolog-finish") == 0
        && start_timer (p, id, prolog_seconds, true) < 0)
        return -1;
    if (state == FLUX_JOB_STATE_NEW && at_new
        && flux_jobtap_jobspec_update_pack (p, "O", at_new) < 0)
        return -1;
    return 0;
}

/* A jobspec update from outside a callback: {"id", "updates": {...}}. */
static void update_cb (flux_t *h, flux_msg_handler_t *mh,
                       const flux_msg_t *msg, void *arg)
{
    flux_plugin_t *p = arg;
    flux_jobid_t id;
    json_t *updates;
    (void)mh;

    if (flux_request_unpack (msg, NULL, "{s:I s:o}", "id", &id, "updates",
                             &updates) < 0
        || flux_jobtap_jobspec_update_id_pack (p, id, "O", updates) < 0)
        flux_respond_error (h, msg, errno, NULL);
    else
        flux_respond (h, msg, NULL);
}

static void finish_cb (flux_t *h, flux_msg_handler_t *mh,
                       const flux_msg_t *msg, void *arg)
{
    flux_plugin_t *p = arg;
    flux_jobid_t id;
    const char *which;
    int status = 0, rc;
    (void)mh;

    if (flux_request_unpack (msg, NULL, "{s:I s:s s?i}", "id", &id, "which",
                             &which, "status", &status) < 0) {
        flux_respond_error (h, msg, EPROTO, "expected {id, which, status?}");
        return;
    }
    rc = !strcmp (which, "epilog")
             ? flux_jobtap_epilog_finish (p, id, "lifecycle", status)
             : flux_jobtap_prolog_finish (p, id, "lifecycle", status);
    if (rc < 0)
        flux_respond_error (h, msg, errno, NULL);
    else
        flux_respond (h, msg, NULL);
}

static void raise_cb (flux_t *h, flux_msg_handler_t *mh,
                      const flux_msg_t *msg, void *arg)
{
    flux_plugin_t *p = arg;
    flux_jobid_t id;
    const char *note;
    (void)mh;

    if (flux_request_unpack (msg, NULL, "{s:I s:s}", "id", &id, "note",
                             &note) < 0
        || flux_jobtap_raise_exception (p, id, "lifecycle", 0, "%s", note)
               < 0)
        flux_respond_error (h, msg, errno, NULL);
    else
        flux_respond (h, msg, NULL);
}

static void urgency_cb (flux_t *h, flux_msg_handler_t *mh,
                        const flux_msg_t *msg, void *arg)
{
    flux_plugin_t *p = arg;
    flux_jobid_t id;
    int urgency;
    (void)mh;

    if (flux_request_unpack (msg, NULL, "{s:I s:i}", "id", &id, "urgency",
                             &urgency) < 0
        || flux_jobtap_event_post_pack (p, id, "urgency", "{s:i s:i}",
                                        "userid", (int)getuid (), "urgency",
                                        urgency) < 0)
        flux_respond_error (h, msg, errno, NULL);
    else
        flux_respond (h, msg, NULL);
}

static void seen_cb (flux_t *h, flux_msg_handler_t *mh,
                     const flux_msg_t *msg, void *arg)
{
    flux_jobid_t id;
    (void)mh;
    (void)arg;

    if (flux_request_unpack (msg, NULL, "{s:I}", "id", &id) < 0)
        flux_respond_error (h, msg, EPROTO, "expected {id}");
    else
        flux_respond_pack (h, msg, "O", record_of (id));
}

static void free_seen (void *arg)
{
    json_decref (arg);
}

static int query_cb (flux_plugin_t *p,
                     const char *topic,
                     flux_plugin_arg_t *args,
                     void *arg)
{
    json_t *conf = NULL;
    const char *text = flux_plugin_get_conf (p);
    (void)topic;
    (void)arg;
    if (text && !(conf = json_loads (text, 0, NULL)))
        return -1;
    return flux_plugin_arg_pack (args, FLUX_PLUGIN_ARG_OUT, "{s:o}", "conf",
                                 conf ? conf : json_null ());
}

int flux_plugin_init (flux_plugin_t *p)
{
    int prolog = 0, epilog = 0;

    /* a plugin's statics may outlive its removal: start from defaults */
    prolog_seconds = hold_seconds = 0;
    int urgency_zero = 0, raise_run = 0;
    /* no conf at all is all defaults */
    (void)flux_plugin_conf_unpack (p, "{s?b s?b s?F s?F s?b s?b}", "prolog",
                                   &prolog, "epilog", &epilog,
                                   "prolog-seconds", &prolog_seconds,
                                   "hold-seconds", &hold_seconds,
                                   "hold-urgency", &urgency_zero,
                                   "raise-at-run", &raise_run);
    hold_urgency = urgency_zero;
    raise_at_run = raise_run;
    json_t *updates = NULL;
    at_new = NULL;
    if (flux_plugin_conf_unpack (p, "{s:o}", "at-new", &updates) == 0
        && json_is_object (updates)
        && (!(at_new = json_deep_copy (updates))
            || flux_plugin_aux_set (p, "lifecycle::at-new", at_new, free_seen)
                   < 0))
        return -1;
    want_prolog = prolog;
    want_epilog = epilog;
    if (!(seen = json_object ())
        || flux_plugin_aux_set (p, NULL, seen, free_seen) < 0
        || flux_plugin_set_name (p, "lifecycle") < 0
        || flux_plugin_add_handler (p, "job.state.*", state_cb, NULL) < 0
        || flux_plugin_add_handler (p, "job.inactive-remove", remove_cb, NULL)
               < 0
        || flux_plugin_add_handler (p, "job.new", new_cb, NULL) < 0
        || flux_plugin_add_handler (p, "plugin.query", query_cb, NULL) < 0
        || flux_jobtap_service_register (p, "update", update_cb, p) < 0
        || flux_jobtap_service_register (p, "finish", finish_cb, p) < 0
        || flux_jobtap_service_register (p, "raise", raise_cb, p) < 0
        || flux_jobtap_service_register (p, "urgency", urgency_cb, p) < 0
        || flux_jobtap_service_register_ex (p, "seen", FLUX_ROLE_USER,
                                            seen_cb, p) < 0)
        return -1;
    return 0;
}
