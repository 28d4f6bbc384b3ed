/* plugin_arg.c: args built from objects (plugin_arg_create_with), the
 * lazy key the runtime's "jobspec" is (plugin_arg_set_lazy), and
 * flux_plugin_arg_pack/unpack answering, writing and failing as jansson
 * does on the same object.  Linked with the runtime's static library:
 * these are not exported. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <flux/core.h>

#include "find_json.h"
#include "plugin_arg.h"
#include "tap.h"

static int lazy_gets, lazy_frees;
static json_t *lazy_get (void *arg)
{
    (void)arg;
    lazy_gets++;
    return json_pack ("{s:i}", "v", 7);
}
static void lazy_free (void *arg)
{
    (void)arg;
    lazy_frees++;
}

static const struct plugin_arg_lazy key_only = {
    .key = "jobspec",
    .get = lazy_get,
    .destroy = lazy_free,
};

static flux_plugin_arg_t *lazy_args (void)
{
    flux_plugin_arg_t *a = flux_plugin_arg_create ();
    lazy_gets = lazy_frees = 0;
    flux_plugin_arg_pack (a, FLUX_PLUGIN_ARG_IN, "{s:i s:{s:i}}", "id", 1,
                          "n", "jobspec", 2);
    plugin_arg_set_lazy (a, &key_only, NULL);
    return a;
}

/* The runtime's lazy "jobspec": built only by readers that may want it. */
static void test_lazy_args (void)
{
    flux_plugin_arg_t *a = lazy_args ();
    int id = 0, v = 0, n = 0;
    json_t *o = NULL;
    char *s = NULL;

    ok (flux_plugin_arg_unpack (a, FLUX_PLUGIN_ARG_IN, "{s:i}", "id", &id) == 0
            && id == 1 && lazy_gets == 0,
        "lazy: unpacking other keys builds nothing");
    ok (flux_plugin_arg_unpack (a, FLUX_PLUGIN_ARG_IN, "{s?o s:{s:i} *}",
                                "other", &o, "n", "jobspec", &n) == 0
            && n == 2 && lazy_gets == 0,
        "lazy: an optional other key or a nested key of that name neither");
    ok (flux_plugin_arg_unpack (a, FLUX_PLUGIN_ARG_IN, "{s:{s:i}}",
                                "jobspec", "v", &v) == 0
            && v == 7 && lazy_gets == 1 && lazy_frees == 0,
        "lazy: a top-level read of the key builds it once");
    ok (flux_plugin_arg_unpack (a, FLUX_PLUGIN_ARG_IN, "{s:o}", "jobspec", &o)
                == 0
            && lazy_gets == 1,
        "lazy: ... and later reads find it");
    flux_plugin_arg_destroy (a);
    ok (lazy_frees == 1, "lazy: released once, with the args");

    a = lazy_args ();
    v = 0;
    ok (flux_plugin_arg_unpack (a, FLUX_PLUGIN_ARG_IN, "{s?{s:i}}",
                                "jobspec", "v", &v) == 0 && v == 7,
        "lazy: an optional read of the key builds it");
    flux_plugin_arg_destroy (a);

    a = lazy_args ();
    ok (flux_plugin_arg_unpack (a, FLUX_PLUGIN_ARG_IN, "o", &o) == 0
            && json_object_get (o, "jobspec") && lazy_gets == 1,
        "lazy: unpacking the whole object builds it");
    flux_plugin_arg_destroy (a);

    a = lazy_args ();
    ok (flux_plugin_arg_unpack (a, FLUX_PLUGIN_ARG_IN, "{s:i s:o !}", "id",
                                &id, "n", &o) < 0 && lazy_gets == 1,
        "lazy: a strict format builds it (and fails as it would have)");
    flux_plugin_arg_destroy (a);

    a = lazy_args ();
    ok (flux_plugin_arg_unpack (a, FLUX_PLUGIN_ARG_IN, "{s:i s:s%}", "id", &id,
                                "n", &s, &n) < 0 && lazy_gets == 0,
        "lazy: s%% consumes two arguments");
    ok (flux_plugin_arg_get (a, FLUX_PLUGIN_ARG_IN, &s) == 0
            && strstr (s, "\"jobspec\":{\"v\":7}") && lazy_gets == 1,
        "lazy: arg_get builds it");
    free (s);
    flux_plugin_arg_destroy (a);

    a = lazy_args ();
    flux_plugin_arg_destroy (a);
    ok (lazy_gets == 0 && lazy_frees == 1,
        "lazy: destroyed unread: never built, released once");

    a = lazy_args ();
    flux_plugin_arg_set (a, FLUX_PLUGIN_ARG_IN | FLUX_PLUGIN_ARG_REPLACE, "{}");
    ok (lazy_gets == 0 && lazy_frees == 1
            && flux_plugin_arg_unpack (a, FLUX_PLUGIN_ARG_IN, "{s?o}",
                                       "jobspec", &o) == 0
            && lazy_gets == 0,
        "lazy: replacing IN drops it");
    flux_plugin_arg_destroy (a);
}

