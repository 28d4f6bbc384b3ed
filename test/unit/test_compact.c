/* compact.c: compact_dumps gives text that json_loads reads back to an
 * equal value (strings with escapes and UTF-8, integers, reals that stay
 * reals, nested containers), its exact text, and the memo of shared
 * subtrees. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "compact.h"
#include "host.h"
#include "tap.h"

/* the memo the runtime holds, here the test's */
static struct compact_memo memo;

/* compact_dumps(o) is 'want' (if not NULL) and loads back equal to o. */
static void check (json_t *o, const char *want, const char *what)
{
    char *text = compact_dumps (&memo, o);
    json_error_t err;
    json_t *back = text ? json_loads (text, JSON_DECODE_ANY | JSON_ALLOW_NUL,
                                      &err)
                        : NULL;

    if (want)
        is (text, want, "%s: text", what);
    ok (back && json_equal (back, o), "%s: loads back equal", what);
    json_decref (back);
    free (text);
}

static void test_scalars (void)
{
    json_t *o;

    o = json_integer (0);
    check (o, "0", "0");
    json_decref (o);
    o = json_integer (-42);
    check (o, "-42", "-42");
    json_decref (o);
    o = json_integer (INT64_MAX);
    check (o, "9223372036854775807", "the largest integer");
    json_decref (o);
    o = json_integer (INT64_MIN);
    check (o, "-9223372036854775808", "the smallest integer");
    json_decref (o);

    o = json_real (2.0);
    check (o, "2.0", "a whole real");
    json_decref (o);
    o = json_real (-3600.0);
    check (o, "-3600.0", "a negative whole real");
    json_decref (o);
    o = json_real (0.0);
    check (o, "0.0", "real zero");
    json_decref (o);
    o = json_real (0.1);
    check (o, "0.10000000000000001", "0.1 to 17 digits");
    json_decref (o);
    o = json_real (1e300);
    check (o, "1.0000000000000001e+300", "a large real");
    json_decref (o);
    o = json_real (1e15);
    check (o, "1000000000000000.0", "1e15 keeps its '.0'");
    json_decref (o);
    o = json_real (-2.5e-8);
    check (o, NULL, "a small negative real");
    json_decref (o);

    o = json_true ();
    check (o, "true", "true");
    o = json_false ();
    check (o, "false", "false");
    o = json_null ();
    check (o, "null", "null");

    ok (compact_dumps (&memo, NULL) == NULL, "compact_dumps (&memo, NULL) is NULL");
}

static void test_reals_stay_reals (void)
{
    json_t *o = json_pack ("{s:f s:f s:f s:I}", "a", 1.0, "b", 1e20, "c",
                           -0.0, "d", (json_int_t)1);
    char *text = compact_dumps (&memo, o);
    json_t *back = json_loads (text, 0, NULL);
    const char *k;
    json_t *v;
    int reals = 0;

    json_object_foreach (back, k, v) {
        if (json_is_real (v))
            reals++;
    }
    isint (reals, 3, "every real loads back as a real");
    ok (json_is_integer (json_object_get (back, "d")),
        "and the integer as an integer");
    is (text, "{\"a\":1.0,\"b\":1e+20,\"c\":-0.0,\"d\":1}",
        "their text");
    json_decref (back);
    free (text);
    json_decref (o);
}

