/* jtplugin.c: the loaded plugins, calls into them, and plugins retired
 * while a callback runs (someone else's or their own), on a runtime made
 * here with in-process plugins. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <flux/core.h>

#include "core_util.h"
#include "host.h"
#include "jtplugin.h"
#include "plugin_container.h"
#include "runtime.h"
#include "tap.h"

static struct runtime rt;

/* What happened, in order: "call:a", "destroy:b", ... */
static char trail[512];

static void note (const char *fmt, const char *s)
{
    char buf[64];
    snprintf (buf, sizeof (buf), fmt, s);
    if (trail[0])
        strncat (trail, " ", sizeof (trail) - strlen (trail) - 1);
    strncat (trail, buf, sizeof (trail) - strlen (trail) - 1);
}

/* Runs when the flux_plugin_t is destroyed: records it, and how many
 * calls were running then. */
static int destroyed_while_active = -1;
static void probe_destroy (void *arg)
{
    note ("destroy:%s", arg);
    destroyed_while_active = rt.calls_active;
    free (arg);
}

/* A plugin whose "probe" aux records when it is destroyed. */
static struct jt_plugin *plugin_make (const char *name)
{
    struct jt_plugin *jt = core_plugin_make (&rt, name);

    if (flux_plugin_aux_set (jt->p, "probe", strdup (name), probe_destroy) < 0)
        bail_out ("probe for %s failed", name);
    return jt;
}

static int plugin_count (void)
{
    int n = 0;
    for (struct jt_plugin *jt = rt.plugins; jt; jt = jt->next)
        n++;
    return n;
}

static int seen_value;
static int cb_record (flux_plugin_t *p,
                      const char *topic,
                      flux_plugin_arg_t *args,
                      void *arg)
{
    (void)arg;
    note ("call:%s", jt_name (p));
    seen_value = -1;
    flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:i}", "value",
                            &seen_value);
    flux_plugin_arg_pack (args, FLUX_PLUGIN_ARG_OUT, "{s:s}", "topic", topic);
    return 7;
}

static int cb_fail (flux_plugin_t *p,
                    const char *topic,
                    flux_plugin_arg_t *args,
                    void *arg)
{
    (void)p;
    (void)topic;
    (void)args;
    (void)arg;
    return -1;
}

/* a's callback retires the plugin given as its handler's arg */
static bool victim_loaded_after;
static int active_inside;
static int cb_retire (flux_plugin_t *p,
                      const char *topic,
                      flux_plugin_arg_t *args,
                      void *arg)
{
    struct jt_plugin *victim = arg;
    (void)topic;
    (void)args;
    note ("call:%s", jt_name (p));
    jt_retire (&rt, victim);
    victim_loaded_after = is_loaded (&rt, victim);
    active_inside = rt.calls_active;
    /* the victim may be this plugin: its memory must still be good */
    note ("after:%s", jt_name (p));
    note ("probe:%s", flux_plugin_aux_get (p, "probe"));
    return 0;
}

/* calls the plugin given as arg, nested */
static int cb_nest (flux_plugin_t *p,
                    const char *topic,
                    flux_plugin_arg_t *args,
                    void *arg)
{
    int rc;
    note ("call:%s", jt_name (p));
    rc = jt_call (arg, topic, args);
    note ("back:%s", trail[0] && strstr (trail, "destroy") ? "destroyed"
                                                            : "alive");
    return rc;
}

static void test_names (void)
{
    struct jt_plugin *a = plugin_make ("a.so");
    flux_plugin_t *plain = flux_plugin_create ();

    ok (jt_get (a->p) == a, "jt_get finds the jobtap plugin");
    ok (jt_runtime (a->p) == &rt, "jt_runtime reaches the runtime");
    errno = 42;
    ok (jt_get (plain) == NULL && errno == 42,
        "jt_get of a plain plugin: NULL, errno kept");
    ok (jt_get (NULL) == NULL && jt_runtime (plain) == NULL,
        "jt_get (NULL), jt_runtime of a plain plugin: NULL");
    is (jt_name (a->p), "a.so", "jt_name is the list name");
    is (jt_name (plain), "none", "jt_name of a plain plugin: none");
    is (jt_internal_name (a), "a.so",
        "jt_internal_name without a plugin name: the list name");
    flux_plugin_set_name (a->p, "alpha");
    is (jt_internal_name (a), "alpha",
        "jt_internal_name: the name the plugin gave itself");
    ok (is_loaded (&rt, a), "is_loaded: a listed plugin");
    flux_plugin_destroy (plain);
    trail[0] = '\0';
    jt_retire (&rt, a);
    is (trail, "destroy:a.so", "jt_retire with no call running destroys");
    isint (destroyed_while_active, 0, "...at once");
    ok (rt.plugins == NULL, "...and unlinks it");
}

