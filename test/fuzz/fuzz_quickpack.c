/* libFuzzer harness: quickpack.c must agree with jansson.
 *
 * Input: one mode byte.  Even: unpack, the format up to the first
 * newline, then a JSON text.  Odd: pack, the rest makes a well-formed
 * format and its arguments together.  Unpack: quickpack_vunpack and
 * json_vunpack_ex get the same root and the same 40 pointer arguments
 * (every unpack argument is a pointer; each points at a 64-byte slot that
 * holds a key, so it serves as a key or as a place to write); both must
 * return the same, write the same bytes, and word the same error.  And
 * where quickpack_may_read says the format reads no member "a", removing
 * "a" from the root must change nothing.  Pack: the arguments are 40
 * integers and 8 doubles (as test/unit/test_quickpack.c, on the
 * x86-64/AArch64 va_list layout); a quick pack that succeeds must equal
 * jansson's, in the same key order, and leave the refcounts of 'O'
 * arguments as jansson does.  A disagreement aborts (a crash to fix). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "fuzz_reader.h"
#include "host.h"
#include "quickpack.h"

#define NSLOT 40
#define SLOT_SIZE 64
#define NFP 8
#define MAX_FMT NSLOT /* an unpack format takes at most one argument a character */

#define A10(m, b)                                                              \
    m (b + 0), m (b + 1), m (b + 2), m (b + 3), m (b + 4), m (b + 5),          \
        m (b + 6), m (b + 7), m (b + 8), m (b + 9)
#define ARGS40(m) A10 (m, 0), A10 (m, 10), A10 (m, 20), A10 (m, 30)
#define FP8(m) m (0), m (1), m (2), m (3), m (4), m (5), m (6), m (7)

static void disagree (const char *what, const char *fmt)
{
    fprintf (stderr, "quickpack and jansson disagree (%s) on format \"%s\"\n",
             what, fmt);
    abort ();
}

static int quick_unpack (json_t *root,
                         json_error_t *err,
                         const char *fmt,
                         ...)
{
    va_list ap;
    va_start (ap, fmt);
    int rc = quickpack_vunpack (root, err, fmt, ap);
    va_end (ap);
    return rc;
}

static bool may_read (const char *fmt, const char *key, ...)
{
    va_list ap;
    va_start (ap, key);
    bool rc = quickpack_may_read (fmt, ap, key);
    va_end (ap);
    return rc;
}

static json_t *quick_pack (const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    json_t *o = quickpack_pack (fmt, ap);
    va_end (ap);
    return o;
}

/* --- unpack ------------------------------------------------------------ */

static _Alignas (16) char slot_a[NSLOT][SLOT_SIZE];
static _Alignas (16) char slot_b[NSLOT][SLOT_SIZE];

static void slots_init (char (*s)[SLOT_SIZE])
{
    static const char *keys[] = {"a", "b", "c", "d"};
    memset (s, 0, NSLOT * SLOT_SIZE);
    for (int i = 0; i < NSLOT; i++)
        strcpy (s[i], keys[i % 4]);
}

#define SA(i) (void *)slot_a[i]
#define SB(i) (void *)slot_b[i]

/* jansson and quickpack_vunpack on root: same rc, writes and error. */
static int unpack_both (json_t *root, const char *fmt, char *errtext)
{
    json_error_t ea, eb;

    slots_init (slot_a);
    slots_init (slot_b);
    int ra = json_unpack_ex (root, &ea, 0, fmt, ARGS40 (SA));
    int rb = quick_unpack (root, &eb, fmt, ARGS40 (SB));
    if (ra != rb)
        disagree ("unpack return code", fmt);
    if (memcmp (slot_a, slot_b, sizeof (slot_a)) != 0)
        disagree ("unpack writes", fmt);
    if (ra < 0 && (strcmp (ea.text, eb.text) || strcmp (ea.source, eb.source)))
        disagree ("unpack error", fmt);
    if (errtext)
        strcpy (errtext, ra < 0 ? ea.text : "");
    return ra;
}