static void test_strings (void)
{
    json_t *o;

    o = json_string ("plain");
    check (o, "\"plain\"", "a plain string");
    json_decref (o);
    o = json_string ("q\"b\\s/n\nt\tr\rb\bf\f");
    check (o, "\"q\\\"b\\\\s/n\\nt\\tr\\rb\\bf\\f\"",
           "quotes, backslash and the short escapes");
    json_decref (o);
    o = json_string ("\x01\x1f\x7f");
    check (o, "\"\\u0001\\u001f\x7f\"",
           "other control characters as \\u00xx, DEL as is");
    json_decref (o);
    o = json_stringn ("a\0b", 3);
    check (o, "\"a\\u0000b\"", "an embedded NUL");
    json_decref (o);
    o = json_string ("h\xc3\xa9llo \xe2\x9c\x93 \xf0\x9f\x98\x80");
    check (o, "\"h\xc3\xa9llo \xe2\x9c\x93 \xf0\x9f\x98\x80\"",
           "UTF-8 is kept as is");
    json_decref (o);
    o = json_pack ("{s:s}", "k\"\xc3\xa9\n", "v");
    check (o, "{\"k\\\"\xc3\xa9\\n\":\"v\"}", "keys are escaped the same way");
    json_decref (o);

    /* Every byte that needs an escape, at each place of the first 24, in
     * runs of bytes just beside '"' and '\\' and the controls (the writer
     * tests eight bytes at a time) */
    const char fills[] = {'x', '!', '#', '[', ']', ' ', '~'};
    const char escaped[] = {'\0', '\x01', '\b', '\x1f', '"', '\\'};
    int wrong = 0, cases = 0;
    for (size_t f = 0; f < sizeof (fills); f++) {
        for (size_t e = 0; e < sizeof (escaped); e++) {
            for (size_t at = 0; at < 24; at++) {
                char text[24];
                memset (text, fills[f], sizeof (text));
                text[at] = escaped[e];
                o = json_stringn (text, sizeof (text));
                char *dumped = compact_dumps (&memo, o);
                json_error_t err;
                json_t *back = dumped ? json_loads (dumped, JSON_DECODE_ANY
                                                        | JSON_ALLOW_NUL,
                                                    &err)
                                      : NULL;
                if (!back || !json_equal (back, o))
                    wrong++;
                cases++;
                json_decref (back);
                free (dumped);
                json_decref (o);
            }
        }
    }
    ok (wrong == 0, "%d strings with one escape at each place: %d wrong",
        cases, wrong);

    /* longer than the writer's stack buffer, escapes past it */
    char *big = malloc (5001);
    memset (big, 'x', 5000);
    big[5000] = '\0';
    big[3000] = '\n';
    o = json_string (big);
    check (o, NULL, "a 5000-byte string with an escape past 2 KiB");
    json_decref (o);
    free (big);
}

static void test_containers (void)
{
    json_t *o;

    o = json_object ();
    check (o, "{}", "an empty object");
    json_decref (o);
    o = json_array ();
    check (o, "[]", "an empty array");
    json_decref (o);
    o = json_pack ("{s:i s:[i,f,s,n,b] s:{s:{s:[]}}}", "version", 1,
                   "list", 1, 2.5, "s", 1, "nested", "a", "b");
    check (o,
           "{\"version\":1,\"list\":[1,2.5,\"s\",null,true],"
           "\"nested\":{\"a\":{\"b\":[]}}}",
           "nested containers, keys in insertion order");
    json_decref (o);

    json_t *deep = json_array ();
    for (int i = 0; i < 200; i++)
        deep = json_pack ("[o]", deep);
    check (deep, NULL, "200 nested arrays");
    json_decref (deep);
    deep = json_array ();
    for (int i = 0; i < 300; i++)
        deep = json_pack ("[o]", deep);
    ok (compact_dumps (&memo, deep) == NULL, "300 nested arrays are refused");
    json_decref (deep);
}