/* What one unpack writes; compared byte for byte. */
struct targets {
    int i;
    json_int_t I;
    double f;
    const char *s;
    size_t z;
    json_t *o;
};

static void targets_init (struct targets *t)
{
    memset (t, 0, sizeof (*t));
    t->i = -7;
    t->I = -7;
    t->f = -7.5;
    t->s = "unset";
    t->z = 7;
}

/* flux_plugin_arg_unpack of IN answers, writes and fails as jansson's
 * json_unpack does on the same object, both for the formats it unpacks
 * itself and for those it leaves to jansson. */
#define SAME_AS_JANSSON(fmt, ...)                                            \
    do {                                                                     \
        struct targets A, B, *T = &A;                                        \
        json_error_t e;                                                      \
        int ra, rb;                                                          \
        targets_init (&A);                                                   \
        targets_init (&B);                                                   \
        ra = flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, fmt,          \
                                     __VA_ARGS__);                           \
        T = &B;                                                              \
        (void)T;                                                             \
        rb = json_unpack_ex (doc, &e, 0, fmt, __VA_ARGS__);                  \
        ok (ra == rb && !memcmp (&A, &B, sizeof (A))                         \
                && (ra == 0                                                  \
                    || strstr (flux_plugin_arg_strerror (args), e.text)),    \
            "doc %d: %s: rc %d, as jansson", d, fmt, ra);                    \
        if (A.o && strchr (fmt, 'O')) {                                      \
            json_decref (A.o);                                               \
            json_decref (B.o);                                               \
        }                                                                    \
    } while (0)

/* Args whose IN has only some members of doc: the others ("a", "f" and
 * "i") come from a lazy fill, or a finder tells them, as the runtime's
 * args of a job's callback do with the job's fields. */
static json_t *split_doc;
static int lazy_fills;

static json_t *split_get (void *arg)
{
    (void)arg;
    return NULL; /* no lazy key in these documents */
}

static void split_fill (void *arg, json_t *in)
{
    const char *k;
    json_t *v;
    (void)arg;
    lazy_fills++;
    json_object_foreach (split_doc, k, v) {
        if (!json_object_get (in, k))
            json_object_set (in, k, v);
    }
}

static int split_find (void *arg,
                       const char *const *path,
                       int depth,
                       json_t **value,
                       struct jobtap_spec_scalar *scalar)
{
    (void)arg;
    return find_in_json (split_doc, path, depth, value, scalar);
}

static const struct plugin_arg_lazy split_lazy = {
    .key = "jobspec",
    .get = split_get,
    .fill = split_fill,
    .find = split_find,
};

static flux_plugin_arg_t *split_args (json_t *doc)
{
    json_t *in = json_copy (doc); /* the same members: the same pointers */
    flux_plugin_arg_t *args;

    json_object_del (in, "a");
    json_object_del (in, "f");
    json_object_del (in, "i");
    args = plugin_arg_create_with (in, NULL);
    split_doc = doc;
    lazy_fills = 0;
    plugin_arg_set_lazy (args, &split_lazy, NULL);
    return args;
}

/* The members a finder tells are read without filling IN; what needs IN
 * whole fills it, once. */
static void test_fill_and_find (void)
{
    json_t *doc = json_loads ("{\"a\":1,\"b\":\"x\",\"f\":{\"g\":2},"
                              "\"i\":[1]}", 0, NULL);
    flux_plugin_arg_t *args = split_args (doc);
    json_t *in = NULL, *out = NULL;
    int a = 0, g = 0;
    const char *b = NULL;
    char *s = NULL;

    ok (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:i s:s s:{s:i}}",
                                "a", &a, "b", &b, "f", "g", &g) == 0
            && a == 1 && !strcmp (b, "x") && g == 2 && lazy_fills == 0,
        "fill: members the finder tells are read without filling");
    ok (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:[i]}", "i", &a)
                == 0
            && lazy_fills == 1,
        "fill: one it cannot tell fills IN");
    flux_plugin_arg_destroy (args);

    args = split_args (doc);
    flux_plugin_arg_pack (args, FLUX_PLUGIN_ARG_IN, "{s:i}", "a", 5);
    ok (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:i}", "a", &a)
                == 0
            && a == 5,
        "fill: a member packed into IN is read, not the finder's");
    ok (flux_plugin_arg_get (args, FLUX_PLUGIN_ARG_IN, &s) == 0
            && strstr (s, "\"a\":5") && strstr (s, "\"i\":[1]")
            && lazy_fills == 1,
        "fill: arg_get fills, the packed member kept");
    free (s);
    flux_plugin_arg_destroy (args);

    args = split_args (doc);
    plugin_arg_objects (args, &in, &out);
    ok (json_equal (in, doc) && lazy_fills == 1,
        "fill: the runtime's own read of IN fills it");
    json_decref (in);
    json_decref (out);
    flux_plugin_arg_destroy (args);
    json_decref (doc);
}

