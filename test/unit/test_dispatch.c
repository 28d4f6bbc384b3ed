/* dispatch.c: the topic cache, the current-job stack, job lookup by id
 * and the args callbacks get, on a runtime made here with in-process
 * plugins. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flux/core.h>
#include <flux/jobtap.h>

#include "core_util.h"
#include "dispatch.h"
#include "plugin_arg.h"
#include "host.h"
#include "job.h"
#include "jtplugin.h"
#include "plugin_container.h"
#include "runtime.h"
#include "spec.h"
#include "tap.h"

static struct runtime rt;

static int cb (flux_plugin_t *p,
               const char *topic,
               flux_plugin_arg_t *args,
               void *arg)
{
    (void)p;
    (void)topic;
    (void)args;
    (void)arg;
    return 0;
}

static struct job *job_make (flux_jobid_t id, int state)
{
    struct job *job = job_create (&rt, NULL, 1001, 20, 12.5);
    if (!job)
        bail_out ("job_create failed");
    job->id = id;
    job->state = state;
    return job;
}

static struct topic_answer *cached (const char *topic)
{
    for (int i = 0; i < TOPIC_CACHE; i++) {
        struct topic_answer *a = &rt.dispatch->topic_cache[i];
        if (a->gen == plugin_handlers_generation () && !strcmp (a->topic, topic))
            return a;
    }
    return NULL;
}

static void test_topics (void)
{
    struct jt_plugin *a = core_plugin_make (&rt, "a"),
                     *b = core_plugin_make (&rt, "b"),
                     *c = core_plugin_make (&rt, "c");
    struct topic_answer *ans;
    char longtopic[100];
    int n = -1;

    flux_plugin_add_handler (a->p, "job.state.*", cb, NULL);
    flux_plugin_add_handler (b->p, "job.state.sched", cb, NULL);
    flux_plugin_add_handler (b->p, "job.new", cb, NULL);

    ok (first_handler (&rt, "job.state.sched", &n) == a && n == 2,
        "first_handler: a first of 2 for job.state.sched");
    ok (first_handler (&rt, "job.state.run", &n) == a && n == 1,
        "first_handler: a alone for job.state.run");
    ok (first_handler (&rt, "job.new", &n) == b && n == 1,
        "first_handler: b alone for job.new");
    ok (first_handler (&rt, "job.validate", &n) == NULL && n == 0,
        "first_handler: nobody for job.validate");
    ok (first_handler (&rt, "job.new", NULL) == b,
        "first_handler with no count pointer");
    ok (first_handler (&rt, "job.ne", &n) == NULL && n == 0
            && first_handler (&rt, "job.new.", &n) == NULL && n == 0
            && first_handler (&rt, "job.state.schedu", &n) == a && n == 1,
        "a topic one byte shorter or longer than a cached one is another");
    char reused[32];
    strcpy (reused, "job.new");
    bool first_new = first_handler (&rt, reused, &n) == b && n == 1;
    strcpy (reused, "job.state.sched");
    bool then_sched = first_handler (&rt, reused, &n) == a && n == 2;
    strcpy (reused, "job.new");
    ok (first_new && then_sched && first_handler (&rt, reused, &n) == b
            && n == 1,
        "one buffer holding one topic then another: each its own answer");
    ok (stack_handles (&rt, "job.state.depend")
            && !stack_handles (&rt, "job.inactive-add"),
        "stack_handles says who listens");

    /* topics 256 bytes apart, as constants may lie: each keeps a pointer
     * slot of its own (a slot by the address's low bits alone gave them
     * one, each evicting the last) */
    static char spaced[8][256];
    int slotted = 0;
    for (int i = 0; i < 8; i++) {
        snprintf (spaced[i], sizeof (spaced[i]), "job.spaced.%d", i);
        (void)first_handler (&rt, spaced[i], NULL);
    }
    for (int i = 0; i < 8; i++) {
        for (int k = 0; k < TOPIC_POINTERS; k++)
            slotted += rt.dispatch->by_pointer[k].topic == spaced[i];
    }
    ok (slotted == 8, "8 topics 256 bytes apart: 8 pointer slots (%d)",
        slotted);

    ans = cached ("job.state.sched");
    ok (ans && ans->first == a && ans->count == 2,
        "the answer is cached for the current handlers generation");
    ok (cached ("job.validate") && cached ("job.validate")->first == NULL,
        "a topic nobody handles is cached too");

    /* the cache is what answers while the generation stays: take a out of
     * the list behind its back */
    rt.plugins = b;
    ok (first_handler (&rt, "job.state.sched", &n) == a && n == 2,
        "same generation: the cached answer");
    plugin_handlers_changed ();
    ok (first_handler (&rt, "job.state.sched", &n) == b && n == 1,
        "plugin_handlers_changed: answered afresh");
    rt.plugins = a;

    plugin_handlers_changed ();
    ok (first_handler (&rt, "job.state.sched", &n) == a && n == 2,
        "a back in the list: a first of 2 again");
    flux_plugin_add_handler (c->p, "job.state.sched", cb, NULL);
    ok (first_handler (&rt, "job.state.sched", &n) == a && n == 3,
        "a handler added: the count follows (3)");
    ok (first_handler (&rt, "job.validate", &n) == NULL && n == 0,
        "...and other topics are still right");
    flux_plugin_remove_handler (a->p, "job.state.*");
    ok (first_handler (&rt, "job.state.sched", &n) == b && n == 2,
        "a handler removed: b first of 2");
    ok (first_handler (&rt, "job.state.run", &n) == NULL && n == 0,
        "...and nobody handles job.state.run now");
    jt_retire (&rt, b);
    ok (first_handler (&rt, "job.state.sched", &n) == c && n == 1,
        "a plugin retired: c alone");

    memset (longtopic, 'x', sizeof (longtopic) - 1);
    longtopic[sizeof (longtopic) - 1] = '\0';
    memcpy (longtopic, "job.", 4);
    flux_plugin_add_handler (c->p, longtopic, cb, NULL);
    ok (first_handler (&rt, longtopic, &n) == c && n == 1,
        "a topic too long to cache is answered");
    ok (cached (longtopic) == NULL, "...and not cached");

    /* many topics: more than the cache holds, all still answered right */
    int wrong = 0;
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 3 * TOPIC_CACHE; i++) {
            char t[32];
            snprintf (t, sizeof (t), "job.event.e%d", i);
            if (first_handler (&rt, t, &n) != NULL || n != 0)
                wrong++;
        }
        if (first_handler (&rt, "job.state.sched", &n) != c || n != 1)
            wrong++;
    }
    isint (wrong, 0, "with the cache full and evicting, answers stay right");

    jt_retire (&rt, a);
    jt_retire (&rt, c);
}