static void test_memo (void)
{
    json_t *shared = json_pack ("{s:i s:[i,i]}", "nnodes", 2, "slots", 1, 4);
    json_t *a = json_pack ("{s:O s:i}", "resources", shared, "id", 1);
    json_t *b = json_pack ("{s:i s:O}", "id", 2, "resources", shared);
    char *text;

    isint (shared->refcount, 3, "the subtree is shared by two jobspecs");
    text = compact_dumps (&memo, shared);
    isint (shared->refcount, 3, "a shared root is not remembered");
    free (text);
    text = compact_dumps (&memo, a);
    is (text, "{\"resources\":{\"nnodes\":2,\"slots\":[1,4]},\"id\":1}",
        "the first jobspec's text");
    free (text);
    isint (shared->refcount, 4, "the memo holds the shared subtree");

    /* the memo's contract: shared subtrees are not changed while
     * remembered; changing one shows the remembered text is reused */
    json_object_set_new (shared, "nnodes", json_integer (9));
    text = compact_dumps (&memo, b);
    is (text, "{\"id\":2,\"resources\":{\"nnodes\":2,\"slots\":[1,4]}}",
        "the second jobspec reuses the remembered text");
    free (text);
    compact_memo_clear (&memo);
    isint (shared->refcount, 3, "compact_memo_clear lets go of it");
    text = compact_dumps (&memo, b);
    is (text, "{\"id\":2,\"resources\":{\"nnodes\":9,\"slots\":[1,4]}}",
        "after clearing, the subtree is written again");
    free (text);
    compact_memo_clear (&memo);

    json_t *s[5], *all = json_array ();
    for (int i = 0; i < 5; i++) {
        s[i] = json_pack ("[i]", i);
        json_array_append (all, s[i]);
    }
    text = compact_dumps (&memo, all);
    is (text, "[[0],[1],[2],[3],[4]]", "five shared arrays");
    free (text);
    ok (s[0]->refcount == 2 && s[1]->refcount == 3 && s[4]->refcount == 3,
        "the memo keeps the last four (the oldest is let go)");
    compact_memo_clear (&memo);
    ok (s[1]->refcount == 2 && s[4]->refcount == 2,
        "compact_memo_clear lets go of all");
    for (int i = 0; i < 5; i++)
        json_decref (s[i]);
    json_decref (all);
    json_decref (a);
    json_decref (b);
    json_decref (shared);
}

/* compact_append: the same text as compact_dumps, after what the buffer
 * holds, into a new buffer or one that must grow past the writer's own. */
static void test_append (void)
{
    json_t *small = json_pack ("{s:i s:[s]}", "a", 1, "b", "c");
    char big[5000];
    memset (big, 'y', sizeof (big) - 1);
    big[sizeof (big) - 1] = '\0';
    json_t *large = json_pack ("{s:s}", "big", big);
    char *want_small = compact_dumps (&memo, small), *want_large = compact_dumps (&memo, large);
    char *data = NULL;
    size_t len = 0, cap = 0;

    ok (compact_append (&memo, small, &data, &len, &cap) == 0 && data
            && !strcmp (data, want_small) && len == strlen (want_small)
            && cap > len,
        "appended to no buffer: a new one with the text");
    ok (compact_append (&memo, large, &data, &len, &cap) == 0 && data
            && !strncmp (data, want_small, strlen (want_small))
            && !strcmp (data + strlen (want_small), want_large)
            && len == strlen (want_small) + strlen (want_large),
        "appended again: the first text kept, the second after it");
    ok (compact_append (&memo, NULL, &data, &len, &cap) == -1
            && len == strlen (want_small) + strlen (want_large),
        "appending NULL fails and leaves the buffer");
    free (data);
    data = NULL;
    len = cap = 0;
    ok (compact_append (&memo, large, &data, &len, &cap) == 0 && data
            && !strcmp (data, want_large),
        "a first text larger than the writer's stack buffer");
    free (data);
    free (want_small);
    free (want_large);
    json_decref (small);
    json_decref (large);
}