/* What a finder told is kept as long as the args, however many unpacks
 * read it, and again after the args are emptied for the next callback. */
static void test_found_kept (void)
{
    json_t *doc = json_loads ("{\"a\":1,\"b\":\"x\",\"f\":{\"g\":\"y\"}}", 0,
                              NULL);
    json_t *in = json_copy (doc);
    flux_plugin_arg_t *args;
    const char *b = NULL, *g = NULL, *b2 = NULL;
    int a = 0;

    json_object_del (in, "b");
    json_object_del (in, "f");
    args = plugin_arg_create_with (in, json_object ());
    split_doc = doc;
    plugin_arg_set_lazy (args, &split_lazy, NULL);
    ok (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:s}", "b", &b)
                == 0
            && flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN,
                                       "{s:i s:{s:s}}", "a", &a, "f", "g",
                                       &g)
                   == 0
            && flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:s}", "b",
                                       &b2)
                   == 0,
        "found: three unpacks read through the finder");
    ok (b && g && b2 && !strcmp (b, "x") && !strcmp (g, "y")
            && !strcmp (b2, "x") && a == 1,
        "found: every string read is still there");
    ok (plugin_arg_empty (args), "found: the args are emptied");
    json_object_set_new (plugin_arg_in (args), "a", json_integer (2));
    plugin_arg_set_lazy (args, &split_lazy, NULL);
    b = g = NULL;
    ok (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:i s:s s:{s:s}}",
                                "a", &a, "b", &b, "f", "g", &g)
                == 0
            && a == 2 && b && !strcmp (b, "x") && g && !strcmp (g, "y"),
        "found: emptied args read through the finder again");
    flux_plugin_arg_destroy (args);
    json_decref (doc);
}

static void unpack_cases (flux_plugin_arg_t *args, json_t *doc, int d)
{
    SAME_AS_JANSSON ("{s:i}", "a", &T->i);
    SAME_AS_JANSSON ("{s?i}", "zz", &T->i);
    SAME_AS_JANSSON ("{s:i}", "zz", &T->i);
    SAME_AS_JANSSON ("{s:I s:s}", "a", &T->I, "b", &T->s);
    SAME_AS_JANSSON ("{s:F}", "a", &T->f);
    SAME_AS_JANSSON ("{s:f}", "a", &T->f);
    SAME_AS_JANSSON ("{s:F}", "c", &T->f);
    SAME_AS_JANSSON ("{s:f}", "c", &T->f);
    SAME_AS_JANSSON ("{s:b}", "d", &T->i);
    SAME_AS_JANSSON ("{s:n}", "e", NULL);
    SAME_AS_JANSSON ("{s?n}", "e", NULL);
    SAME_AS_JANSSON ("{s:o}", "f", &T->o);
    SAME_AS_JANSSON ("{s?o}", "zz", &T->o);
    SAME_AS_JANSSON ("{s:O}", "f", &T->o);
    SAME_AS_JANSSON ("{s:{s:{s:i}}}", "f", "g", "h", &T->i);
    SAME_AS_JANSSON ("{s?{s?{s?i}}}", "f", "g", "h", &T->i);
    SAME_AS_JANSSON ("{s?{s?{s?F}}}", "f", "g", "h", &T->f);
    SAME_AS_JANSSON ("{s?{s?{s?i}}}", "zz", "g", "h", &T->i);
    SAME_AS_JANSSON ("{s:{s:{s:i}}}", "zz", "g", "h", &T->i);
    SAME_AS_JANSSON ("{s:s}", "a", &T->s);
    SAME_AS_JANSSON ("{s?s}", "e", &T->s);
    SAME_AS_JANSSON ("{s?i}", "e", &T->i);
    SAME_AS_JANSSON ("{s:i s:s s?F}", "a", &T->i, "b", &T->s, "c",
                     &T->f);
    SAME_AS_JANSSON ("{s:i, s:s}", "a", &T->i, "b", &T->s);
    SAME_AS_JANSSON ("{s:[i]}", "i", &T->i);
    SAME_AS_JANSSON ("{s:i !}", "a", &T->i);
    SAME_AS_JANSSON ("{s:i *}", "a", &T->i);
    SAME_AS_JANSSON ("{s:i} x", "a", &T->i);
    SAME_AS_JANSSON ("{s:s%}", "b", &T->s, &T->z);
    SAME_AS_JANSSON ("{s:i", "a", &T->i);
    if (d < 100) /* the args' own object, not doc, once split */
        SAME_AS_JANSSON ("o", &T->o);
    SAME_AS_JANSSON ("i", &T->i);
}

