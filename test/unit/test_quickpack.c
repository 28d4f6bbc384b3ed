/* quickpack.c against jansson: random formats and objects, each unpacked
 * (or packed) through the quick path and through jansson alone, must give
 * the same return code, the same writes through the arguments, the same
 * result (json_equal, and the same text in the same key order), the same
 * reference counts of what 'O' and 'o' were given, and the same error.
 *
 * The seed is printed; QUICKPACK_SEED=N replays a run, QUICKPACK_CASES=N
 * changes how many cases of each kind it makes. */
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "find_json.h"
#include "quickpack.h"
#include "tap.h"

/* C cannot build a va_list at run time, so every case is one call with a
 * fixed list of arguments: MAX_GP of the integer class, then MAX_FP
 * doubles.  Unpack arguments are all pointers.  Pack arguments are ints,
 * json_int_t, size_t and pointers, passed as 64-bit integers, and
 * doubles: the x86-64 and AArch64 calling conventions hand a va_list the
 * integer-class arguments in order and, separately, the first eight
 * doubles in order, and an int is read from the low half of its 64-bit
 * slot.  Elsewhere only the unpack cases run. */
#if (defined(__x86_64__) || defined(__aarch64__)) && defined(__LP64__) &&      \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define PACK_CASES_RUN 1
#else
#define PACK_CASES_RUN 0
#endif

#define MAX_GP 40
#define MAX_FP 8
#define MAX_FMT 512
#define MAX_SHOWN 10 /* disagreements described in full */

static uint64_t rng;

