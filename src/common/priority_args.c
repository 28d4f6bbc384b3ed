/* The priority topics' args (priority_args.h). */
#include <jansson.h>
#include <flux/core.h>
#include <flux/jobtap.h>

#include "dispatch.h"
#include "host.h"
#include "job.h"
#include "json_util.h"
#include "log.h"
#include "plugin_arg.h"
#include "priority_args.h"
#include "runtime.h"

static const char *const pass_in_ints[] = {"id", "userid", "urgency", "state",
                                           "priority"};
#define PASS_IN_KEYS (sizeof (pass_in_ints) / sizeof (pass_in_ints[0]) + 1)

/* v is a value the args alone hold, of the type the runtime set. */
static bool own_value (json_t *v, json_type type)
{
    return v && v->refcount == 1 && json_typeof (v) == type;
}

/* Set IN's fields to job's in place: false if a plugin kept, added or
 * replaced any of them (the object is then built anew). */
static bool pass_in_refill (json_t *in, const struct job *job)
{
    const json_int_t ints[] = {(json_int_t)job->id, job->userid, job->urgency,
                               job->state, job->priority};
    json_t *v[PASS_IN_KEYS - 1];

    if (json_object_size (in) > PASS_IN_KEYS)
        (void)json_object_del (in, "jobspec"); /* read for the last job */
    if (in->refcount != 1 || json_object_size (in) != PASS_IN_KEYS)
        return false;
    json_t *t_submit = json_object_get (in, "t_submit");
    if (!own_value (t_submit, JSON_REAL))
        return false;
    for (size_t i = 0; i < PASS_IN_KEYS - 1; i++)
        if (!own_value (v[i] = json_object_get (in, pass_in_ints[i]),
                        JSON_INTEGER))
            return false;
    for (size_t i = 0; i < PASS_IN_KEYS - 1; i++)
        json_integer_set (v[i], ints[i]);
    json_real_set (t_submit, job->t_submit);
    return true;
}

/* OUT as the builtin's answer ({"priority": urgency}), or empty. */
static bool pass_out_refill (json_t *out, const struct job *job, bool builtin)
{
    if (out->refcount != 1)
        return false;
    if (!builtin)
        return json_object_clear (out) == 0;
    json_t *v = json_object_get (out, "priority");
    if (json_object_size (out) != 1 || !own_value (v, JSON_INTEGER))
        return false;
    json_integer_set (v, job->urgency);
    return true;
}

flux_plugin_arg_t *pass_priority_args (struct job *job,
                                       struct jt_plugin *builtin)
{
    struct runtime *rt = job->rt;

    if (job->R || job->end_event)
        return priority_args (job, NULL, builtin); /* not in a pass's states */
    if (rt->pass_in && !pass_in_refill (rt->pass_in, job)) {
        json_decref (rt->pass_in);
        rt->pass_in = NULL;
    }
    if (rt->pass_out && !pass_out_refill (rt->pass_out, job, builtin != NULL)) {
        json_decref (rt->pass_out);
        rt->pass_out = NULL;
    }
    if (!rt->pass_in || !rt->pass_out) {
        flux_plugin_arg_t *fresh = priority_args (job, NULL, builtin);
        if (!fresh)
            return NULL;
        /* keep its objects for the next job */
        pass_args_free (job->rt);
        plugin_arg_objects (fresh, &rt->pass_in, &rt->pass_out);
        return fresh;
    }
    flux_plugin_arg_t *args =
        plugin_arg_create_with (json_incref (rt->pass_in),
                                json_incref (rt->pass_out));
    return args_with_jobspec (args, job);
}

void pass_args_free (struct runtime *rt)
{
    json_decref (rt->pass_in);
    json_decref (rt->pass_out);
    rt->pass_in = rt->pass_out = NULL;
}

/* {"priority": n} from the pool, or NULL (out of memory): the context of
 * a priority event and the builtin's answer in OUT args. */
bool priority_applies (struct job *job, const char *topic,
                       json_int_t priority)
{
    if (priority >= 0)
        return true;
    if (priority != -1 && priority != JOBTAP_PRIORITY_UNAVAIL)
        runtime_log (LOG_ERR,
                     "jobtap: job %ju: %s: priority %jd is out of range "
                     "(0..%ju); ignored",
                     (uintmax_t)job->id, topic, (intmax_t)priority,
                     (uintmax_t)FLUX_JOB_PRIORITY_MAX);
    return false;
}

json_t *priority_object (json_int_t priority)
{
    json_t *o;

    jobtap_host_json_pool_begin ();
    if ((o = json_object ())
        && obj_set (o, "priority", json_integer (priority)) < 0) {
        json_decref (o);
        o = NULL;
    }
    jobtap_host_json_pool_end ();
    return o;
}

/* Args for a priority topic: OUT already holds the builtin's answer when
 * 'builtin' (from default_priority) is set. */
flux_plugin_arg_t *priority_args (struct job *job,
                                  json_t *in,
                                  struct jt_plugin *builtin)
{
    json_t *out = NULL;
    if (builtin && !(out = priority_object (job->urgency)))
        return NULL;
    return job_args_create_out (job, in, out);
}

