/* Compact JSON text of a jansson value, for jobspecs kept at rest.
 *
 * json_dumps is slow on this path (a callback per token, snprintf per
 * number; docs/performance.md has the figures) and the agent compacts
 * every job once, so this writer makes the same text directly.  The output
 * is what json_loads reads back to an equal value: reals always carry a
 * '.' or an exponent so they stay reals, strings are escaped per RFC 8259
 * and keep their UTF-8 as is. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "compact.h"
#include "host.h"

/* Written on the stack first (a jobspec fits), then copied once to an
 * allocation of its exact size, which the job keeps. */
struct buf {
    char *data;
    size_t len, cap;
    int failed;
    struct compact_memo *memo; /* NULL: write every subtree */
    char stack[2048];
};

/* Room for n more bytes and a NUL beyond the stack buffer: rare, so
 * kept out of line and the common check below stays a compare. */
static __attribute__ ((noinline)) int grow (struct buf *b, size_t n)
{
    size_t cap = b->cap * 2;
    char *p;

    if (b->failed)
        return -1;
    while (b->len + n + 1 > cap)
        cap *= 2;
    if (b->data == b->stack) {
        if ((p = malloc (cap)))
            memcpy (p, b->data, b->len);
    }
    else
        p = realloc (b->data, cap);
    if (!p) {
        b->failed = 1;
        return -1;
    }
    b->data = p;
    b->cap = cap;
    return 0;
}

static inline int reserve (struct buf *b, size_t n)
{
    return b->len + n + 1 <= b->cap ? 0 : grow (b, n);
}

static inline void put (struct buf *b, const char *s, size_t n)
{
    if (reserve (b, n) == 0) {
        memcpy (b->data + b->len, s, n);
        b->len += n;
    }
}

static inline void putc_ (struct buf *b, char c)
{
    if (reserve (b, 1) == 0)
        b->data[b->len++] = c;
}

/* Control characters, '"' and '\\': the bytes a JSON string escapes. */
static const unsigned char needs_escape[256] = {
    [0 ... 0x1f] = 1, ['"'] = 1, ['\\'] = 1,
};

/* Whether any byte of w is one needs_escape lists: below 0x20, '"' or
 * '\\' (the exact tests for a byte below n and for a byte equal to 0). */
static inline bool word_needs_escape (uint64_t w)
{
    const uint64_t ones = 0x0101010101010101ull, highs = ones << 7;
    uint64_t quote = w ^ (ones * '"'), backslash = w ^ (ones * '\\');
    return (((w - ones * 0x20) & ~w) | ((quote - ones) & ~quote)
            | ((backslash - ones) & ~backslash))
           & highs;
}

static void put_string (struct buf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    size_t run = 0, i = 0;

    /* Most strings need no escape: copied with the check, in one pass. */
    if (reserve (b, n + 2) == 0) {
        char *d = b->data + b->len;
        *d++ = '"';
        for (; i + 8 <= n; i += 8) { /* eight bytes a step while clean */
            uint64_t w;
            memcpy (&w, s + i, 8);
            if (word_needs_escape (w))
                break;
            memcpy (d + i, &w, 8);
        }
        for (; i < n && !needs_escape[(unsigned char)s[i]]; i++)
            d[i] = s[i];
        if (i == n) {
            d[n] = '"';
            b->len += n + 2;
            return;
        }
        b->len += 1 + i; /* the clean prefix; the rest the slow way */
        run = i;
    }
    else
        putc_ (b, '"');
    for (; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!needs_escape[c])
            continue;
        put (b, s + run, i - run);
        run = i + 1;
        switch (c) {
            case '"': put (b, "\\\"", 2); break;
            case '\\': put (b, "\\\\", 2); break;
            case '\n': put (b, "\\n", 2); break;
            case '\t': put (b, "\\t", 2); break;
            case '\r': put (b, "\\r", 2); break;
            case '\b': put (b, "\\b", 2); break;
            case '\f': put (b, "\\f", 2); break;
            default: {
                char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
                put (b, u, 6);
            }
        }
    }
    put (b, s + run, n - run);
    putc_ (b, '"');
}

static void put_integer (struct buf *b, json_int_t v)
{
    char tmp[24];
    char *p = tmp + sizeof (tmp);
    /* via unsigned: the most negative value has no positive counterpart */
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v
                                 : (unsigned long long)v;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        *--p = '-';
    put (b, p, (size_t)(tmp + sizeof (tmp) - p));
}

static void put_real (struct buf *b, double v)
{
    /* Whole numbers (durations) as "%.17g" would print them, without
     * printf; 0.0 goes the slow way for its sign. */
    if (v != 0. && v > -1e15 && v < 1e15 && v == (double)(long long)v) {
        put_integer (b, (json_int_t)v);
        put (b, ".0", 2);
        return;
    }
    char tmp[40];
    int n = snprintf (tmp, sizeof (tmp), "%.17g", v);
    if (n <= 0 || n >= (int)sizeof (tmp)) {
        b->failed = 1;
        return;
    }
    put (b, tmp, (size_t)n);
    if (!strpbrk (tmp, ".eE"))
        put (b, ".0", 2);
}

