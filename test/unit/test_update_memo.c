/* update_memo.c: a pack of the same flat format with the same arguments
 * gives the kept object; anything else is not kept; the oldest of the
 * slots goes; the kept object's text is compact_dumps's. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "compact.h"
#include "tap.h"
#include "update_memo.h"

static struct update_memo memo;

/* What the runtime does for a pack: the kept object, else jansson's pack
 * of it, kept when it may be. */
static json_t *pack (bool *was_kept, const char *fmt, ...)
{
    struct update_memo_key key;
    va_list ap;
    json_t *o;

    va_start (ap, fmt);
    o = update_memo_find (&memo, &key, fmt, ap);
    va_end (ap);
    *was_kept = o != NULL;
    if (o)
        return o;
    va_start (ap, fmt);
    o = json_vpack_ex (NULL, 0, fmt, ap);
    va_end (ap);
    update_memo_keep (&memo, &key, o);
    return o;
}

/* The memo asked only. */
static json_t *find (struct update_memo_key *key, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    json_t *o = update_memo_find (&memo, key, fmt, ap);
    va_end (ap);
    return o;
}

static void is_json (json_t *o, const char *want, const char *what)
{
    char *s = json_dumps (o, JSON_COMPACT | JSON_SORT_KEYS);
    is (s, want, "%s", what);
    free (s);
}

static void test_same_again (void)
{
    bool kept;
    json_t *a = pack (&kept, "{s:s}", "attributes.system.queue", "batch");
    ok (a && !kept, "a first pack is packed");
    /* another buffer with the same text: compared by value */
    char key[] = "attributes.system.queue", value[] = "batch";
    json_t *b = pack (&kept, "{s:s}", key, value);
    ok (kept && b == a, "the same again is the kept object");
    isint (a->refcount, 3, "held by both callers and the memo");
    json_decref (b);

    json_t *c = pack (&kept, "{s:s}", "attributes.system.queue", "debug");
    ok (!kept && c != a, "another string value is not it");
    is_json (c, "{\"attributes.system.queue\":\"debug\"}", "and packs as asked");
    json_t *d = pack (&kept, "{s:s}", "attributes.system.bank", "batch");
    ok (!kept && d != a, "another key is not it");
    json_t *e = pack (&kept, " { s : s } ", "attributes.system.queue", "batch");
    ok (!kept && e != a, "another format text is not it");
    is_json (e, "{\"attributes.system.queue\":\"batch\"}",
             "though it packs the same");
    json_decref (a);
    json_decref (c);
    json_decref (d);
    json_decref (e);
    update_memo_clear (&memo);
}

static void test_scalars (void)
{
    bool kept;
    json_t *a, *b;

    a = pack (&kept, "{s:i s:I s:b s:f s:n}", "attributes.a", 7, "attributes.b",
              (json_int_t)1 << 40, "attributes.c", 1, "attributes.d", 0.5,
              "attributes.e");
    is_json (a,
             "{\"attributes.a\":7,\"attributes.b\":1099511627776,"
             "\"attributes.c\":true,\"attributes.d\":0.5,\"attributes.e\":null}",
             "every scalar kind packs");
    b = pack (&kept, "{s:i s:I s:b s:f s:n}", "attributes.a", 7, "attributes.b",
              (json_int_t)1 << 40, "attributes.c", 1, "attributes.d", 0.5,
              "attributes.e");
    ok (kept && b == a, "and is kept");
    json_decref (b);
    b = pack (&kept, "{s:i s:I s:b s:f s:n}", "attributes.a", 8, "attributes.b",
              (json_int_t)1 << 40, "attributes.c", 1, "attributes.d", 0.5,
              "attributes.e");
    ok (!kept && b != a, "an int apart is not it");
    json_decref (b);
    b = pack (&kept, "{s:i s:I s:b s:f s:n}", "attributes.a", 7, "attributes.b",
              ((json_int_t)1 << 40) + 1, "attributes.c", 1, "attributes.d",
              0.5, "attributes.e");
    ok (!kept && b != a, "a json_int_t apart is not it");
    json_decref (b);
    b = pack (&kept, "{s:i s:I s:b s:f s:n}", "attributes.a", 7, "attributes.b",
              (json_int_t)1 << 40, "attributes.c", 0, "attributes.d", 0.5,
              "attributes.e");
    ok (!kept && b != a, "a bool apart is not it");
    json_decref (b);
    b = pack (&kept, "{s:i s:I s:b s:f s:n}", "attributes.a", 7, "attributes.b",
              (json_int_t)1 << 40, "attributes.c", 1, "attributes.d", 0.25,
              "attributes.e");
    ok (!kept && b != a, "a real apart is not it");
    json_decref (b);
    json_decref (a);
    update_memo_clear (&memo);
}