static uint64_t rnd (void)
{
    uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static unsigned pick (unsigned n)
{
    return (unsigned)(rnd () % n);
}

static bool chance (unsigned percent)
{
    return pick (100) < percent;
}

#define PICK(a) ((a)[pick (sizeof (a) / sizeof ((a)[0]))])

static const char *keys[] = {"a", "b", "c", "dd", "x.y", ""};
static const char *strings[] = {"", "x", "batch", "h\xc3\xa9llo", "a b c"};
static const char bad_utf8[] = "\xff\xfe";

/* One case: a format and what its arguments are. */
enum kind {
    K_PTR,    /* a pointer given as is (keys, strings, NULL) */
    K_INT,    /* int */
    K_JINT,   /* json_int_t */
    K_SIZE,   /* size_t */
    K_DOUBLE, /* double (pack) */
    K_SHARED, /* pack: one of the shared 'O' objects */
    K_NEW,    /* pack: a new object for 'o', made for each run */
    K_TARGET, /* unpack: a pointer to target slot 'v' */
};

struct arg {
    enum kind kind;
    char conv; /* the format character it is for */
    intptr_t v;
    const void *p;
    double d;
};

struct spec {
    char fmt[MAX_FMT];
    size_t len;
    struct arg args[MAX_GP + MAX_FP];
    int nargs, ngp, nfp, nslots;
    bool overflow;
    /* Pack: after some errors jansson goes on reading the format without
     * taking the arguments the error skipped, so the generator stops
     * adding arguments there (the format only closes what is open). */
    bool stop;
};

static void put (struct spec *sp, const char *s)
{
    size_t n = strlen (s);
    if (sp->len + n >= MAX_FMT) {
        sp->overflow = true;
        return;
    }
    memcpy (sp->fmt + sp->len, s, n + 1);
    sp->len += n;
}

static void putc_ (struct spec *sp, char c)
{
    char s[2] = {c, '\0'};
    put (sp, s);
}

/* What jansson skips between tokens, in the mixes formats are written in. */
static void sep (struct spec *sp)
{
    static const char *seps[] = {"",    "",   "",   " ",  ":", ",",
                                 " : ", ", ", "\t", "\n", " ,"};
    put (sp, PICK (seps));
}

static struct arg *add (struct spec *sp, enum kind kind, char conv)
{
    struct arg *a;
    if (kind == K_DOUBLE ? sp->nfp >= MAX_FP : sp->ngp >= MAX_GP) {
        sp->overflow = true;
        return &sp->args[MAX_GP + MAX_FP - 1]; /* scratch, case dropped */
    }
    if (kind == K_DOUBLE)
        sp->nfp++;
    else
        sp->ngp++;
    a = &sp->args[sp->nargs++];
    memset (a, 0, sizeof (*a));
    a->kind = kind;
    a->conv = conv;
    return a;
}

static void add_ptr (struct spec *sp, const void *p)
{
    add (sp, K_PTR, 's')->p = p;
}

/* Unpack ------------------------------------------------------------- */

/* Where an unpack writes: compared byte for byte after each run. */
union slot {
    int i;
    json_int_t I;
    double f;
    const char *s;
    json_t *o;
    size_t z;
    unsigned char bytes[8];
};

#define MAX_SLOTS MAX_GP
#define UNSET 0xa5

static json_t *random_value (int depth);

static json_t *random_object (int depth)
{
    json_t *o = json_object ();
    for (unsigned n = pick (5); n > 0; n--)
        json_object_set_new (o, PICK (keys), random_value (depth + 1));
    return o;
}

static json_t *random_value (int depth)
{
    static const json_int_t ints[] = {
        0, 1, -1, 42, 2147483648LL, -(1LL << 40), LLONG_MAX};
    static const double reals[] = {0.0, 2.5, -1e300, 3.0};
    unsigned r = pick (100);

    if (r < 18)
        return json_integer (PICK (ints));
    if (r < 30)
        return json_real (PICK (reals));
    if (r < 45)
        return json_string (PICK (strings));
    if (r < 52)
        return json_true ();
    if (r < 58)
        return json_false ();
    if (r < 64)
        return json_null ();
    if (r < 88 && depth < 3)
        return random_object (depth);
    if (depth < 3) {
        json_t *a = json_array ();
        for (unsigned n = pick (4); n > 0; n--)
            json_array_append_new (a, random_value (depth + 1));
        return a;
    }
    return json_string ("leaf");
}

static void unpack_target (struct spec *sp, char conv)
{
    struct arg *a = add (sp, K_TARGET, conv);
    /* -1: a NULL target, which jansson checks for strings only */
    a->v = conv == 's' && chance (3) ? -1 : sp->nslots++;
    if (sp->nslots > MAX_SLOTS)
        sp->overflow = true;
}

static void unpack_value (struct spec *sp, json_t *v, int depth);

static void unpack_object (struct spec *sp, json_t *o, int depth)
{
    putc_ (sp, '{');
    for (unsigned n = pick (5); n > 0 && !sp->overflow; n--) {
        const char *key = PICK (keys);
        sep (sp);
        if (chance (3)) { /* not a key: jansson's error */
            putc_ (sp, 'i');
            unpack_target (sp, 'i');
            continue;
        }
        if (json_is_object (o) && json_object_size (o) > 0 && chance (65)) {
            void *it = json_object_iter (o);
            for (unsigned skip = pick ((unsigned)json_object_size (o));
                 skip > 0; skip--)
                it = json_object_iter_next (o, it);
            key = json_object_iter_key (it);
        }
        putc_ (sp, 's');
        add_ptr (sp, chance (2) ? NULL : key);
        if (chance (25)) {
            sep (sp);
            putc_ (sp, '?');
        }
        sep (sp);
        unpack_value (sp, json_is_object (o) ? json_object_get (o, key) : NULL,
                      depth + 1);
    }
    sep (sp);
    if (chance (5))
        putc_ (sp, '!');
    else if (chance (5))
        putc_ (sp, '*');
    sep (sp);
    if (!chance (2))
        putc_ (sp, '}');
}

static void unpack_array (struct spec *sp, json_t *a, int depth)
{
    size_t n = json_is_array (a) ? json_array_size (a) : pick (3);

    if (chance (20))
        n = pick (4);
    putc_ (sp, '[');
    for (size_t i = 0; i < n && !sp->overflow; i++) {
        sep (sp);
        unpack_value (sp, json_array_get (a, i), depth + 1);
    }
    sep (sp);
    if (chance (10))
        putc_ (sp, chance (50) ? '!' : '*');
    putc_ (sp, ']');
}

/* The conversion a well-written format uses for v. */
static char matching_conv (json_t *v)
{
    switch (json_typeof (v)) {
    case JSON_INTEGER:
        return "iiIF"[pick (4)];
    case JSON_REAL:
        return "fF"[pick (2)];
    case JSON_STRING:
        return 's';
    case JSON_TRUE:
    case JSON_FALSE:
        return 'b';
    case JSON_NULL:
        return 'n';
    default:
        return "oO"[pick (2)];
    }
}

static void unpack_conv (struct spec *sp, char c)
{
    putc_ (sp, c);
    switch (c) {
    case 's':
        unpack_target (sp, 's');
        if (chance (10)) {
            sep (sp);
            putc_ (sp, '%');
            unpack_target (sp, '%');
        }
        break;
    case 'n':
        break;
    default:
        if (strchr ("iIbfFoO", c))
            unpack_target (sp, c);
    }
}

static void unpack_value (struct spec *sp, json_t *v, int depth)
{
    unsigned r = pick (100);

    if (depth > 4) {
        unpack_conv (sp, v ? matching_conv (v) : 'n');
        return;
    }
    if ((json_is_object (v) && r < 60) || (!v && r < 10))
        unpack_object (sp, v, depth);
    else if ((json_is_array (v) && r < 30) || (!v && r < 12))
        unpack_array (sp, v, depth);
    else if (v && r < 75)
        unpack_conv (sp, matching_conv (v));
    else if (r < 97)
        unpack_conv (sp, "siIbfFoOn"[pick (9)]);
    else
        putc_ (sp, "x#+}"[pick (4)]); /* not a conversion ('?' would be
                                       * read as the key's) */
}

static void unpack_spec (struct spec *sp, json_t *doc)
{
    memset (sp, 0, sizeof (*sp));
    if (json_is_object (doc) && chance (90))
        unpack_object (sp, doc, 0);
    else
        unpack_value (sp, doc, 0);
    if (chance (10))
        sep (sp);
    if (chance (2))
        putc_ (sp, 'x'); /* garbage after the format */
    if (chance (2) && sp->len > 0)
        sp->fmt[sp->len = pick ((unsigned)sp->len)] = '\0';
}

enum unpack_mode {
    BY_JANSSON,
    BY_QUICKPACK,
    QUICK_ONLY,
    MAY_READ,
    VIRTUAL,
    VIRTUAL_SCALARS, /* VIRTUAL, the finder telling scalars as such */
    ALL_TOLD,        /* VIRTUAL_SCALARS, every key told (an empty root) */
};

static const char *lazy_key; /* MAY_READ, VIRTUAL: the key asked about */
static json_t *virtual_value; /* VIRTUAL: the value the finder tells of */
static struct quick_virtual virt;

/* A finder of lazy_key's value, virtual_value, as the runtime's args
 * have one: arrays are left to the tree; other keys are absent. */
static int finds; /* calls of find_in_value */
static bool tell_scalars; /* find_in_value tells scalars as such */
static char virtual_text[16]; /* VIRTUAL_SCALARS: room for a few strings */
static bool all_told; /* find_in_value tells virtual_value from its root */
static int find_in_value (void *arg,
                          const char *const *path,
                          int depth,
                          json_t **value,
                          struct jobtap_spec_scalar *scalar)
{
    (void)arg;
    finds++;
    if (all_told)
        return find_in_json (virtual_value, path, depth, value, scalar);
    if (strcmp (path[0], lazy_key))
        return JOBTAP_SPEC_ABSENT;
    return find_in_json (virtual_value, path + 1, depth - 1, value,
                         tell_scalars ? scalar : NULL);
}

static void release_held (void)
{
    for (int i = 0; i < virt.held_count; i++)
        json_decref (virt.held[i]);
    virt.held_count = 0;
}

static int unpack_via (enum unpack_mode mode,
                       json_t *root,
                       json_error_t *err,
                       const char *fmt,
                       ...)
{
    va_list ap;
    int rc;

    va_start (ap, fmt);
    if (mode == BY_JANSSON)
        rc = json_vunpack_ex (root, err, 0, fmt, ap);
    else if (mode == BY_QUICKPACK)
        rc = quickpack_vunpack (root, err, fmt, ap);
    else if (mode == QUICK_ONLY)
        rc = quickpack_unpack (root, fmt, ap) ? 0 : -1;
    else if (mode == VIRTUAL || mode == VIRTUAL_SCALARS || mode == ALL_TOLD) {
        virt = (struct quick_virtual){
            .find = find_in_value,
            .text = virtual_text,
            .text_cap = sizeof (virtual_text),
        };
        tell_scalars = mode != VIRTUAL;
        all_told = mode == ALL_TOLD;
        rc = quickpack_unpack_virtual (root, fmt, ap, &virt) ? 0 : -1;
        tell_scalars = all_told = false;
        /* the document holds them too; what scalars made is the
         * reader's until the run is compared (release_held) */
        if (mode == VIRTUAL)
            release_held ();
    }
    else
        rc = quickpack_may_read (fmt, ap, lazy_key);
    va_end (ap);
    return rc;
}

#define P(i) p[i]
#define ARGS10(x, b)                                                           \
    x (b + 0), x (b + 1), x (b + 2), x (b + 3), x (b + 4), x (b + 5),          \
        x (b + 6), x (b + 7), x (b + 8), x (b + 9)
#define ARGS40(x) ARGS10 (x, 0), ARGS10 (x, 10), ARGS10 (x, 20), ARGS10 (x, 30)

struct unpack_run {
    int rc;
    json_error_t err;
    union slot slots[MAX_SLOTS];
    int nrefs;
    size_t refs[256]; /* refcounts of the document's nodes, in walk order */
};

static void count_refs (json_t *v, struct unpack_run *r)
{
    const char *k;
    json_t *m;
    size_t i;

    if (!v)
        return;
    if (r->nrefs < 256)
        r->refs[r->nrefs++] = v->refcount;
    if (json_is_object (v))
        json_object_foreach (v, k, m) count_refs (m, r);
    else if (json_is_array (v))
        json_array_foreach (v, i, m) count_refs (m, r);
}

static void unpack_run (enum unpack_mode mode,
                        const struct spec *sp,
                        json_t *root,
                        struct unpack_run *r)
{
    void *p[MAX_GP] = {NULL};

    memset (r, 0, sizeof (*r));
    memset (r->slots, UNSET, sizeof (r->slots));
    for (int i = 0; i < sp->nargs; i++) {
        const struct arg *a = &sp->args[i];
        p[i] = a->kind == K_TARGET ? (a->v < 0 ? NULL : &r->slots[a->v])
                                   : (void *)a->p;
    }
    r->rc = unpack_via (mode, root, &r->err, sp->fmt, ARGS40 (P));
    count_refs (root, r);
    /* give back what 'O' took, so the next run starts from the same */
    for (int i = 0; i < sp->nargs; i++) {
        const struct arg *a = &sp->args[i];
        union slot unset;
        memset (&unset, UNSET, sizeof (unset));
        if (a->kind == K_TARGET && a->conv == 'O' && a->v >= 0 &&
            memcmp (&r->slots[a->v], &unset, sizeof (unset)) != 0)
            json_decref (r->slots[a->v].o);
    }
}

/* Whether run v wrote what run a did, strings and objects by value
 * (a finder's scalars are copies): only the slots v wrote with all. */
static bool wrote_alike (const struct spec *sp,
                         const struct unpack_run *a,
                         const struct unpack_run *v,
                         bool all)
{
    union slot unset;
    memset (&unset, UNSET, sizeof (unset));
    for (int i = 0; i < sp->nargs; i++) {
        const struct arg *t = &sp->args[i];
        if (t->kind != K_TARGET || t->v < 0)
            continue;
        const union slot *x = &a->slots[t->v], *y = &v->slots[t->v];
        if (!all && !memcmp (y, &unset, sizeof (unset)))
            continue;
        if (!memcmp (x, &unset, sizeof (unset))
            || !memcmp (y, &unset, sizeof (unset))) {
            if (memcmp (x, y, sizeof (*x)))
                return false;
        }
        else if (t->conv == 's') {
            if ((x->s == NULL) != (y->s == NULL)
                || (x->s && strcmp (x->s, y->s)))
                return false;
        }
        else if (t->conv == 'o' || t->conv == 'O') {
            if (!json_equal (x->o, y->o))
                return false;
        }
        else if (memcmp (x, y, sizeof (*x)))
            return false;
    }
    return true;
}

static bool same_error (const json_error_t *a, const json_error_t *b)
{
    return !strcmp (a->text, b->text) && !strcmp (a->source, b->source) &&
           a->line == b->line && a->column == b->column &&
           a->position == b->position;
}

static int shown;

static void
show (const char *what, int n, const char *fmt, json_t *doc, const char *detail)
{
    char *s;
    if (shown++ >= MAX_SHOWN)
        return;
    s = doc ? json_dumps (doc, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
    diag ("%s case %d: format \"%s\" on %s: %s", what, n, fmt, s ? s : "NULL",
          detail);
    free (s);
}

/* An object whose first key holds an object: what a finder tells of in
 * plugin args (the jobspec). */
static json_t *random_object_first_object (void)
{
    json_t *doc = json_object (), *rest = random_object (0);
    json_object_set_new (doc, PICK (keys), random_object (1));
    json_object_update_missing (doc, rest);
    json_decref (rest);
    return doc;
}

/* An unpack through a finder telling scalars ('mode') of root: whether it
 * read the format; where it took jansson's failure or wrote otherwise
 * than jansson did ('a'), 'detail' says so, naming 'what'. */
static bool told_alike (enum unpack_mode mode,
                        const struct spec *sp,
                        json_t *root,
                        const struct unpack_run *a,
                        const char *what,
                        char *detail,
                        size_t size)
{
    static struct unpack_run v;

    unpack_run (mode, sp, root, &v);
    if (v.rc == 0 && a->rc != 0)
        snprintf (detail, size, "%s: the unpack took a failure", what);
    else if (!wrote_alike (sp, a, &v, v.rc == 0))
        snprintf (detail, size, "%s: the unpack wrote otherwise", what);
    release_held ();
    return v.rc == 0;
}

/* object_first: every document an object whose first key holds an
 * object, so that most cases read that key through a finder too. */
static void test_unpack (int cases, bool object_first)
{
    int bad = 0, quick = 0, fallback = 0, errors = 0, unread = 0;
    int virtual = 0, scalar_reads = 0, all_reads = 0;

    for (int n = 0; n < cases; n++) {
        json_t *doc = object_first  ? random_object_first_object ()
                      : chance (85) ? random_object (0)
                      : chance (90) ? random_value (0)
                                    : NULL;
        struct spec sp;
        static struct unpack_run a, b, q;
        char detail[512] = "";

        unpack_spec (&sp, doc);
        if (sp.overflow) {
            n--;
            json_decref (doc);
            continue;
        }
        unpack_run (BY_JANSSON, &sp, doc, &a);
        unpack_run (BY_QUICKPACK, &sp, doc, &b);
        unpack_run (QUICK_ONLY, &sp, doc, &q);
        if (a.rc != b.rc)
            snprintf (detail, sizeof (detail), "rc %d, jansson %d", b.rc, a.rc);
        else if (memcmp (a.slots, b.slots, sizeof (a.slots)) != 0)
            snprintf (detail, sizeof (detail), "different writes");
        else if (a.rc < 0 && !same_error (&a.err, &b.err))
            snprintf (detail, sizeof (detail), "error \"%s\", jansson \"%s\"",
                      b.err.text, a.err.text);
        else if (a.nrefs != b.nrefs ||
                 memcmp (a.refs, b.refs, sizeof (a.refs[0]) * a.nrefs))
            snprintf (detail, sizeof (detail), "different refcounts");
        else if (q.rc == 0 && a.rc != 0)
            snprintf (detail, sizeof (detail), "quick path took a failure");
        else if (q.rc == 0 && memcmp (a.slots, q.slots, sizeof (a.slots)))
            snprintf (detail, sizeof (detail), "quick path wrote otherwise");
        /* A key the format cannot read (the lazy key of plugin args) may
         * be missing: the same unpack without it gives the same. */
        if (!detail[0] && json_is_object (doc) && json_object_size (doc)) {
            static struct unpack_run m, c;
            json_t *copy = json_copy (doc); /* the same values */
            lazy_key = json_object_iter_key (json_object_iter (doc));
            unpack_run (MAY_READ, &sp, doc, &m);
            json_object_del (copy, lazy_key);
            unpack_run (BY_QUICKPACK, &sp, copy, &c);
            if (!m.rc &&
                (c.rc != b.rc || memcmp (c.slots, b.slots, sizeof (b.slots)) ||
                 (b.rc < 0 && !same_error (&b.err, &c.err))))
                snprintf (detail, sizeof (detail),
                          "reads \"%s\", said it cannot", lazy_key);
            unread += !m.rc;
            /* The key's value told by a finder instead: whatever it
             * unpacks is what jansson unpacks from the value itself. */
            if (!detail[0] && json_is_object (json_object_get (doc, lazy_key))) {
                static struct unpack_run v;
                virtual_value = json_object_get (doc, lazy_key);
                unpack_run (VIRTUAL, &sp, copy, &v);
                if (v.rc == 0 && a.rc != 0)
                    snprintf (detail, sizeof (detail),
                              "the finder's unpack took a failure");
                else if (v.rc == 0 && memcmp (a.slots, v.slots, sizeof (a.slots)))
                    snprintf (detail, sizeof (detail),
                              "the finder's unpack wrote otherwise");
                else if (v.rc != 0) {
                    /* left to the tree: what it wrote, jansson writes */
                    union slot unset;
                    memset (&unset, UNSET, sizeof (unset));
                    for (int i = 0; i < MAX_SLOTS && !detail[0]; i++) {
                        if (memcmp (&v.slots[i], &unset, sizeof (unset))
                            && memcmp (&v.slots[i], &a.slots[i],
                                       sizeof (unset)))
                            snprintf (detail, sizeof (detail),
                                      "the finder's unpack, left to the "
                                      "tree, wrote slot %d otherwise", i);
                    }
                }
                virtual += v.rc == 0 && m.rc; /* read the key */
                /* the same with scalars told as such */
                if (!detail[0])
                    scalar_reads += told_alike (VIRTUAL_SCALARS, &sp, copy,
                                                &a, "the finder's scalars",
                                                detail, sizeof (detail))
                                    && m.rc;
            }
            json_decref (copy);
        }
        /* Every key told by a finder, the root empty (plugin args before
         * a reader needs more): the one-loop walk, or the general one. */
        if (!detail[0] && json_is_object (doc)) {
            json_t *empty = json_object ();
            virtual_value = doc;
            all_reads += told_alike (ALL_TOLD, &sp, empty, &a, "all told",
                                     detail, sizeof (detail));
            json_decref (empty);
        }
        if (detail[0]) {
            bad++;
            show ("unpack", n, sp.fmt, doc, detail);
        }
        quick += q.rc == 0;
        fallback += q.rc != 0 && a.rc == 0;
        errors += a.rc != 0;
        json_decref (doc);
    }
    ok (bad == 0, "unpack: %d random cases as jansson unpacks them (%d wrong)",
        cases, bad);
    diag ("unpack: %d by the quick path, %d left to jansson, %d errors, "
          "%d read no first key, %d read it from a finder",
          quick, fallback, errors, unread, virtual);
    ok (virtual >= cases / 600, /* about 1 in 150 */
        "unpack: the cases exercise a key read from a finder");
    ok (scalar_reads >= cases / 600,
        "unpack: and from a finder telling scalars (%d)", scalar_reads);
    ok (all_reads >= cases / 20,
        "unpack: and with every key told, the root empty (%d)", all_reads);
    ok (quick > cases / 5 && fallback > cases / 20 && errors > cases / 5 &&
            unread > cases / 20,
        "unpack: the cases exercise the quick path, jansson's and errors");
}

/* Pack --------------------------------------------------------------- */

#define SHARED 3
static json_t *shared[SHARED];

static void pack_string (struct spec *sp, bool key)
{
    bool good = chance (90);
    const char *s = good ? PICK (strings) : chance (50) ? NULL : bad_utf8;
    unsigned r = good ? pick (100) : 14 + pick (86);

    putc_ (sp, 's');
    add_ptr (sp, s);
    if (key && !good)
        sp->stop = true; /* jansson leaves the object at a bad key */
    if (r < 5) {
        putc_ (sp, '#');
        add (sp, K_INT, '#')->v = (int)pick ((unsigned)strlen (s) + 1);
    } else if (r < 10) {
        putc_ (sp, '%');
        add (sp, K_SIZE, '%')->v = (intptr_t)pick ((unsigned)strlen (s) + 1);
    } else if (r < 14) {
        putc_ (sp, '+');
        add_ptr (sp, PICK (strings));
    } else if (r < 20 && !key)
        putc_ (sp, "?*"[pick (2)]);
}

static void pack_value (struct spec *sp, int depth);

static void pack_object (struct spec *sp, int depth)
{
    putc_ (sp, '{');
    for (unsigned n = pick (5); n > 0 && !sp->overflow && !sp->stop; n--) {
        sep (sp);
        if (chance (3)) { /* not a key: jansson's error */
            putc_ (sp, 'i');
            sp->stop = true;
        } else if (chance (95)) {
            const char *key = chance (2)   ? NULL
                              : chance (2) ? bad_utf8
                                           : PICK (keys);
            putc_ (sp, 's');
            add_ptr (sp, key);
            if (!key || key == bad_utf8)
                sp->stop = true;
        } else
            pack_string (sp, true);
        sep (sp);
        pack_value (sp, depth + 1);
    }
    sep (sp);
    if (!chance (2))
        putc_ (sp, '}');
    else
        sp->stop = true;
}

static void pack_array (struct spec *sp, int depth)
{
    putc_ (sp, '[');
    for (unsigned n = pick (4); n > 0 && !sp->overflow && !sp->stop; n--) {
        sep (sp);
        pack_value (sp, depth + 1);
    }
    sep (sp);
    putc_ (sp, ']');
}

static void pack_value (struct spec *sp, int depth)
{
    static const int ints[] = {0, 1, -1, 7, INT_MAX, INT_MIN};
    static const json_int_t jints[] = {0, -5, 1LL << 40, LLONG_MIN};
    static const int bools[] = {0, 1, 2, -1};
    static const double reals[] = {0.0, 2.5, -1e300, 1.0, -0.0};
    unsigned r = pick (100);
    struct arg *a;

    if (sp->stop) {
        putc_ (sp, 'n');
        return;
    }
    if (depth < 4 && r < 18) {
        pack_object (sp, depth);
        return;
    }
    if (depth < 4 && r < 23) {
        pack_array (sp, depth);
        return;
    }
    r = pick (100);
    if (r < 25)
        pack_string (sp, false);
    else if (r < 37) {
        putc_ (sp, 'i');
        add (sp, K_INT, 'i')->v = PICK (ints);
    } else if (r < 45) {
        putc_ (sp, 'I');
        add (sp, K_JINT, 'I')->v = (intptr_t)PICK (jints);
    } else if (r < 53) {
        putc_ (sp, 'b');
        add (sp, K_INT, 'b')->v = PICK (bools);
    } else if (r < 62) {
        putc_ (sp, 'f');
        a = add (sp, K_DOUBLE, 'f');
        a->d = chance (95) ? PICK (reals) : chance (50) ? NAN : INFINITY;
    } else if (r < 67)
        putc_ (sp, 'n');
    else if (r < 92) {
        char c = r < 82 ? 'O' : 'o';
        putc_ (sp, c);
        a = add (sp, c == 'O' ? K_SHARED : K_NEW, c);
        a->v = chance (5) ? -1 : (intptr_t)pick (SHARED); /* -1: NULL */
        if (chance (15))
            putc_ (sp, "?*"[pick (2)]);
    } else if (r < 98) {
        putc_ (sp, 'n');
        if (chance (50)) {
            putc_ (sp, "?*"[pick (2)]); /* not allowed after 'n' */
            sp->stop = true;
        }
    } else {
        putc_ (sp, "x#+!}"[pick (5)]); /* not a conversion */
        sp->stop = true;
    }
}

static void pack_spec (struct spec *sp)
{
    memset (sp, 0, sizeof (*sp));
    if (chance (88))
        pack_object (sp, 0);
    else if (!chance (5))
        pack_value (sp, 0);
    if (chance (10))
        sep (sp);
    if (chance (2))
        putc_ (sp, 'x');
    if (chance (2) && sp->len > 0)
        sp->fmt[sp->len = pick ((unsigned)sp->len)] = '\0';
}

enum pack_mode { PACK_JANSSON, PACK_PLUGIN, PACK_QUICK_ONLY, PACK_INTO };

/* The object pack_into packs into: a key the formats may set and one
 * they never do. */
static json_t *into_base (void)
{
    return json_pack ("{s:s s:i}", "k", "before", "kept", 1);
}

static json_t *
pack_via (enum pack_mode mode, json_error_t *err, const char *fmt, ...)
{
    va_list ap;
    json_t *o;

    va_start (ap, fmt);
    if (mode == PACK_JANSSON)
        o = json_vpack_ex (err, 0, fmt, ap);
    else if (mode == PACK_PLUGIN)
        o = plugin_vpack (err, fmt, ap);
    else if (mode == PACK_QUICK_ONLY)
        o = quickpack_pack (fmt, ap);
    else {
        /* the merged object when the quick pass took the format */
        o = into_base ();
        if (quickpack_pack_into (o, fmt, ap) != 1) {
            json_decref (o);
            o = NULL;
        }
    }
    va_end (ap);
    return o;
}

/* jansson's packed text merged into into_base (), as text; NULL when it
 * is not an object. */
static char *merged_text (const char *packed)
{
    json_t *o = json_loads (packed, JSON_DECODE_ANY, NULL);
    json_t *base = into_base ();
    char *text = NULL;

    if (json_is_object (o) && json_object_update (base, o) == 0)
        text = json_dumps (base, JSON_COMPACT);
    json_decref (o);
    json_decref (base);
    return text;
}

#define G(i) g[i]
#define D(i) d[i]

struct pack_run {
    json_t *o;
    char *text;
    json_error_t err;
    size_t refs[2][SHARED + MAX_GP]; /* with the result, after it is gone */
};

static void
pack_run (enum pack_mode mode, const struct spec *sp, struct pack_run *r)
{
    intptr_t g[MAX_GP] = {0};
    double d[MAX_FP] = {0};
    json_t *fresh[MAX_GP] = {NULL};
    int ng = 0, nd = 0;

    memset (r, 0, sizeof (*r));
    for (int i = 0; i < sp->nargs; i++) {
        const struct arg *a = &sp->args[i];
        switch (a->kind) {
        case K_DOUBLE:
            d[nd++] = a->d;
            continue;
        case K_PTR:
            g[ng] = (intptr_t)a->p;
            break;
        case K_SHARED:
            g[ng] = a->v < 0 ? 0 : (intptr_t)shared[a->v];
            break;
        case K_NEW:
            /* stolen by the pack: one reference more, to watch it by;
             * the quick pass alone never takes 'o' formats */
            if (a->v >= 0 && mode != PACK_QUICK_ONLY && mode != PACK_INTO) {
                fresh[ng] = json_pack ("{s:I}", "n", (json_int_t)a->v);
                g[ng] = (intptr_t)json_incref (fresh[ng]);
            }
            break;
        default: /* K_INT, K_JINT, K_SIZE */
            g[ng] = a->v;
        }
        ng++;
    }
    r->o = pack_via (mode, &r->err, sp->fmt, ARGS40 (G), D (0), D (1), D (2),
                     D (3), D (4), D (5), D (6), D (7));
    if (r->o)
        r->text = json_dumps (r->o, JSON_ENCODE_ANY | JSON_COMPACT);
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < SHARED; i++)
            r->refs[pass][i] = shared[i]->refcount;
        for (int i = 0; i < MAX_GP; i++)
            r->refs[pass][SHARED + i] = fresh[i] ? fresh[i]->refcount : 0;
        if (pass == 0 && r->o) {
            json_decref (r->o);
            r->o = (json_t *)1; /* only "made one" is kept */
        }
    }
    /* An 'o' after a format error that jansson stops at is never taken
     * (the refcounts above say so, the same both ways): let it go here. */
    for (int i = 0; i < MAX_GP; i++) {
        while (fresh[i] && fresh[i]->refcount > 1)
            json_decref (fresh[i]);
        json_decref (fresh[i]);
    }
}