static void test_default_priority (void)
{
    struct jt_plugin *builtin = core_plugin_make (&rt, ".priority-default");
    struct jt_plugin *other;
    int n = -1;

    flux_plugin_add_handler (builtin->p, "job.priority.get", cb, NULL);
    flux_plugin_add_handler (builtin->p, "job.state.priority", cb, NULL);
    ok (default_priority (&rt, "job.priority.get", &n) == builtin && n == 1,
        "default_priority: the builtin, alone");
    ok (default_priority (&rt, "job.new", &n) == NULL && n == 0,
        "a topic the builtin doesn't handle: NULL, 0 handlers");
    ok (!plugins_give_priority (&rt), "no plugin but the builtin gives one");
    ok (state_default_priority (&rt, FLUX_JOB_STATE_PRIORITY,
                                "job.state.priority", &n)
                == builtin
            && n == 1,
        "state_default_priority: the builtin, alone, for PRIORITY");
    ok (state_default_priority (&rt, FLUX_JOB_STATE_SCHED, "job.state.sched",
                                &n)
                == NULL
            && n == 0,
        "and nobody for SCHED");

    other = core_plugin_make (&rt, "prio.so");
    flux_plugin_add_handler (other->p, "job.state.depend", cb, NULL);
    ok (!plugins_give_priority (&rt), "nor one with another topic");
    flux_plugin_add_handler (other->p, "job.priority.get", cb, NULL);
    ok (plugins_give_priority (&rt),
        "one that adds job.priority.get does, asked again");
    ok (default_priority (&rt, "job.priority.get", &n) == builtin && n == 2,
        "another plugin loaded after it: still the builtin, 2 handlers");
    flux_plugin_remove_handler (other->p, "job.priority.get");
    ok (!plugins_give_priority (&rt), "not once it removed it");
    flux_plugin_add_handler (other->p, "job.state.priority", cb, NULL);
    ok (plugins_give_priority (&rt), "job.state.priority gives one too");
    ok (state_default_priority (&rt, FLUX_JOB_STATE_PRIORITY,
                                "job.state.priority", &n)
                == builtin
            && n == 2,
        "state_default_priority: asked again, 2 handlers for PRIORITY");
    flux_plugin_add_handler (other->p, "job.state.sched", cb, NULL);
    ok (state_default_priority (&rt, FLUX_JOB_STATE_SCHED, "job.state.sched",
                                &n)
                == NULL
            && n == 1,
        "and 1 for SCHED once a plugin adds it");
    ok (state_default_priority (&rt, FLUX_JOB_STATE_SCHED | FLUX_JOB_STATE_RUN,
                                "job.state.priority", &n)
                == builtin
            && n == 2,
        "a value not one state: the topic's answer");
    flux_plugin_remove_handler (other->p, "job.state.sched");
    flux_plugin_remove_handler (other->p, "job.state.priority");
    flux_plugin_add_handler (other->p, "job.priority.get", cb, NULL);

    /* a plugin loaded before it answers first */
    rt.plugins = other;
    other->next = builtin;
    builtin->next = NULL;
    plugin_handlers_changed ();
    ok (default_priority (&rt, "job.priority.get", &n) == NULL && n == 2,
        "a plugin first in load order: NULL, 2 handlers");
    rt.plugins = builtin;
    builtin->next = NULL;
    jt_retire (&rt, other);
    ok (!plugins_give_priority (&rt), "none once that plugin is gone");

    builtin->path = strdup ("/x/.priority-default");
    plugin_handlers_changed ();
    ok (default_priority (&rt, "job.priority.get", &n) == NULL && n == 1,
        "a DSO with the builtin's name is not the builtin");
    jt_retire (&rt, builtin);
}