/* Shared subtrees are remembered in the memo (compact.h says why). */
static bool shared (json_t *o)
{
    return (json_is_object (o) || json_is_array (o)) && o->refcount > 1;
}

static const struct compact_memo_slot *memo_find (struct compact_memo *m,
                                                  json_t *o)
{
    for (int i = 0; i < COMPACT_MEMO_SLOTS; i++) {
        if (m->slot[i].o == o)
            return &m->slot[i];
    }
    return NULL;
}

static void memo_drop (struct compact_memo_slot *s)
{
    json_decref (s->o);
    free (s->text);
    memset (s, 0, sizeof (*s));
}

static void memo_add (struct compact_memo *m,
                      json_t *o,
                      const char *text,
                      size_t len)
{
    struct compact_memo_slot *s = &m->slot[m->next++ % COMPACT_MEMO_SLOTS];
    char *copy = malloc (len);

    if (!copy)
        return;
    memo_drop (s);
    memcpy (copy, text, len);
    s->o = json_incref (o);
    s->text = copy;
    s->len = len;
}

void compact_memo_clear (struct compact_memo *m)
{
    for (int i = 0; i < COMPACT_MEMO_SLOTS; i++)
        memo_drop (&m->slot[i]);
}

static void put_value_direct (struct buf *b, json_t *o, int depth);

static void put_value (struct buf *b, json_t *o, int depth)
{
    const struct compact_memo_slot *s;
    size_t start;

    /* a root is its job's own */
    if (depth == 0 || !b->memo || !shared (o)) {
        put_value_direct (b, o, depth);
        return;
    }
    if ((s = memo_find (b->memo, o))) {
        put (b, s->text, s->len);
        return;
    }
    start = b->len;
    put_value_direct (b, o, depth);
    if (!b->failed)
        memo_add (b->memo, o, b->data + start, b->len - start);
}

static void put_value_direct (struct buf *b, json_t *o, int depth)
{
    if (depth > 256) { /* deeper than anything jansson itself would load */
        b->failed = 1;
        return;
    }
    switch (json_typeof (o)) {
        case JSON_OBJECT: {
            const char *k;
            json_t *v;
            int first = 1;
            putc_ (b, '{');
            void *it;
            for (it = json_object_iter (o); it;
                 it = json_object_iter_next (o, it)) {
                k = json_object_iter_key (it);
                v = json_object_iter_value (it);
                if (!first)
                    putc_ (b, ',');
                first = 0;
                put_string (b, k, json_object_iter_key_len (it));
                putc_ (b, ':');
                put_value (b, v, depth + 1);
            }
            putc_ (b, '}');
            break;
        }
        case JSON_ARRAY: {
            size_t i;
            json_t *v;
            putc_ (b, '[');
            json_array_foreach (o, i, v) {
                if (i > 0)
                    putc_ (b, ',');
                put_value (b, v, depth + 1);
            }
            putc_ (b, ']');
            break;
        }
        case JSON_STRING:
            put_string (b, json_string_value (o), json_string_length (o));
            break;
        case JSON_INTEGER:
            put_integer (b, json_integer_value (o));
            break;
        case JSON_REAL:
            put_real (b, json_real_value (o));
            break;
        case JSON_TRUE:
            put (b, "true", 4);
            break;
        case JSON_FALSE:
            put (b, "false", 5);
            break;
        default:
            put (b, "null", 4);
            break;
    }
}

int compact_append (struct compact_memo *memo,
                    json_t *o,
                    char **data,
                    size_t *len,
                    size_t *cap)
{
    struct buf b;

    if (!o)
        return -1;
    if (*data) {
        b.data = *data;
        b.cap = *cap;
    }
    else {
        b.data = b.stack;
        b.cap = sizeof (b.stack);
    }
    b.len = *len;
    b.failed = 0;
    b.memo = memo;
    put_value (&b, o, 0);
    if (b.data == b.stack && !b.failed) {
        char *p = malloc (b.len + 1);
        if (p)
            memcpy (p, b.data, b.len);
        else
            b.failed = 1;
        b.data = p;
        b.cap = b.len + 1;
    }
    if (b.failed) {
        /* grow() keeps the old buffer valid only through realloc failing */
        if (b.data && b.data != *data && b.data != b.stack)
            *data = b.data, *cap = b.cap;
        if (*data)
            (*data)[*len] = '\0';
        return -1;
    }
    b.data[b.len] = '\0';
    *data = b.data;
    *len = b.len;
    *cap = b.cap;
    return 0;
}

char *compact_dumps (struct compact_memo *memo, json_t *o)
{
    struct buf b;
    char *text = NULL;

    if (!o)
        return NULL;
    b.data = b.stack;
    b.len = 0;
    b.cap = sizeof (b.stack);
    b.failed = 0;
    b.memo = memo;
    put_value (&b, o, 0);
    if (!b.failed && (text = malloc (b.len + 1))) {
        memcpy (text, b.data, b.len);
        text[b.len] = '\0';
    }
    if (b.data != b.stack)
        free (b.data);
    return text;
}