static void test_pack (int cases)
{
    int bad = 0, quick = 0, fallback = 0, errors = 0, into = 0;

    shared[0] = json_pack ("{s:[i,s]}", "k", 1, "v");
    shared[1] = json_array ();
    shared[2] = json_string ("shared");
    for (int n = 0; n < cases; n++) {
        struct spec sp;
        struct pack_run a, b, q, in;
        char detail[512] = "";

        pack_spec (&sp);
        if (sp.overflow) {
            n--;
            continue;
        }
        pack_run (PACK_JANSSON, &sp, &a);
        pack_run (PACK_PLUGIN, &sp, &b);
        pack_run (PACK_QUICK_ONLY, &sp, &q);
        pack_run (PACK_INTO, &sp, &in);
        char *merged = a.o ? merged_text (a.text) : NULL;
        if (!a.o != !b.o)
            snprintf (detail, sizeof (detail), "%s, jansson %s",
                      b.o ? "packed" : "failed", a.o ? "packed" : "failed");
        else if (a.o && strcmp (a.text, b.text) != 0)
            snprintf (detail, sizeof (detail), "made %s, jansson %s", b.text,
                      a.text);
        else if (!a.o && !same_error (&a.err, &b.err))
            snprintf (detail, sizeof (detail), "error \"%s\", jansson \"%s\"",
                      b.err.text, a.err.text);
        else if (memcmp (a.refs, b.refs, sizeof (a.refs)) != 0)
            snprintf (detail, sizeof (detail), "different refcounts");
        else if (q.o && !a.o)
            snprintf (detail, sizeof (detail), "quick path took a failure");
        else if (q.o && strcmp (q.text, a.text) != 0)
            snprintf (detail, sizeof (detail), "quick path made %s", q.text);
        else if (in.o && !merged)
            snprintf (detail, sizeof (detail), "packed into where jansson %s",
                      a.o ? "made no object" : "failed");
        else if (in.o && strcmp (in.text, merged) != 0)
            snprintf (detail, sizeof (detail), "packed into: %s, merged %s",
                      in.text, merged);
        else if (memcmp (q.refs[1], in.refs[1], sizeof (q.refs[1])) != 0
                 || (q.o && in.o
                     && memcmp (q.refs[0], in.refs[0], sizeof (q.refs[0]))
                            != 0))
            snprintf (detail, sizeof (detail), "packed into: refcounts");
        if (detail[0]) {
            bad++;
            show ("pack", n, sp.fmt, NULL, detail);
        }
        quick += q.o != NULL;
        into += in.o != NULL;
        fallback += !q.o && a.o;
        errors += !a.o;
        free (a.text);
        free (b.text);
        free (q.text);
        free (in.text);
        free (merged);
    }
    for (int i = 0; i < SHARED; i++) {
        ok (shared[i]->refcount == 1, "pack: shared 'O' object %d: %zu refs", i,
            shared[i]->refcount);
        json_decref (shared[i]);
    }
    ok (bad == 0, "pack: %d random cases as jansson packs them (%d wrong)",
        cases, bad);
    diag ("pack: %d by the quick path, %d left to jansson, %d errors", quick,
          fallback, errors);
    ok (quick > cases / 5 && fallback > cases / 20 && errors > cases / 20,
        "pack: the cases exercise the quick path, jansson's and errors");
    diag ("pack: %d packed into an object", into);
    ok (into > cases / 10, "pack: the cases exercise packing into an object");
}