static void fuzz_unpack (const char *fmt, const uint8_t *data, size_t size)
{
    json_error_t jerr;
    json_t *root = json_loadb ((const char *)data, size, JSON_DECODE_ANY, &jerr);
    char text[JSON_ERROR_TEXT_LENGTH];
    char text2[JSON_ERROR_TEXT_LENGTH];

    if (!root)
        return;
    int rc = unpack_both (root, fmt, text);

    /* Members the format certainly does not read do not matter. */
    slots_init (slot_a);
    if (json_is_object (root) && json_object_get (root, "a") &&
        !may_read (fmt, "a", ARGS40 (SA))) {
        json_t *without = json_deep_copy (root);
        json_object_del (without, "a");
        int rc2 = unpack_both (without, fmt, text2);
        /* 's' and 'o' write pointers into the root: compare the rest. */
        if (rc != rc2 || (rc < 0 && strcmp (text, text2)))
            disagree ("quickpack_may_read said no read of \"a\"", fmt);
        json_decref (without);
    }
    json_decref (root);
}

/* --- pack -------------------------------------------------------------- */

static json_t *shared[6];
static size_t shared_refs[6];

static void shared_init (void)
{
    if (shared[0])
        return;
    shared[0] = json_integer (1);
    shared[1] = json_string ("x");
    shared[2] = json_pack ("{s:i s:[i]}", "k", 1, "l", 2);
    shared[3] = json_array ();
    shared[4] = json_real (0.5);
    shared[5] = json_null ();
}

/* A pack format and its arguments, made together from the input so the
 * two cannot disagree (jansson goes on through the format after an error
 * to release references, so a format of random characters could read an
 * argument as another type). */
struct plan {
    struct reader r;
    char fmt[160];
    size_t len;
    uint64_t gp[NSLOT];
    double fp[NFP];
    int ngp, nfp;
    char strs[NSLOT][SLOT_SIZE];
};

static bool put (struct plan *p, const char *s)
{
    size_t n = strlen (s);
    if (p->len + n >= sizeof (p->fmt))
        return false;
    memcpy (p->fmt + p->len, s, n + 1);
    p->len += n;
    return true;
}

static bool arg_string (struct plan *p)
{
    if (p->ngp == NSLOT)
        return false;
    uint8_t n = take (&p->r);
    if (n == 0xff) {
        p->gp[p->ngp++] = 0; /* NULL */
        return true;
    }
    n %= 12;
    memset (p->strs[p->ngp], 0, SLOT_SIZE);
    for (int i = 0; i < n; i++)
        p->strs[p->ngp][i] = (char)take (&p->r);
    p->gp[p->ngp] = (uint64_t)(uintptr_t)p->strs[p->ngp];
    p->ngp++;
    return true;
}

static bool arg_int (struct plan *p, uint64_t v)
{
    if (p->ngp == NSLOT)
        return false;
    p->gp[p->ngp++] = v;
    return true;
}

/* A string (key or value): s, s#, s%, s+ (and s?, s* for values). */
static bool plan_string (struct plan *p, bool value)
{
    uint8_t c = take (&p->r) % (value ? 6 : 4);
    if (!put (p, "s") || !arg_string (p))
        return false;
    switch (c) {
    case 1:
        return put (p, "#") && arg_int (p, take (&p->r) % SLOT_SIZE);
    case 2:
        return put (p, "%") && arg_int (p, take (&p->r) % SLOT_SIZE);
    case 3:
        return put (p, "+") && arg_string (p);
    case 4:
        return put (p, "?");
    case 5:
        return put (p, "*");
    }
    return true;
}