static void test_stack (void)
{
    struct job *a = job_make (1, FLUX_JOB_STATE_SCHED);
    struct job *b = job_make (2, FLUX_JOB_STATE_SCHED);
    int wrong = 0;

    ok (current_job (&rt) == NULL, "no current job on an empty stack");
    ok (stack_push (a) == 0 && current_job (&rt) == a,
        "stack_push makes the job current");
    isint (a->refcount, 2, "the stack holds a reference");
    stack_push (b);
    ok (current_job (&rt) == b, "the last pushed is current");
    stack_pop (&rt);
    ok (current_job (&rt) == a && b->refcount == 1,
        "stack_pop: the one below is current, the reference dropped");
    stack_pop (&rt);
    ok (current_job (&rt) == NULL && a->refcount == 1, "popped empty");
    stack_pop (&rt);
    ok (rt.dispatch->stack_len == 0, "popping an empty stack is a no-op");

    for (int i = 0; i < 40; i++)
        stack_push (i % 2 ? b : a);
    isint (rt.dispatch->stack_len, 40, "the stack grows past its first 16");
    isint (a->refcount, 21, "each push a reference");
    for (int i = 39; i >= 0; i--) {
        if (current_job (&rt) != (i % 2 ? b : a))
            wrong++;
        stack_pop (&rt);
    }
    isint (wrong, 0, "popped in reverse order");
    ok (a->refcount == 1 && b->refcount == 1, "all references dropped");
    job_decref (a);
    job_decref (b);
}