/* The text a job keeps reads back to an equal value, whatever it holds. */
static void test_round_trips (void)
{
    const char *cases[] = {
        "{\"version\":1,\"d\":3600.0,\"r\":0.1,\"e\":1e+300,\"neg\":-2.5}",
        "{\"s\":\"quote \\\" back \\\\ nl \\n tab \\t ctl \\u0001 nul \\u0000 \u00e9\\u00e8\"}",
        "{\"i\":[0,-1,9223372036854775807,-9223372036854775808],\"b\":[true,false,null]}",
        "{\"nested\":{\"a\":[{\"b\":{}},[]],\"k\\\"ey\":\"\"}}",
        "{\"\\nkey\":\"\\tstart\",\"end\\\"\":\"end\\\\\"}",
        "[]",
    };
    for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++) {
        json_error_t e;
        json_t *o = json_loads (cases[i], JSON_DECODE_ANY | JSON_ALLOW_NUL, &e);
        char *text = compact_dumps (&memo, o);
        json_t *back = text ? json_loads (text, JSON_DECODE_ANY
                                                    | JSON_ALLOW_NUL, &e)
                            : NULL;
        ok (o && back && json_equal (o, back), "compact text round trip %zu: %s",
            i, text ? text : "(null)");
        free (text);
        json_decref (o);
        json_decref (back);
    }
    /* past the writer's stack buffer, escapes early and late */
    char big[5000];
    memset (big, 'x', sizeof (big) - 1);
    big[sizeof (big) - 1] = '\0';
    big[3] = '"';
    big[4500] = '\n';
    json_t *o = json_pack ("[s,s]", big, big + 10);
    char *text = compact_dumps (&memo, o);
    json_t *back = text ? json_loads (text, JSON_DECODE_ANY, NULL) : NULL;
    ok (o && back && json_equal (o, back),
        "compact text round trip of 10 KB of strings with escapes");
    free (text);
    json_decref (o);
    json_decref (back);

    /* whole reals take a fast path; the text must be what %.17g gives */
    const struct {
        double v;
        const char *text;
    } reals[] = {
        {3600.0, "3600.0"},   {-7200.0, "-7200.0"},
        {0.0, "0.0"},         {-0.0, "-0.0"},
        {1e14, "100000000000000.0"}, {1e15, "1000000000000000.0"},
        {1e17, "1e+17"},      {0.5, "0.5"},
    };
    for (size_t i = 0; i < sizeof (reals) / sizeof (reals[0]); i++) {
        json_t *r = json_real (reals[i].v);
        char *t = compact_dumps (&memo, r);
        is (t, reals[i].text, "real %s keeps a '.' or exponent (stays a real)",
            reals[i].text);
        free (t);
        json_decref (r);
    }
}

/* Subtrees shared between jobspecs are written once, then from memory:
 * the same text, a reference held while remembered, none after. */
static void test_memo_slots (void)
{
    json_t *res = json_pack ("[{s:s s:i}]", "type", "slot", "count", 1);
    json_t *t1 = json_pack ("{s:O s:i}", "resources", res, "n", 1);
    json_t *t2 = json_pack ("{s:i s:O}", "n", 2, "resources", res);
    char *a = compact_dumps (&memo, t1);
    ok (res->refcount == 4, "a shared subtree's text is remembered");
    char *b = compact_dumps (&memo, t2);
    is (a, "{\"resources\":[{\"type\":\"slot\",\"count\":1}],\"n\":1}",
        "first jobspec with the shared subtree");
    is (b, "{\"n\":2,\"resources\":[{\"type\":\"slot\",\"count\":1}]}",
        "second one, written from memory");
    free (a);
    free (b);

    /* more shared subtrees than remembered, one past the stack buffer */
    char big[3000];
    memset (big, 'y', sizeof (big) - 1);
    big[sizeof (big) - 1] = '\0';
    json_t *sub[6], *trees[6];
    bool same = true;
    for (int i = 0; i < 6; i++) {
        sub[i] = json_pack ("{s:i s:s}", "i", i, "s", i == 2 ? big : "z");
        trees[i] = json_pack ("{s:O s:{s:O}}", "a", sub[i], "b", "c", sub[i]);
    }
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < 6; i++) {
            char *t = compact_dumps (&memo, trees[i]);
            json_t *back = t ? json_loads (t, 0, NULL) : NULL;
            same = same && back && json_equal (back, trees[i]);
            json_decref (back);
            free (t);
        }
    }
    ok (same, "shared subtrees beyond the memory's slots and its buffer");
    compact_memo_clear (&memo);
    bool released = res->refcount == 3;
    for (int i = 0; i < 6; i++) {
        released = released && sub[i]->refcount == 3;
        json_decref (trees[i]);
        json_decref (sub[i]);
    }
    ok (released, "cleared, it holds no reference");
    json_decref (t1);
    json_decref (t2);
    json_decref (res);
}

int main (void)
{
    test_round_trips ();
    test_memo_slots ();
    test_append ();
    test_scalars ();
    test_reals_stay_reals ();
    test_strings ();
    test_containers ();
    test_memo ();
    compact_memo_clear (&memo);
    done_testing ();
}