static bool plan_value (struct plan *p, int depth)
{
    uint8_t c = take (&p->r) % 10;
    if (depth > 4 && c >= 8)
        c = 0;
    switch (c) {
    case 0:
        return plan_string (p, true);
    case 1:
        return put (p, "i") && arg_int (p, take64 (&p->r));
    case 2:
        return put (p, "b") && arg_int (p, take (&p->r));
    case 3:
        return put (p, "I") && arg_int (p, take64 (&p->r));
    case 4: {
        if (p->nfp == NFP || !put (p, "f"))
            return false;
        uint64_t bits = take64 (&p->r);
        memcpy (&p->fp[p->nfp++], &bits, sizeof (double));
        return true;
    }
    case 5:
        return put (p, "n");
    case 6: {
        /* 'O' only: 'o' steals, and one reference cannot serve two runs */
        static const char *o[] = {"O", "O?", "O*"};
        uint8_t k = take (&p->r);
        return put (p, o[k % 3]) &&
               arg_int (p, (k >> 2) % 7 == 6
                               ? 0
                               : (uint64_t)(uintptr_t)shared[(k >> 2) % 7]);
    }
    case 7: /* separators are blanks to jansson */
        return put (p, take (&p->r) & 1 ? " n" : ",\tn");
    case 8: {
        uint8_t n = take (&p->r) % 4;
        if (!put (p, "{"))
            return false;
        for (int i = 0; i < n; i++)
            if (!plan_string (p, false) || !put (p, ":") ||
                !plan_value (p, depth + 1) || !put (p, " "))
                return false;
        return put (p, "}");
    }
    default: {
        uint8_t n = take (&p->r) % 4;
        if (!put (p, "["))
            return false;
        for (int i = 0; i < n; i++)
            if (!plan_value (p, depth + 1) || !put (p, ","))
                return false;
        return put (p, "]");
    }
    }
}

static void fuzz_pack (const uint8_t *data, size_t size)
{
    static struct plan p;

    shared_init ();
    memset (&p, 0, sizeof (p));
    p.r = (struct reader){data, size};
    if (!plan_value (&p, 0))
        return;
    const char *fmt = p.fmt;
    if (getenv ("FUZZ_SHOW")) {
        fprintf (stderr, "format \"%s\" args", fmt);
        for (int i = 0; i < p.ngp; i++)
            fprintf (stderr, " %#llx", (unsigned long long)p.gp[i]);
        fprintf (stderr, "\n");
    }
    for (int i = 0; i < 6; i++)
        shared_refs[i] = shared[i]->refcount;

#define G(i) p.gp[i]
#define D(i) p.fp[i]
    json_error_t ea;
    json_t *a = json_pack_ex (&ea, 0, fmt, ARGS40 (G), FP8 (D));
    json_t *b = quick_pack (fmt, ARGS40 (G), FP8 (D));
    if (b) {
        if (!a)
            disagree ("quick pack succeeded where jansson failed", fmt);
        char *ta = json_dumps (a, JSON_COMPACT | JSON_ENCODE_ANY);
        char *tb = json_dumps (b, JSON_COMPACT | JSON_ENCODE_ANY);
        if (!json_equal (a, b) || !ta || !tb || strcmp (ta, tb))
            disagree ("pack result", fmt);
        free (ta);
        free (tb);
    }
    json_decref (a);
    json_decref (b);
    for (int i = 0; i < 6; i++)
        if (shared[i]->refcount != shared_refs[i])
            disagree ("refcount of an 'O' argument after pack", fmt);
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    char fmt[MAX_FMT + 1];
    size_t n = 0;

    if (size < 1)
        return 0;
    if (data[0] & 1) {
        fuzz_pack (data + 1, size - 1);
        return 0;
    }
    data++, size--;
    while (n < size && data[n] != '\n' && n < MAX_FMT) {
        fmt[n] = data[n] ? (char)data[n] : ' ';
        n++;
    }
    fmt[n] = '\0';
    if (n < size)
        n++; /* the newline */
    for (char *c = fmt; *c; c++)
        if (*c == 'O')
            *c = 'o'; /* a new reference per run would leak */
    fuzz_unpack (fmt, data + n, size - n);
    return 0;
}