static void test_lookup (void)
{
    struct jt_plugin *jt = core_plugin_make (&rt, "lookup");
    flux_plugin_t *plain = flux_plugin_create ();
    struct job *cur = job_make (JOBTAP_PROVISIONAL_ID_BIT | 3,
                                FLUX_JOB_STATE_NEW);
    struct job *other = job_make (50, FLUX_JOB_STATE_SCHED);
    struct job *gone = job_make (51, FLUX_JOB_STATE_INACTIVE);

    cur->token = 3;
    table_insert (other);
    table_insert (gone);

    errno = 0;
    ok (lookup_jobid (jt->p, FLUX_JOBTAP_CURRENT_JOB) == NULL && errno == 0,
        "CURRENT_JOB with no current job: NULL");
    ok (lookup_jobid (jt->p, 50) == other, "by id: the table's job");
    errno = 0;
    ok (lookup_jobid (jt->p, 52) == NULL && errno == ENOENT,
        "an unknown id: ENOENT");
    errno = 0;
    ok (lookup_jobid (plain, 50) == NULL && errno == EINVAL,
        "from a plugin that is not a jobtap plugin: EINVAL");

    stack_push (cur);
    ok (lookup_jobid (jt->p, FLUX_JOBTAP_CURRENT_JOB) == cur,
        "CURRENT_JOB: the current job");
    ok (lookup_jobid (jt->p, cur->id) == cur,
        "the current job by its id, though not in the table");
    ok (lookup_jobid (jt->p, 50) == other,
        "another id: the table's job, not the current one");
    ok (lookup_active_jobid (jt->p, 50) == other,
        "lookup_active_jobid: an active job");
    ok (lookup_jobid (jt->p, 51) == gone, "lookup_jobid: an inactive job");
    errno = 0;
    ok (lookup_active_jobid (jt->p, 51) == NULL && errno == ENOENT,
        "lookup_active_jobid: an inactive job is ENOENT");
    stack_pop (&rt);

    flux_plugin_destroy (plain);
    job_decref (cur);
    jobs_free_all (&rt);
    jt_retire (&rt, jt);
}

