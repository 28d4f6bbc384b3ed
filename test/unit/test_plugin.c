/* flux_plugin_*: success and error paths per semantics section 1. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <flux/core.h>

#include "host.h"
#include "tap.h"
#include "util.h"

static int calls_foo, calls_bar;
static int foo (flux_plugin_t *p, const char *t, flux_plugin_arg_t *a, void *d)
{
    (void)p; (void)t; (void)a; (void)d;
    calls_foo++;
    return 0;
}
static int bar (flux_plugin_t *p, const char *t, flux_plugin_arg_t *a, void *d)
{
    (void)p; (void)t; (void)a; (void)d;
    calls_bar++;
    return 0;
}
static int fail (flux_plugin_t *p, const char *t, flux_plugin_arg_t *a, void *d)
{
    (void)p; (void)t; (void)a; (void)d;
    return -1;
}

static int destroyed;
static void destructor (void *arg)
{
    destroyed++;
    free (arg);
}

static void test_basics (void)
{
    flux_plugin_t *p = flux_plugin_create ();
    flux_plugin_t *p2 = flux_plugin_create ();

    ok (p != NULL, "flux_plugin_create works");
    isint (flux_plugin_get_flags (p), FLUX_PLUGIN_RTLD_LAZY,
           "default flags are RTLD_LAZY");
    isint (flux_plugin_get_flags (NULL), 0, "get_flags (NULL) is 0");
    errno = 0;
    ok (flux_plugin_set_flags (p, 1024) < 0 && errno == EINVAL,
        "set_flags with unknown bits: EINVAL");
    errno = 0;
    ok (flux_plugin_set_flags (NULL, 0) < 0 && errno == EINVAL,
        "set_flags (NULL): EINVAL");
    ok (flux_plugin_set_flags (p, FLUX_PLUGIN_RTLD_NOW
                                      | FLUX_PLUGIN_RTLD_GLOBAL) == 0
            && flux_plugin_get_flags (p) == (FLUX_PLUGIN_RTLD_NOW
                                             | FLUX_PLUGIN_RTLD_GLOBAL),
        "set_flags/get_flags round trip");

    ok (flux_plugin_get_name (p) == NULL, "no name before set_name");
    errno = 0;
    ok (flux_plugin_get_name (NULL) == NULL && errno == EINVAL,
        "get_name (NULL): EINVAL");
    errno = 0;
    ok (flux_plugin_set_name (p, NULL) < 0 && errno == EINVAL,
        "set_name (p, NULL): EINVAL");
    ok (flux_plugin_set_name (p, "a") == 0 && flux_plugin_set_name (p, "b") == 0,
        "set_name twice works");
    is (flux_plugin_get_name (p), "b", "get_name returns the last name");
    is (flux_plugin_strerror (p), "", "strerror is empty after success");

    const char *u1 = flux_plugin_get_uuid (p);
    const char *u2 = flux_plugin_get_uuid (p2);
    ok (u1 && strlen (u1) == 36, "uuid is 36 characters");
    like (u1, "^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-"
              "[0-9a-f]{12}$", "uuid is a version 4 uuid");
    ok (u1 && u2 && strcmp (u1, u2) != 0, "two plugins have different uuids");
    errno = 0;
    ok (flux_plugin_get_uuid (NULL) == NULL && errno == EINVAL,
        "get_uuid (NULL): EINVAL");
    ok (flux_plugin_get_path (p) == NULL, "get_path is NULL before load");
    ok (flux_plugin_get_path (NULL) == NULL, "get_path (NULL) is NULL");
    flux_plugin_destroy (p);
    flux_plugin_destroy (p2);
    errno = 0;
    flux_plugin_destroy (NULL);
    isint (errno, 0, "destroy (NULL) is a no-op");
}

static void test_handlers (void)
{
    flux_plugin_t *p = flux_plugin_create ();
    const struct flux_plugin_handler tab[] = {
        { "foo.*", foo, NULL },
        { "*", bar, NULL },
        { NULL, NULL, NULL },
    };

    errno = 0;
    ok (flux_plugin_add_handler (NULL, "x", foo, NULL) < 0 && errno == EINVAL,
        "add_handler (NULL p): EINVAL");
    errno = 0;
    ok (flux_plugin_add_handler (p, NULL, foo, NULL) < 0 && errno == EINVAL,
        "add_handler (NULL topic): EINVAL");
    errno = 0;
    ok (flux_plugin_register (p, "x", NULL) < 0 && errno == EINVAL,
        "register (NULL table): EINVAL");
    ok (flux_plugin_register (p, "tab", tab) == 0, "register a table");
    is (flux_plugin_get_name (p), "tab", "register sets the name");
    ok (flux_plugin_register (p, NULL, (struct flux_plugin_handler[]){
                                           { NULL, NULL, NULL } }) == 0
            && !strcmp (flux_plugin_get_name (p), "tab"),
        "register with NULL name keeps the name");
    ok (flux_plugin_match_handler (p, "foo.test") == foo,
        "foo.test matches foo.*");
    ok (flux_plugin_match_handler (p, "fallthru") == bar,
        "fallthru matches *");
    ok (flux_plugin_get_handler (p, "foo.*") == foo,
        "get_handler is an exact lookup");
    ok (flux_plugin_get_handler (p, "foo.test") == NULL,
        "get_handler does not glob");
    errno = 0;
    ok (flux_plugin_match_handler (NULL, "x") == NULL && errno == EINVAL,
        "match_handler (NULL): EINVAL");
    errno = 0;
    ok (flux_plugin_get_handler (p, NULL) == NULL && errno == EINVAL,
        "get_handler (NULL topic): EINVAL");

    calls_foo = calls_bar = 0;
    isint (flux_plugin_call (p, "foo.test", NULL), 1,
           "call returns 1 when a handler ran");
    ok (calls_foo == 1 && calls_bar == 0, "only the first match ran");
    ok (flux_plugin_call (NULL, "x", NULL) < 0 && errno == EINVAL,
        "call (NULL): EINVAL");

    ok (flux_plugin_add_handler (p, "foo.*", NULL, NULL) == 0
            && flux_plugin_match_handler (p, "foo.test") == bar,
        "add_handler with NULL cb removes the topic");
    ok (flux_plugin_remove_handler (p, "nomatch") == 0,
        "remove_handler of an unknown topic returns 0");
    ok (flux_plugin_remove_handler (p, "*") == 0
            && flux_plugin_match_handler (p, "foo.test") == NULL,
        "remove_handler works");
    isint (flux_plugin_call (p, "foo.test", NULL), 0,
           "call with no match returns 0");
    ok (flux_plugin_add_handler (p, "dup", foo, NULL) == 0
            && flux_plugin_add_handler (p, "dup", bar, NULL) == 0
            && flux_plugin_match_handler (p, "dup") == foo,
        "duplicate topics: the first registered wins");
    ok (flux_plugin_add_handler (p, "bad", fail, NULL) == 0
            && flux_plugin_call (p, "bad", NULL) == -1,
        "call returns -1 when the callback fails");
    ok (flux_plugin_add_handler (p, "x.*", foo, NULL) == 0
            && flux_plugin_match_handler (p, "x.a.b") == foo,
        "* matches across dots (fnmatch flags 0)");
    flux_plugin_destroy (p);
}

static void test_aux (void)
{
    flux_plugin_t *p = flux_plugin_create ();
    char *v1 = strdup ("one");
    char *v2 = strdup ("two");

    errno = 0;
    ok (flux_plugin_aux_set (p, NULL, NULL, NULL) < 0 && errno == EINVAL,
        "aux_set (NULL key, NULL val): EINVAL");
    errno = 0;
    ok (flux_plugin_aux_set (p, "k", NULL, destructor) < 0 && errno == EINVAL,
        "aux_set (NULL val with destructor): EINVAL");
    errno = 0;
    ok (flux_plugin_aux_set (p, NULL, v1, NULL) < 0 && errno == EINVAL,
        "aux_set (NULL key without destructor): EINVAL");
    destroyed = 0;
    ok (flux_plugin_aux_set (p, "k", v1, destructor) == 0
            && flux_plugin_aux_get (p, "k") == v1,
        "aux_set/aux_get work");
    ok (flux_plugin_aux_set (p, "k", v2, destructor) == 0 && destroyed == 1
            && flux_plugin_aux_get (p, "k") == v2,
        "replacing a key runs the old destructor");
    errno = 0;
    ok (flux_plugin_aux_get (p, "missing") == NULL && errno == ENOENT,
        "aux_get of a missing key: ENOENT");
    errno = 0;
    ok (flux_plugin_aux_get (p, NULL) == NULL && errno == EINVAL,
        "aux_get (NULL key): EINVAL");
    ok (flux_plugin_aux_set (p, "k", NULL, NULL) == 0 && destroyed == 2
            && flux_plugin_aux_get (p, "k") == NULL,
        "aux_set (key, NULL) deletes and runs the destructor");
    ok (flux_plugin_aux_set (p, NULL, strdup ("anon"), destructor) == 0,
        "anonymous aux item with destructor is accepted");
    char *v3 = strdup ("three");
    flux_plugin_aux_set (p, "k3", v3, destructor);
    flux_plugin_aux_delete_value (p, v3);
    isint (destroyed, 3, "aux_delete_value runs the destructor");
    flux_plugin_aux_delete_value (p, NULL);
    flux_plugin_destroy (p);
    isint (destroyed, 4, "destroy runs the remaining (anonymous) destructor");
}

static void test_conf (void)
{
    flux_plugin_t *p = flux_plugin_create ();
    int i = 0;

    errno = 0;
    ok (flux_plugin_get_conf (p) == NULL && errno == ENOENT,
        "get_conf without conf: ENOENT");
    is (flux_plugin_strerror (p), "No plugin conf set", "... with message");
    errno = 0;
    ok (flux_plugin_conf_unpack (p, "{s:i}", "x", &i) < 0 && errno == ENOENT,
        "conf_unpack without conf: ENOENT");
    errno = 0;
    ok (flux_plugin_set_conf (p, NULL) < 0 && errno == EINVAL,
        "set_conf (NULL): EINVAL");
    errno = 0;
    ok (flux_plugin_set_conf (p, "{") < 0 && errno == EINVAL,
        "set_conf with bad JSON: EINVAL");
    like (flux_plugin_strerror (p), "^parse error: col [0-9]+: ",
          "... with a parse error message");
    ok (flux_plugin_set_conf (p, "{\"foo\":{\"test\":1}}") == 0,
        "set_conf works");
    is (flux_plugin_get_conf (p), "{\"foo\":{\"test\":1}}",
        "get_conf returns compact JSON");
    ok (flux_plugin_conf_unpack (p, "{s:{s:i}}", "foo", "test", &i) == 0
            && i == 1,
        "conf_unpack works");
    errno = 0;
    ok (flux_plugin_conf_unpack (p, "{s:s}", "foo", &(const char *){ 0 }) < 0
            && errno == EINVAL,
        "conf_unpack type error: EINVAL");
    like (flux_plugin_strerror (p), "^unpack error: ", "... with message");
    errno = 0;
    ok (flux_plugin_conf_unpack (NULL, "{}") < 0 && errno == EINVAL,
        "conf_unpack (NULL): EINVAL");
    flux_plugin_destroy (p);
}

static void test_args (void)
{
    flux_plugin_arg_t *a = flux_plugin_arg_create ();
    char *s = NULL;
    int x = 0, y = 0;

    errno = 0;
    ok (flux_plugin_arg_get (a, FLUX_PLUGIN_ARG_IN, &s) < 0 && errno == ENOENT,
        "arg_get with no args: ENOENT");
    is (flux_plugin_arg_strerror (a), "No args currently set",
        "... with message");
    errno = 0;
    ok (flux_plugin_arg_set (NULL, 0, "{}") < 0 && errno == EINVAL,
        "arg_set (NULL): EINVAL");
    errno = 0;
    ok (flux_plugin_arg_get (a, 0, NULL) < 0 && errno == EINVAL,
        "arg_get (NULL out): EINVAL");
    ok (flux_plugin_arg_set (a, FLUX_PLUGIN_ARG_IN, "{\"a\":1}") == 0,
        "arg_set IN");
    ok (flux_plugin_arg_pack (a, FLUX_PLUGIN_ARG_IN, "{s:i}", "b", 2) == 0,
        "arg_pack IN merges");
    ok (flux_plugin_arg_get (a, FLUX_PLUGIN_ARG_IN, &s) == 0, "arg_get IN");
    is (s, "{\"a\":1,\"b\":2}", "IN holds both keys (shallow merge)");
    free (s);
    ok (flux_plugin_arg_pack (a, FLUX_PLUGIN_ARG_IN, "{s:{s:i}}", "n", "x", 1)
                == 0
            && flux_plugin_arg_pack (a, FLUX_PLUGIN_ARG_IN, "{s:{s:i}}", "n",
                                     "y", 2) == 0
            && flux_plugin_arg_unpack (a, FLUX_PLUGIN_ARG_IN, "{s:{s?i s?i}}",
                                       "n", "x", &x, "y", &y) == 0
            && x == 0 && y == 2,
        "merge is top-level only: nested objects are replaced");
    ok (flux_plugin_arg_pack (a, FLUX_PLUGIN_ARG_IN | FLUX_PLUGIN_ARG_REPLACE,
                              "{s:i}", "c", 3) == 0
            && flux_plugin_arg_get (a, FLUX_PLUGIN_ARG_IN, &s) == 0
            && !strcmp (s, "{\"c\":3}"),
        "REPLACE replaces the whole object");
    free (s);
    ok (flux_plugin_arg_set (a, FLUX_PLUGIN_ARG_IN, "5") < 0,
        "merging a non-object into an object fails");
    ok (flux_plugin_arg_set (a, FLUX_PLUGIN_ARG_IN, NULL) < 0,
        "set NULL into an existing object fails without REPLACE");
    ok (flux_plugin_arg_set (a, FLUX_PLUGIN_ARG_IN | FLUX_PLUGIN_ARG_REPLACE,
                             NULL) == 0
            && flux_plugin_arg_get (a, FLUX_PLUGIN_ARG_IN, &s) < 0
            && errno == ENOENT,
        "set NULL with REPLACE clears");
    ok (flux_plugin_arg_set (a, FLUX_PLUGIN_ARG_OUT, "[1]") == 0,
        "a non-object may be stored in an empty target");
    ok (flux_plugin_arg_set (a, FLUX_PLUGIN_ARG_OUT, "{") < 0,
        "arg_set with bad JSON fails");
    ok (strlen (flux_plugin_arg_strerror (a)) > 0, "... with a message");
    ok (flux_plugin_arg_pack (a, FLUX_PLUGIN_ARG_OUT, "{s:i", "x", 1) < 0
            && strlen (flux_plugin_arg_strerror (a)) > 0,
        "arg_pack with a bad format fails with a message");
    ok (flux_plugin_arg_unpack (a, FLUX_PLUGIN_ARG_OUT, "{s:i}", "x", &x) < 0,
        "arg_unpack type mismatch fails");
    errno = 0;
    ok (flux_plugin_arg_unpack (NULL, 0, "{}") < 0 && errno == EINVAL,
        "arg_unpack (NULL): EINVAL");
    errno = 0;
    ok (flux_plugin_arg_pack (a, 0, NULL) < 0 && errno == EINVAL,
        "arg_pack (NULL fmt): EINVAL");
    errno = ENOENT;
    is (flux_plugin_arg_strerror (NULL), strerror (ENOENT),
        "arg_strerror (NULL) is strerror (errno)");
    flux_plugin_arg_destroy (a);
    flux_plugin_arg_destroy (NULL);

    flux_plugin_arg_t *b = flux_plugin_arg_create ();
    ok (flux_plugin_arg_unpack (b, FLUX_PLUGIN_ARG_IN, "{}") < 0,
        "unpack of an empty target fails");
    flux_plugin_arg_destroy (b);
}

static void test_dso (void)
{
    flux_plugin_t *p = flux_plugin_create ();

    errno = 0;
    ok (flux_plugin_load_dso (p, NULL) < 0 && errno == EINVAL,
        "load_dso (NULL path): EINVAL");
    errno = 0;
    ok (flux_plugin_load_dso (p, "/noexist") < 0 && errno == ENOENT,
        "load_dso of a missing file: ENOENT");
    is (flux_plugin_strerror (p), "/noexist: No such file or directory",
        "... with \"path: strerror\"");
    flux_plugin_set_flags (p, FLUX_PLUGIN_RTLD_NOW);
    ok (flux_plugin_load_dso (p, plugin_path ("undefined.so")) < 0,
        "RTLD_NOW with an undefined symbol fails");
    like (flux_plugin_strerror (p),
          "^dlopen: .*: (undefined symbol|symbol not found)",
          "... with a dlopen message");
    flux_plugin_destroy (p);

    p = flux_plugin_create ();
    errno = 12345;
    ok (flux_plugin_load_dso (p, plugin_path ("initfail.so")) < 0
            && errno == 0,
        "failing flux_plugin_init: -1 with errno 0");
    like (flux_plugin_strerror (p), "initfail.so: flux_plugin_init failed$",
          "... with message");
    flux_plugin_destroy (p);

    p = flux_plugin_create ();
    ok (flux_plugin_load_dso (p, plugin_path ("noinit.so")) == 0,
        "a DSO without flux_plugin_init loads");
    is (flux_plugin_get_path (p), plugin_path ("noinit.so"),
        "get_path returns the path");
    is (flux_plugin_get_name (p), plugin_path ("noinit.so"),
        "the name defaults to the full path");
    flux_plugin_destroy (p);
}

int main (void)
{
    test_basics ();
    test_handlers ();
    test_aux ();
    test_conf ();
    test_args ();
    test_dso ();
    done_testing ();
}