static void test_unpack_like_jansson (void)
{
    static const char *docs[] = {
        ("{\"a\":1,\"b\":\"x\",\"c\":2.5,\"d\":true,\"e\":null,"
         "\"f\":{\"g\":{\"h\":3}},\"i\":[1]}"),
        "{}",
        "{\"a\":\"1\",\"b\":2,\"c\":\"x\",\"d\":0,\"e\":1,\"f\":5}",
        "{\"f\":{\"g\":null}}",
        "{\"f\":{\"g\":{\"h\":2.5}}}",
    };
    for (int d = 0; d < (int)(sizeof (docs) / sizeof (docs[0])); d++) {
        json_t *doc = json_loads (docs[d], 0, NULL);
        flux_plugin_arg_t *args = plugin_arg_create_with (json_incref (doc),
                                                          NULL);
        unpack_cases (args, doc, d);
        flux_plugin_arg_destroy (args);
        args = split_args (doc);
        unpack_cases (args, doc, d + 100);
        ok (lazy_fills <= 1, "doc %d: filled at most once", d);
        flux_plugin_arg_destroy (args);
        json_decref (doc);
    }
}

/* flux_plugin_arg_pack stores what json_pack makes of the same format
 * and arguments, and fails with its error, both for the formats it packs
 * itself and for those it leaves to jansson. */
#define PACK_AS_JANSSON(fmt, ...)                                            \
    do {                                                                     \
        flux_plugin_arg_t *a = flux_plugin_arg_create ();                    \
        json_t *ours = NULL, *theirs;                                        \
        json_error_t e;                                                      \
        int ra = flux_plugin_arg_pack (a, FLUX_PLUGIN_ARG_IN, fmt,           \
                                       __VA_ARGS__);                         \
        theirs = json_pack_ex (&e, 0, fmt, __VA_ARGS__);                     \
        if (ra == 0)                                                         \
            (void)flux_plugin_arg_unpack (a, FLUX_PLUGIN_ARG_IN, "o", &ours); \
        ok ((ra == 0) == (theirs != NULL)                                    \
                && (ra == 0 ? json_equal (ours, theirs)                      \
                            : strstr (flux_plugin_arg_strerror (a), e.text)  \
                                  != NULL),                                  \
            "pack %s: rc %d, as jansson", fmt, ra);                          \
        json_decref (theirs);                                                \
        flux_plugin_arg_destroy (a);                                         \
    } while (0)

static void test_pack_like_jansson (void)
{
    json_t *obj = json_pack ("{s:[i]}", "x", 1);

    PACK_AS_JANSSON ("{s:s}", "attributes.system.queue", "batch");
    PACK_AS_JANSSON ("{s:i s:I s:b s:f s:n}", "i", -3, "I",
                     (json_int_t)1 << 40, "b", 2, "f", 2.5, "n");
    PACK_AS_JANSSON ("{s:{s:{s:s}} s:i}", "a", "b", "c", "d", "e", 1);
    PACK_AS_JANSSON ("{s:i, s:s}", "a", 1, "b", "x");
    PACK_AS_JANSSON ("{ s : i }", "a", 1);
    PACK_AS_JANSSON ("{}", NULL);
    PACK_AS_JANSSON ("{s:O}", "o", obj);
    PACK_AS_JANSSON ("{s:o}", "o", json_integer (7));
    PACK_AS_JANSSON ("{s:s?}", "a", NULL);
    PACK_AS_JANSSON ("{s:[i s]}", "a", 1, "x");
    /* errors */
    PACK_AS_JANSSON ("{s:s}", "a", NULL);
    PACK_AS_JANSSON ("{s:O}", "a", NULL);
    PACK_AS_JANSSON ("{s:i}", NULL, 1);
    PACK_AS_JANSSON ("{s:s}", "a", "\xff");
    PACK_AS_JANSSON ("{s:i}", "\xff", 1);
    PACK_AS_JANSSON ("{s:f}", "a", NAN);
    PACK_AS_JANSSON ("{s:i", "a", 1);
    PACK_AS_JANSSON ("{s:i} x", "a", 1);
    PACK_AS_JANSSON ("{s:i s}", "a", 1, "b");
    PACK_AS_JANSSON ("{i:i}", 1, 1);
    ok (obj->refcount == 1, "pack: 'O' references all given back");
    json_decref (obj);
}

int main (void)
{
    test_lazy_args ();
    test_unpack_like_jansson ();
    test_fill_and_find ();
    test_found_kept ();
    test_pack_like_jansson ();
    done_testing ();
}