/* No format: jansson's error, not a crash. */
static void test_no_format (void)
{
    json_t *doc = json_object ();
    json_error_t a, b;
    int ra = unpack_via (BY_JANSSON, doc, &a, NULL);
    int rb = unpack_via (BY_QUICKPACK, doc, &b, NULL);
    json_t *pa, *pb;

    ok (ra == rb && same_error (&a, &b), "unpack, NULL format: \"%s\"", b.text);
    pa = pack_via (PACK_JANSSON, &a, NULL);
    pb = pack_via (PACK_PLUGIN, &b, NULL);
    ok (!pa && !pb && same_error (&a, &b), "pack, NULL format: \"%s\"", b.text);
    lazy_key = "a";
    ok (unpack_via (MAY_READ, doc, &a, NULL) == 1,
        "a NULL format may read any key");
    json_decref (doc);
}

/* An unpack of a plugin's args with "jobspec" told by a finder: true
 * when it needed no tree, with what it wrote. */
static bool virtual_unpack (json_t *args, const char *fmt, ...)
{
    va_list ap;
    bool done;

    va_start (ap, fmt);
    lazy_key = "jobspec";
    virt = (struct quick_virtual){.find = find_in_value};
    done = quickpack_unpack_virtual (args, fmt, ap, &virt);
    va_end (ap);
    for (int i = 0; i < virt.held_count; i++)
        json_decref (virt.held[i]);
    return done;
}