static void test_call_and_snapshot (void)
{
    struct jt_plugin *a = plugin_make ("a"), *b = plugin_make ("b"),
                     *c = plugin_make ("c");
    struct jt_plugin **v;
    flux_plugin_arg_t *args = flux_plugin_arg_create ();
    const char *topic = NULL;
    int n = -1;

    v = jt_snapshot (&rt, &n);
    ok (n == 3 && v[0] == a && v[1] == b && v[2] == c && v[3] == NULL,
        "jt_snapshot: the plugins in load order, NULL-terminated");
    free (v);

    flux_plugin_add_handler (b->p, "job.test.*", cb_record, NULL);
    flux_plugin_arg_pack (args, FLUX_PLUGIN_ARG_IN, "{s:i}", "value", 99);
    trail[0] = '\0';
    isint (jt_call (b, "job.test.one", args), 1,
           "jt_call of a handled topic: 1");
    is (trail, "call:b", "the callback ran, once");
    isint (seen_value, 99, "it got the args");
    ok (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_OUT, "{s:s}", "topic",
                                &topic) == 0
            && !strcmp (topic, "job.test.one"),
        "what it set in OUT is there, with the topic it was called for");
    isint (rt.calls_active, 0, "no call counted once it returned");
    isint (jt_call (a, "job.test.one", args), 0,
           "jt_call on a plugin without a handler: 0");
    flux_plugin_add_handler (c->p, "job.test.*", cb_fail, NULL);
    isint (jt_call (c, "job.test.two", args), -1,
           "jt_call of a failing callback: -1");
    isint (rt.calls_active, 0, "...and the call is no longer counted");
    flux_plugin_arg_destroy (args);

    jt_retire (&rt, b);
    v = jt_snapshot (&rt, &n);
    ok (n == 2 && v[0] == a && v[1] == c, "after retiring b: a, c");
    free (v);
    jt_retire (&rt, a);
    jt_retire (&rt, c);
    v = jt_snapshot (&rt, &n);
    ok (v && n == 0 && v[0] == NULL, "no plugins: an empty snapshot");
    free (v);
}

static void test_retire_other (void)
{
    struct jt_plugin *a = plugin_make ("a"), *b = plugin_make ("b");
    unsigned gen = plugin_handlers_generation ();

    flux_plugin_add_handler (a->p, "t", cb_retire, b);
    trail[0] = '\0';
    destroyed_while_active = -1;
    isint (jt_call (a, "t", NULL), 1, "a's callback retires b");
    ok (!victim_loaded_after, "b is unlinked at once (is_loaded false)");
    isint (active_inside, 1, "(one call was running)");
    is (trail, "call:a after:a probe:a destroy:b",
        "b is destroyed only when a's call returned");
    isint (destroyed_while_active, 0, "...with no call running");
    ok (rt.plugins == a && plugin_count () == 1, "a is still loaded");
    ok (rt.retired == NULL, "nothing left retired");
    ok (plugin_handlers_generation () != gen, "retiring changed the handlers' gen");
    jt_retire (&rt, a);
}

static void test_retire_self (void)
{
    struct jt_plugin *a = plugin_make ("a"), *b = plugin_make ("self");

    flux_plugin_add_handler (b->p, "t", cb_retire, b);
    trail[0] = '\0';
    isint (jt_call (b, "t", NULL), 1, "a plugin retires itself");
    ok (!victim_loaded_after, "it is unlinked at once");
    is (trail, "call:self after:self probe:self destroy:self",
        "its memory stayed good to the end of its callback");
    ok (rt.plugins == a && a->next == NULL, "the other plugin stays");

    /* nested: a calls self2, which retires itself; destroyed only when
     * a's (outermost) call returns */
    b = plugin_make ("self2");
    flux_plugin_add_handler (b->p, "t", cb_retire, b);
    flux_plugin_add_handler (a->p, "t", cb_nest, b);
    trail[0] = '\0';
    isint (jt_call (a, "t", NULL), 1, "a nested call retiring itself");
    is (trail,
        "call:a call:self2 after:self2 probe:self2 back:alive "
        "destroy:self2",
        "the inner plugin is destroyed after the outer call returned");
    jt_retire (&rt, a);
}

static void test_hold (void)
{
    struct jt_plugin *a = plugin_make ("held");

    jt_hold_all (&rt);
    jt_hold_all (&rt);
    trail[0] = '\0';
    jt_retire (&rt, a);
    ok (rt.plugins == NULL && rt.retired == a,
        "retired while held: unlinked, kept in retired");
    jt_release_all (&rt);
    is (trail, "", "the inner release destroys nothing");
    errno = 77;
    jt_release_all (&rt);
    is (trail, "destroy:held", "the outer release destroys it");
    isint (errno, 77, "...keeping errno");
    ok (rt.retired == NULL && rt.calls_active == 0, "nothing held or retired");
}

static void test_destroy_unlisted (void)
{
    struct jt_plugin *jt = calloc (1, sizeof (*jt));
    struct service *s = calloc (1, sizeof (*s));

    jt->p = flux_plugin_create ();
    jt->list_name = strdup ("never-listed");
    jt->path = strdup ("/nowhere/never-listed.so");
    s->topic = strdup ("job-manager.never-listed.x");
    jt->services = s;
    flux_plugin_aux_set (jt->p, "probe", strdup ("never-listed"),
                         probe_destroy);
    trail[0] = '\0';
    jt_destroy (jt);
    is (trail, "destroy:never-listed",
        "jt_destroy frees a plugin never listed (and its services)");
    jt_destroy (NULL);
}

int main (void)
{
    core_runtime_init (&rt, NULL);
    test_names ();
    test_call_and_snapshot ();
    test_retire_other ();
    test_retire_self ();
    test_hold ();
    test_destroy_unlisted ();
    done_testing ();
}
