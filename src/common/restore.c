/* Restore after a scheduler restart (jobtap_host_jobs_restore): the jobs
 * the scheduler kept come back through submit, dependency checks,
 * job.create and job.new on each plugin in its load sort order, then
 * their states with the whole stack, as Flux replays its jobs.  A host
 * API entry point; calls event.c, plugins.c, submit.c, dispatch.c and
 * job.c. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <flux/core.h>
#include <flux/jobtap.h>

#include "dispatch.h"
#include "event.h"
#include "host.h"
#include "job.h"
#include "jtplugin.h"
#include "log.h"
#include "plugins.h"
#include "runtime.h"
#include "spec.h"
#include "state.h"
#include "submit.h"

/* Jobs restored after a scheduler restart, with the state the scheduler
 * kept for each (the sort key of the load sort orders). */
struct restored {
    struct job *job;
    int state;
};

static int restored_cmp (const void *a, const void *b, int dir)
{
    const struct restored *x = a, *y = b;
    if (x->state != y->state)
        return x->state < y->state ? -dir : dir;
    return x->job->id < y->job->id ? -1 : x->job->id > y->job->id;
}

static int restored_cmp_state (const void *a, const void *b)
{
    return restored_cmp (a, b, 1);
}

static int restored_cmp_rstate (const void *a, const void *b)
{
    return restored_cmp (a, b, -1);
}

int jobtap_host_jobs_restore (json_t *jobs, jobtap_host_error_t *err)
{
    struct runtime *rt = host_runtime ();
    size_t n = json_array_size (jobs), k = 0, i;
    struct restored *v, *order;
    json_t *entry;

    if (!json_is_array (jobs)) {
        errprintf (err, "invalid argument");
        errno = EINVAL;
        return -1;
    }
    runtime_lock ();
    v = calloc (n ? n : 1, sizeof (*v));
    order = calloc (n ? n : 1, sizeof (*order));
    if (!v || !order) {
        errprintf (err, "out of memory");
        free (v);
        free (order);
        runtime_unlock ();
        return -1;
    }
    json_array_foreach (jobs, i, entry) {
        json_int_t id, userid;
        int urgency, state = FLUX_JOB_STATE_SCHED;
        double t_submit;
        json_t *spec, *ctx;
        struct job *job;
        if (json_unpack (entry, "{s:I s:I s:i s:F s:o s?i}",
                         "id", &id, "userid", &userid, "urgency", &urgency,
                         "t_submit", &t_submit, "jobspec", &spec,
                         "state", &state) < 0
            || id <= 0 || ((uint64_t)id & JOBTAP_PROVISIONAL_ID_BIT)
            || urgency < 0 || urgency > 31 || table_find (rt, id)) {
            runtime_log (LOG_ERR,
                         "restore: skipping invalid or known job entry %zu",
                         i);
            continue;
        }
        if (!(job = job_create (rt, spec, userid, urgency, t_submit)))
            continue;
        job->id = id;
        table_insert (job);
        ctx = submit_context (userid, urgency, NULL);
        event_post_known (job, EV_SUBMIT, ctx);
        json_decref (ctx);
        v[k].job = job;
        v[k].state = state;
        job_incref (job);
        k++;
    }
    /* As on a Flux restart: dependency schemes are checked first, and a
     * missing one is an informational exception. */
    for (i = 0; i < k; i++) {
        jobtap_host_error_t derr;
        if (check_dependencies (v[i].job, &derr) < 0) {
            char note[600];
            snprintf (note, sizeof (note),
                      "%s (job may be stuck in DEPEND state)", derr.text);
            raise_exception_internal (v[i].job, "dependency", 4, note);
        }
    }
    /* Each plugin, in load order, gets job.create and job.new for every
     * restored job in its own load sort order (set_load_sort_order), as
     * when a plugin is loaded while jobs exist. */
    int np;
    struct jt_plugin **plugins = plugin_snapshot (rt, &np);
    plugins_hold (rt); /* a callback may remove a plugin of the snapshot */
    for (int j = 0; plugins && j < np; j++) {
        struct jt_plugin *jt = plugins[j];
        memcpy (order, v, k * sizeof (*v));
        sort_for_plugin (jt, order, k, sizeof (*order), restored_cmp_state,
                         restored_cmp_rstate);
        for (i = 0; i < k && is_loaded (rt, jt); i++) {
            stack_push (order[i].job);
            create_and_new_on (jt, order[i].job);
            stack_pop (rt);
        }
    }
    plugins_release (rt);
    free (plugins);
    /* Then every job goes through its states with the whole stack. */
    for (i = 0; i < k; i++) {
        event_post_known (v[i].job, EV_VALIDATE, NULL);
        job_spec_rest (v[i].job);
        job_decref (v[i].job);
    }
    free (v);
    free (order);
    runtime_unlock ();
    return (int)k;
}