/* virtual_unpack with the room and held values of 'virt' as the test set
 * them, released by the next call. */
static bool quick_scalars (json_t *args, const char *fmt, ...)
{
    va_list ap;
    bool done;

    for (int i = 0; i < virt.held_count; i++)
        json_decref (virt.held[i]);
    virt.held_count = 0;
    virt.text_len = 0;
    va_start (ap, fmt);
    lazy_key = "jobspec";
    done = quickpack_unpack_virtual (args, fmt, ap, &virt);
    va_end (ap);
    return done;
}

static void test_virtual (void)
{
    json_t *args = json_pack ("{s:I}", "id", (json_int_t)42);
    double duration = 0.;
    const char *queue = NULL, *name = "unset";
    json_int_t id = 0;
    json_t *o = NULL;

    virtual_value = json_pack (
        "{s:i s:[{s:s}] s:{s:{s:f s:s s:{s:s}}}}", "version", 1, "resources",
        "type", "slot", "attributes", "system", "duration", 60.0, "queue",
        "q", "job", "name", "n");
    ok (virtual_unpack (args, "{s:{s:{s:{s?F s?s}}}}", "jobspec",
                        "attributes", "system", "duration", &duration,
                        "queue", &queue)
            && duration == 60. && queue && !strcmp (queue, "q"),
        "virtual: scalars of nested objects, as a policy reads them");
    ok (virtual_unpack (args, "{s:I s:{s:{s:{s?{s?s}}}}}", "id", &id,
                        "jobspec", "attributes", "system", "job", "name",
                        &name)
            && id == 42 && !strcmp (name, "n"),
        "virtual: with the args' own keys");
    name = "unset";
    ok (virtual_unpack (args, "{s:{s?{s?s}}}", "jobspec", "nothing", "name",
                        &name)
            && !strcmp (name, "unset"),
        "virtual: an optional member absent: skipped, nothing written");
    ok (!virtual_unpack (args, "{s:{s:{s:{s:F}}}}", "jobspec", "attributes",
                         "system", "missing", &duration),
        "virtual: a member required and absent: left to the tree");
    ok (!virtual_unpack (args, "{s:{s:{s:{s:s}}}}", "jobspec", "attributes",
                         "system", "duration", &queue),
        "virtual: a member of another type: left to the tree");
    ok (virtual_unpack (args, "{s:{s:{s:{s:o}}}}", "jobspec", "attributes",
                        "system", "duration", &o)
            && json_real_value (o) == 60.,
        "virtual: a scalar as 'o'");
    o = NULL;
    ok (!virtual_unpack (args, "{s:o}", "jobspec", &o) && !o,
        "virtual: the jobspec whole: left to the tree");
    ok (!virtual_unpack (args, "{s:{s:o}}", "jobspec", "attributes", &o),
        "virtual: an object whole: left to the tree");
    ok (!virtual_unpack (args, "{s:{s:[{s:s}]}}", "jobspec", "resources",
                         "type", &queue),
        "virtual: what the finder cannot tell: left to the tree");
    ok (!virtual_unpack (args, "{s:{s:{s:{s:{s:s}}}}}", "jobspec",
                         "attributes", "system", "queue", "x", &queue),
        "virtual: an object wanted where a scalar is: left to the tree");

    /* The finder telling scalars as such: strings copied into the
     * reader's room (or held as JSON when it is full), numbers as
     * numbers, other formats from JSON made of them. */
    char room[8];
    const char *cwd = NULL;
    json_int_t version = 0;
    int iversion = 0;
    double fversion = 0.;
    json_object_set_new (json_object_get (json_object_get (virtual_value,
                                                           "attributes"),
                                          "system"),
                         "cwd", json_string ("/a/long/path"));
    virt = (struct quick_virtual){.find = find_in_value,
                                  .text = room,
                                  .text_cap = sizeof (room)};
    tell_scalars = true;
    duration = 0.;
    queue = NULL;
    ok (quick_scalars (args, "{s:{s:{s:{s?F s?s s?s}} s:I s:i s:F}}",
                       "jobspec", "attributes", "system", "duration",
                       &duration, "queue", &queue, "cwd", &cwd, "version",
                       &version, "version", &iversion, "version", &fversion)
            && duration == 60. && queue == room && !strcmp (queue, "q")
            && virt.text_len == 2 && !strcmp (cwd, "/a/long/path")
            && virt.held_count == 1 && json_is_string (virt.held[0])
            && version == 1 && iversion == 1 && fversion == 1.,
        "scalars: a string copied into the room, one too long for it held "
        "as JSON, numbers read as such");
    o = NULL;
    ok (quick_scalars (args, "{s:{s:{s:{s:o}}}}", "jobspec", "attributes",
                       "system", "duration", &o)
            && virt.held_count == 1 && o == virt.held[0]
            && json_real_value (o) == 60.,
        "scalars: one as 'o', made JSON and held");
    ok (!quick_scalars (args, "{s:{s:{s:{s:s}}}}", "jobspec", "attributes",
                        "system", "duration", &queue)
            && !quick_scalars (args, "{s:{s:{s:{s:i}}}}", "jobspec",
                               "attributes", "system", "duration", &iversion)
            && !quick_scalars (args, "{s:{s:{s:{s:f}}}}", "jobspec",
                               "attributes", "system", "queue", &duration)
            && !quick_scalars (args, "{s:{s:f}}", "jobspec", "version",
                               &fversion),
        "scalars: a format of another type fails, as on the JSON value");
    tell_scalars = false;
    release_held ();

    /* The objects on the way down are asked for only when no scalar
     * below tells them. */
    finds = 0;
    duration = 0.;
    queue = NULL;
    bool read = virtual_unpack (args, "{s:{s:{s:{s?F s?s}}}}", "jobspec",
                                "attributes", "system", "duration",
                                &duration, "queue", &queue);
    ok (read && duration == 60. && !strcmp (queue, "q") && finds == 2,
        "virtual: a policy's two scalars, two questions (%d)", finds);
    finds = 0;
    name = "unset";
    json_int_t x = -1;
    duration = 0.;
    read = virtual_unpack (args, "{s:{s?{s?s s?I} s:{s:{s:F}}}}", "jobspec",
                           "nothing", "name", &name, "x", &x, "attributes",
                           "system", "duration", &duration);
    ok (read && !strcmp (name, "unset") && x == -1 && duration == 60.,
        "virtual: an optional object absent, its members skipped, the next "
        "member read (%d questions)", finds);
    name = "unset";
    ok (virtual_unpack (args, "{s:{s:{s:{s?{s?s s?I} s:s}}}}", "jobspec",
                        "attributes", "system", "nojob", "name", &name, "x",
                        &x, "queue", &queue)
            && !strcmp (name, "unset") && x == -1 && !strcmp (queue, "q"),
        "virtual: the same three levels down, between members read");
    ok (virtual_unpack (args, "{s:{s?{}}}", "jobspec", "nothing")
            && !virtual_unpack (args, "{s:{s:{}}}", "jobspec", "nothing"),
        "virtual: an empty object format: absent is fine only if optional");
    ok (virtual_unpack (args, "{s:{s:{}}}", "jobspec", "attributes")
            && !virtual_unpack (args, "{s:{s:{}}}", "jobspec", "version"),
        "virtual: an empty object format on an object, and on a scalar");
    name = "unset";
    ok (!virtual_unpack (args, "{s:{s:{s?s}}}", "jobspec", "nothing", "name",
                         &name)
            && !strcmp (name, "unset"),
        "virtual: a required object absent: left to the tree, nothing "
        "written");
    ok (!virtual_unpack (args, "{s:{s:{s?s}}}", "jobspec", "version", "name",
                         &name),
        "virtual: a member under a scalar: left to the tree");
    ok (!virtual_unpack (args, "{s:{s:{s:{s:F}} s:{s?s}}}", "jobspec",
                         "attributes", "system", "duration", &duration,
                         "version", "name", &name),
        "virtual: ...also after a sibling's members were told");
    json_t *real = json_pack ("{s:O}", "jobspec", virtual_value);
    const char *n1 = "unset", *n2 = "unset";
    json_int_t x2 = -1;
    bool told = virtual_unpack (args, "{s?{s?{s?{s?{s?s} s?I}}}}", "jobspec",
                                "attributes", "system", "job", "name", &n1,
                                "absent", &x);
    ok (told && json_unpack (real, "{s?{s?{s?{s?{s?s} s?I}}}}", "jobspec",
                             "attributes", "system", "job", "name", &n2,
                             "absent", &x2) == 0
            && !strcmp (n1, n2) && x == x2,
        "virtual: all optional, as jansson reads the value (%s)", n1);
    json_decref (real);

    /* An empty root (a callback's args before a reader needed more): the
     * walk in one loop, the same answers. */
    json_t *empty = json_object ();
    finds = 0;
    duration = 0.;
    queue = NULL;
    read = virtual_unpack (empty, "{s:{s:{s:{s?F s?s}}}}", "jobspec",
                           "attributes", "system", "duration", &duration,
                           "queue", &queue);
    ok (read && duration == 60. && !strcmp (queue, "q") && finds == 2,
        "virtual, an empty root: a policy's two scalars, two questions (%d)",
        finds);
    name = "unset";
    ok (virtual_unpack (empty, "{s:{s?{s?s} s:{s:{s:F}}}}", "jobspec",
                        "nothing", "name", &name, "attributes", "system",
                        "duration", &duration)
            && !strcmp (name, "unset"),
        "virtual, an empty root: an optional object absent, skipped");
    ok (!virtual_unpack (empty, "{s:{s:{s?s}}}", "jobspec", "nothing", "name",
                         &name)
            && !virtual_unpack (empty, "{s:{s:{s:{s:F}}}}", "jobspec",
                                "attributes", "system", "missing",
                                &duration),
        "virtual, an empty root: a required object or member absent: left "
        "to the tree");
    json_decref (empty);
    json_decref (virtual_value);
    json_decref (args);
}

int main (void)
{
    const char *s = getenv ("QUICKPACK_SEED");
    const char *c = getenv ("QUICKPACK_CASES");
    struct timespec ts;
    uint64_t seed;

    clock_gettime (CLOCK_REALTIME, &ts);
    rng = (uint64_t)ts.tv_sec * 1000000007ULL ^ (uint64_t)ts.tv_nsec ^
          ((uint64_t)getpid () << 40);
    seed = s && *s ? strtoull (s, NULL, 0) : rnd () >> 1;
    int cases = c && *c ? atoi (c) : 3000;

    diag ("seed %" PRIu64 " (QUICKPACK_SEED=%" PRIu64 " replays this run)",
          seed, seed);
    rng = seed;
    test_no_format ();
    test_unpack (cases, false);
    test_unpack (cases / 3, true);
    test_virtual ();
    if (PACK_CASES_RUN)
        test_pack (cases);
    else
        diag ("pack cases skipped: no known way to pass their arguments here");
    done_testing ();
}