/* Formats that are not a flat object of plain scalars are never kept. */
static void test_not_kept (void)
{
    struct {
        const char *fmt;
        const char *what;
    } cases[] = {
        {"{s:o}", "an object argument"},
        {"{s:O}", "an object argument, incref'd"},
        {"{s:{s:s}}", "a nested object"},
        {"{s:[s]}", "an array"},
        {"{s?s}", "an optional value"},
        {"{s:s*}", "an optional value"},
        {"{s:s#}", "a string with its length"},
        {"{s:s%}", "a string with its size_t length"},
        {"{s:s+}", "a concatenation"},
        {"[s]", "an array at the top"},
        {"s", "a string at the top"},
        {"{s:s}}", "text after the object"},
    };
    for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++) {
        struct update_memo_key key;
        /* two strings: what each format reads before it stops */
        ok (!find (&key, cases[i].fmt, "attributes.a", "v") && key.len == 0,
            "not kept: %s (%s)", cases[i].what, cases[i].fmt);
    }
    struct update_memo_key key;
    ok (!find (&key, "{s:s}", "attributes.a", (const char *)NULL)
            && key.len == 0,
        "not kept: a NULL string (jansson's error is left to its pack)");
    char big[UPDATE_MEMO_KEY_MAX + 1];
    memset (big, 'x', sizeof (big) - 1);
    big[sizeof (big) - 1] = '\0';
    ok (!find (&key, "{s:s}", "attributes.a", big)
            && key.len == 0,
        "not kept: more than UPDATE_MEMO_KEY_MAX bytes of arguments");
}

static void test_slots (void)
{
    bool kept;
    json_t *o[UPDATE_MEMO_SLOTS + 1];
    for (int i = 0; i <= UPDATE_MEMO_SLOTS; i++)
        o[i] = pack (&kept, "{s:i}", "attributes.n", i);
    isint (o[0]->refcount, 1, "the oldest went when a slot was needed");
    json_t *again = pack (&kept, "{s:i}", "attributes.n", 0);
    ok (!kept && again != o[0], "and is packed anew");
    json_decref (again);
    again = pack (&kept, "{s:i}", "attributes.n", UPDATE_MEMO_SLOTS);
    ok (kept && again == o[UPDATE_MEMO_SLOTS], "the newest is kept");
    json_decref (again);
    update_memo_clear (&memo);
    for (int i = 0; i <= UPDATE_MEMO_SLOTS; i++) {
        isint (o[i]->refcount, 1, "update_memo_clear lets go of slot %d", i);
        json_decref (o[i]);
    }
}

static void test_text (void)
{
    bool kept;
    size_t len = 0;
    json_t *o = pack (&kept, "{s:s s:f}", "attributes.system.queue",
                      "b\"atch\n", "attributes.system.duration", 60.0);
    char *want = compact_dumps (NULL, o);
    const char *text = update_memo_text (&memo, o, &len);
    is (text, want, "a kept object's text is compact_dumps's");
    isint ((long)len, (long)strlen (want), "and its length");
    ok (update_memo_text (&memo, o, &len) == text, "made once");
    json_t *other = json_pack ("{s:s}", "attributes.system.queue", "batch");
    ok (!update_memo_text (&memo, other, &len),
        "an equal object not kept here has none");
    free (want);
    json_decref (other);
    json_decref (o);
    update_memo_clear (&memo);
}

int main (void)
{
    test_same_again ();
    test_scalars ();
    test_not_kept ();
    test_slots ();
    test_text ();
    done_testing ();
}