static void test_args (void)
{
    json_t *spec = json_pack ("{s:i s:{s:{s:f}}}", "version", 1,
                              "attributes", "system", "duration", 5.0);
    struct job *job = job_create (&rt, spec, 1001, 20, 12.5);
    json_t *extra = json_pack ("{s:s s:i}", "entry", "e", "prev_state", 4);
    flux_plugin_arg_t *args;
    json_int_t id = 0, priority = 0;
    int userid = 0, urgency = 0, state = 0, prev = 0, x = 0;
    double t_submit = 0;
    json_t *js = NULL, *R = NULL, *o_unused = NULL;
    const char *entry = NULL;

    job->id = 4242;
    job->state = FLUX_JOB_STATE_SCHED;
    job->priority = 4000000000LL;
    job->R = json_pack ("{s:i}", "version", 1);
    args = job_args_create_out (job, extra, json_pack ("{s:i}", "x", 1));
    ok (args != NULL, "job_args_create_out works");
    isint (job->refcount, 2, "the args hold the job until jobspec is read");
    ok (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN,
                                "{s:I s:i s:i s:i s:I s:f s:o s:s s:i}",
                                "id", &id,
                                "userid", &userid,
                                "urgency", &urgency,
                                "state", &state,
                                "priority", &priority,
                                "t_submit", &t_submit,
                                "R", &R,
                                "entry", &entry,
                                "prev_state", &prev) == 0,
        "IN unpacks");
    isint (id, 4242, "IN id");
    isint (userid, 1001, "IN userid");
    isint (urgency, 20, "IN urgency");
    isint (state, FLUX_JOB_STATE_SCHED, "IN state");
    isint (priority, 4000000000LL, "IN priority");
    ok (t_submit == 12.5, "IN t_submit");
    ok (R == job->R, "IN R is the job's");
    ok (entry && !strcmp (entry, "e") && prev == 4, "IN has the extra keys");
    isint (spec->refcount, 2, "jobspec not built yet (only job and test)");
    ok (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_OUT, "{s:i}", "x", &x)
                == 0
            && x == 1,
        "OUT is what was given");
    ok (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:o}", "jobspec",
                                &js) == 0
            && js == spec,
        "IN jobspec, built when read, is the job's");
    isint (spec->refcount, 3, "the args hold the jobspec now");
    isint (job->refcount, 2, "and the job, for what IN may still be asked");

    args_jobspec_drop (args, job);
    isint (spec->refcount, 2, "args_jobspec_drop lets go of the jobspec");
    isint (job->refcount, 2, "...and holds the job to rebuild it");
    job_set_jobspec (job, json_pack ("{s:i}", "version", 9), NULL);
    js = NULL;
    ok (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:o}", "jobspec",
                                &js) == 0
            && js == job->jobspec,
        "read again, it is the job's jobspec as it is now");
    flux_plugin_arg_destroy (args);
    isint (job->refcount, 1, "destroying the args drops what they held");

    job->R = (json_decref (job->R), NULL);
    args = job_args_create (job);
    ok (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:o}", "R", &R)
            < 0,
        "no R key when the job has none");
    ok (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_OUT, "{}") == 0,
        "job_args_create: OUT is an empty object");
    flux_plugin_arg_destroy (args);
    isint (job->refcount, 1, "args never read let go of the job");

    args = job_args_create (job);
    ok (out_errmsg (args) == NULL, "out_errmsg: none set");
    flux_plugin_arg_pack (args, FLUX_PLUGIN_ARG_OUT, "{s:s}", "errmsg",
                          "denied");
    is (out_errmsg (args), "denied", "out_errmsg reads OUT errmsg");

    /* args done with are emptied and serve the next callback */
    flux_plugin_arg_t *first = args;
    job_args_done (&rt, args);
    isint (job->refcount, 1, "job_args_done lets go of the job");
    args = job_args_create_out (job, extra, NULL);
    const char *errmsg = NULL;
    ok (args == first
            && flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_OUT, "{}") == 0
            && flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_OUT, "{s?s}",
                                       "errmsg", &errmsg) == 0
            && errmsg == NULL,
        "the next args are the same, OUT empty again");
    entry = NULL;
    char *in_text = NULL;
    ok (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:s s:I}",
                                "entry", &entry, "id", &id) == 0
            && !strcmp (entry, "e") && id == 4242
            && flux_plugin_arg_get (args, FLUX_PLUGIN_ARG_IN, &in_text) == 0
            && strstr (in_text, "\"userid\":1001"),
        "...IN has the new extra keys and the job's fields");
    free (in_text);
    job_args_done (&rt, args);
    args = job_args_create (job);
    in_text = NULL;
    ok (args == first
            && flux_plugin_arg_get (args, FLUX_PLUGIN_ARG_IN, &in_text) == 0
            && !strstr (in_text, "entry")
            && strstr (in_text, "\"userid\":1001"),
        "...and without extra, none of the last one's, the job's all");
    free (in_text);
    job_args_done (&rt, args);
    struct job *other = job_create (&rt, NULL, 1002, 3, 1.0);
    other->id = 5151;
    args = job_args_create (other);
    ok (args == first
            && flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:I s:i}",
                                       "id", &id, "userid", &userid) == 0
            && id == 5151 && userid == 1002,
        "...for another job, that job's fields");
    job_args_done (&rt, args);
    isint (other->refcount, 1, "...and let go of it when done");
    job_decref (other);
    args = job_args_create (job);
    json_t *held = NULL;
    flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:I}", "id", &id);
    plugin_arg_objects (args, &held, &o_unused);
    json_decref (o_unused);
    job_args_done (&rt, args);
    args = job_args_create (job);
    json_t *in_now = NULL, *out_now = NULL;
    plugin_arg_objects (args, &in_now, &out_now);
    ok (in_now && in_now != held
            && flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:I}",
                                       "id", &id) == 0,
        "args whose IN is held elsewhere are not used again");
    json_decref (in_now);
    json_decref (out_now);
    ok (json_object_get (held, "id") != NULL,
        "...and what holds it still has it");
    json_decref (held);
    flux_plugin_arg_destroy (args);

    json_t *o = call_fields ("updates", spec, "n", 3);

    ok (json_object_get (o, "updates") == spec
            && json_integer_value (json_object_get (o, "n")) == 3
            && json_object_size (o) == 2,
        "call_fields: both keys, the first borrowed");
    json_decref (o);
    o = call_fields ("entry", spec, NULL, 0);
    ok (json_object_size (o) == 1, "call_fields with one key");
    json_decref (o);

    job_decref (job);
    json_decref (extra);
    json_decref (spec);
}

int main (void)
{
    core_runtime_init (&rt, NULL);
    test_topics ();
    test_default_priority ();
    test_stack ();
    test_lookup ();
    test_args ();

    core_runtime_fini (&rt);
    done_testing ();
}
