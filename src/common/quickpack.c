/* Quick pack and unpack for the usual jansson formats, with what the
 * root lacks told by a finder (plugin args' lazy part), and the format
 * walk behind the lazy key of plugin args (quickpack.h). */
#include <stdarg.h>
#include <stdbool.h>
#include <string.h>
#include <jansson.h>

#include "host.h"
#include "quickpack.h"

/* Unpack format walking, to tell whether a format reads the lazy key.
 * Every unpack argument is a pointer (keys are const char *), so the
 * walk consumes them as void *.  Whatever it does not follow counts as
 * a read. */
struct fmt_walk {
    const char *p;
    va_list ap;
    struct quick_virtual *virt; /* unpack: what the root lacks, told */
    /* The current virtual path's members known to be objects (those at
     * path[0..i) for i <= objects_told), whether each key of the path
     * is optional, and the shortest one told absent when a member below
     * it was asked for (0: none): its rest is skipped. */
    int objects_told;
    bool optional[33];
    int absent_from;
};

/* What a format may have between tokens. */
static const bool blank[256] = {
    [' '] = true, ['\t'] = true, ['\n'] = true, [','] = true, [':'] = true,
};

static void walk_blanks (struct fmt_walk *w)
{
    while (blank[(unsigned char)*w->p])
        w->p++;
}

static bool walk_value (struct fmt_walk *w, int depth);

/* After '{' or '['.  In an object, a key equal to 'key' at depth 0 is a
 * read; so is '!' there (strict: a missing key would change the result). */
static bool
walk_container (struct fmt_walk *w, bool object, const char *key, int depth)
{
    for (;;) {
        walk_blanks (w);
        char c = *w->p;
        if (c == (object ? '}' : ']')) {
            w->p++;
            return true;
        }
        if (c == '!' && object && depth == 0)
            return false;
        if (c == '!' || c == '*') {
            w->p++;
            continue;
        }
        if (object) {
            const char *k;
            if (c != 's')
                return false;
            w->p++;
            k = va_arg (w->ap, const char *);
            if (depth == 0 && k && !strcmp (k, key))
                return false;
            if (*w->p == '?')
                w->p++;
        }
        if (!walk_value (w, depth + 1))
            return false;
    }
}

static bool walk_value (struct fmt_walk *w, int depth)
{
    walk_blanks (w);
    if (depth > 32)
        return false;
    switch (*w->p++) {
    case 's':
        (void)va_arg (w->ap, void *);
        if (*w->p == '%') {
            w->p++;
            (void)va_arg (w->ap, void *);
        }
        return true;
    case 'b':
    case 'i':
    case 'I':
    case 'f':
    case 'F':
    case 'o':
    case 'O':
        (void)va_arg (w->ap, void *);
        return true;
    case 'n':
        return true;
    case '{':
        return walk_container (w, true, NULL, depth);
    case '[':
        return walk_container (w, false, NULL, depth);
    default:
        return false;
    }
}

bool quickpack_may_read (const char *fmt, va_list ap, const char *key)
{
    struct fmt_walk w = {.p = fmt};
    bool clean;

    if (!fmt)
        return true;
    va_copy (w.ap, ap);
    walk_blanks (&w);
    if (*w.p == '{') {
        w.p++;
        clean = walk_container (&w, true, key, 0);
        walk_blanks (&w);
        clean = clean && *w.p == '\0';
    } else
        clean = false;
    va_end (w.ap);
    return !clean;
}

/* Unpack for the formats plugins mostly use: objects, nested, of keys
 * ('s', '?' when optional) and s i I b f F o n values, with jansson's
 * meaning.  jansson's own unpack builds a hashtable of the keys at every
 * object level, most of what a plugin's unpack cost.  Anything else (or
 * any error, whose message jansson words) returns false having written
 * only what jansson, given the same arguments again, writes too: so no
 * 'O', whose reference would be taken twice.  It walks formats as
 * quickpack_may_read does. */
static char quick_token (struct fmt_walk *q)
{
    walk_blanks (q);
    return *q->p;
}

static bool quick_value (struct fmt_walk *q, json_t *v, int depth);

/* In an object of a format, after '{' or a member: 1 with *key at an 's'
 * key (its argument consumed), 0 at the closing '}' (passed), -1 at
 * anything else. */
static int quick_key (struct fmt_walk *q, const char **key)
{
    char c = quick_token (q);
    if (c == '}') {
        q->p++;
        return 0;
    }
    if (c != 's' || !(*key = va_arg (q->ap, const char *)))
        return -1;
    q->p++;
    return 1;
}

static bool quick_virtual_value (struct fmt_walk *q,
                                 const char **path,
                                 int n,
                                 bool opt,
                                 int depth);

/* At '{'; o NULL: an optional key that is absent (arguments consumed,
 * nothing written). */
static bool quick_members (struct fmt_walk *q, json_t *o, int depth);

static bool quick_object (struct fmt_walk *q, json_t *o, int depth)
{
    if (depth > 32 || (o && !json_is_object (o)))
        return false;
    q->p++;
    return quick_members (q, o, depth);
}

/* The members of an object of the format, after its '{' or a member, up
 * to its '}'; o NULL as in quick_object. */
static bool quick_members (struct fmt_walk *q, json_t *o, int depth)
{
    for (;;) {
        const char *key;
        bool opt = false;
        json_t *v;
        int k = quick_key (q, &key);
        if (k <= 0)
            return k == 0;
        if (quick_token (q) == '?') {
            opt = true;
            q->p++;
        }
        /* (lazy args' roots are mostly empty: no key hashed then) */
        v = o && json_object_size (o) ? json_object_get (o, key) : NULL;
        if (!v && o && depth == 0 && q->virt) {
            const char *path[33] = {key};
            q->objects_told = 0;
            q->absent_from = 0;
            if (!quick_virtual_value (q, path, 1, opt, depth + 1))
                return false;
            continue;
        }
        if (o && !v && !opt)
            return false;
        if (!quick_value (q, v, depth + 1))
            return false;
    }
}

/* Whether the members at path[0..i) for i up to n not yet known to be
 * objects are objects, asking the finder.  One absent whose key is
 * optional is an answer too: q->absent_from says which, and the walk
 * skips the rest of it. */
static bool virtual_objects (struct fmt_walk *q, const char **path, int n)
{
    struct quick_virtual *vt = q->virt;

    for (int i = q->objects_told + 1; i <= n; i++) {
        json_t *v = NULL;
        struct jobtap_spec_scalar scalar;
        int kind = vt->find (vt->arg, path, i, &v, &scalar);
        json_decref (v);
        if (kind == JOBTAP_SPEC_ABSENT && q->optional[i - 1]) {
            q->absent_from = i;
            return true;
        }
        if (kind != JOBTAP_SPEC_OBJECT)
            return false;
        q->objects_told = i;
    }
    return true;
}

/* The JSON value of a scalar, for the formats quick_scalar leaves to
 * quick_value. */
static json_t *scalar_json (const struct jobtap_spec_scalar *scalar)
{
    switch (scalar->type) {
    case JSON_STRING:
        return json_string_nocheck (scalar->string);
    case JSON_INTEGER:
        return json_integer (scalar->integer);
    case JSON_REAL:
        return json_real (scalar->real);
    default:
        return NULL;
    }
}

/* A scalar the finder told, unpacked as quick_value unpacks its JSON
 * value: the usual formats straight from it (a string copied into the
 * reader's room), the others, and a string the room cannot take, from
 * its JSON value, held for the reader. */
static bool quick_scalar (struct fmt_walk *q,
                          struct quick_virtual *vt,
                          const struct jobtap_spec_scalar *scalar,
                          int depth)
{
    const char *at = q->p;
    char c = quick_token (q);
    void *t;
    json_t *v;

    q->p++;
    if (c == 's' && scalar->type == JSON_STRING && quick_token (q) != '%') {
        size_t n = strlen (scalar->string) + 1;
        if (n <= vt->text_cap - vt->text_len) {
            if (!(t = va_arg (q->ap, void *)))
                return false;
            *(const char **)t = memcpy (vt->text + vt->text_len,
                                        scalar->string, n);
            vt->text_len += n;
            return true;
        }
    }
    else if ((c == 'i' || c == 'I') && scalar->type == JSON_INTEGER) {
        if (!(t = va_arg (q->ap, void *)))
            return false;
        if (c == 'i')
            *(int *)t = (int)scalar->integer;
        else
            *(json_int_t *)t = scalar->integer;
        return true;
    }
    else if ((c == 'f' && scalar->type == JSON_REAL)
             || (c == 'F' && scalar->type != JSON_STRING)) {
        if (!(t = va_arg (q->ap, void *)))
            return false;
        *(double *)t = scalar->type == JSON_REAL ? scalar->real
                                                  : (double)scalar->integer;
        return true;
    }
    q->p = at; /* (no argument taken) */
    if (vt->held_count == QUICK_VIRTUAL_HELD || !(v = scalar_json (scalar)))
        return false;
    vt->held[vt->held_count++] = v;
    return quick_value (q, v, depth);
}

/* The value at 'path' (n keys from the root) of what the root lacks, as
 * the finder tells it: objects are walked, scalars unpacked from the
 * value it gives (held for the reader, also as 'o') or from the scalar
 * it tells (quick_scalar), absent members
 * skipped where optional.  The objects the format walks into are not
 * asked for on the way down: a scalar is told only inside objects (the
 * finder's contract), so they are asked for only when no scalar below
 * tells them.  Whatever the finder cannot tell, or the format wants of
 * an object as a whole ('o'), or an error, is false: the caller then
 * makes the value and unpacks that. */
static bool quick_virtual_value (struct fmt_walk *q,
                                 const char **path,
                                 int n,
                                 bool opt,
                                 int depth)
{
    struct quick_virtual *vt = q->virt;
    char c = quick_token (q);
    json_t *v = NULL;
    struct jobtap_spec_scalar scalar;
    int kind;

    q->optional[n - 1] = opt;
    if (c == '{') {
        if (depth > 32)
            return false;
        q->p++;
        for (;;) {
            const char *key;
            bool key_opt = false;
            int k = quick_key (q, &key);
            if (k < 0)
                return false;
            if (k == 0) { /* this object, if nothing below told it */
                if (!virtual_objects (q, path, n))
                    return false;
                if (q->absent_from == n)
                    q->absent_from = 0;
                return true;
            }
            if (quick_token (q) == '?') {
                key_opt = true;
                q->p++;
            }
            path[n] = key;
            if (q->objects_told > n) /* a sibling's members told before */
                q->objects_told = n;
            if (!quick_virtual_value (q, path, n + 1, key_opt, depth + 1))
                return false;
            if (q->absent_from && q->absent_from <= n) {
                /* absent: the rest of its members consumed, unwritten */
                bool skipped = quick_members (q, NULL, depth);
                if (q->absent_from == n)
                    q->absent_from = 0;
                return skipped;
            }
        }
    }
    kind = vt->find (vt->arg, path, n, &v, &scalar);
    if (kind == JOBTAP_SPEC_SCALAR) {
        q->objects_told = n - 1;
        return quick_scalar (q, vt, &scalar, depth);
    }
    if (kind == JOBTAP_SPEC_VALUE) {
        if (vt->held_count == QUICK_VIRTUAL_HELD) {
            json_decref (v);
            return false;
        }
        vt->held[vt->held_count++] = v;
        q->objects_told = n - 1;
        return quick_value (q, v, depth);
    }
    json_decref (v);
    if (!virtual_objects (q, path, n - 1))
        return false;
    if (q->absent_from || kind == JOBTAP_SPEC_ABSENT)
        return (q->absent_from || opt) && quick_value (q, NULL, depth);
    return false;
}

/* The usual unpack of an empty root (lazy args before a reader needed
 * more) in one loop, at the root's '{': objects of 's' keys, nested,
 * down to leaves each asked of the finder once, at its whole path, and
 * unpacked as quick_virtual_value unpacks them.  The objects on the way
 * are told by the leaves below them, or asked for (virtual_objects, with
 * no key taken as optional) when their '}' comes with none told.  False
 * for anything else (an absent object, an answer the finder cannot
 * give): the caller walks the format the general way, which writes what
 * this wrote again. */
static bool virtual_flat (struct fmt_walk *q)
{
    struct quick_virtual *vt = q->virt;
    const char *path[33];
    int depth = 0; /* the keys of the object being walked */

    q->p++;
    for (;;) {
        const char *key;
        bool opt = false;
        json_t *v = NULL;
        struct jobtap_spec_scalar scalar;
        int kind, k = quick_key (q, &key);

        if (k < 0)
            return false;
        if (k == 0) {
            if (depth == 0)
                return true;
            if (!virtual_objects (q, path, depth))
                return false;
            q->objects_told = --depth;
            continue;
        }
        if (quick_token (q) == '?') {
            opt = true;
            q->p++;
        }
        path[depth] = key;
        if (q->objects_told > depth)
            q->objects_told = depth; /* a sibling's members were told */
        if (quick_token (q) == '{') {
            if (depth == 32)
                return false;
            depth++;
            q->p++;
            continue;
        }
        kind = vt->find (vt->arg, path, depth + 1, &v, &scalar);
        if (kind == JOBTAP_SPEC_SCALAR) {
            q->objects_told = depth;
            if (!quick_scalar (q, vt, &scalar, depth + 1))
                return false;
        }
        else if (kind == JOBTAP_SPEC_VALUE) {
            if (vt->held_count == QUICK_VIRTUAL_HELD) {
                json_decref (v);
                return false;
            }
            vt->held[vt->held_count++] = v;
            q->objects_told = depth;
            if (!quick_value (q, v, depth + 1))
                return false;
        }
        else {
            json_decref (v);
            if (kind != JOBTAP_SPEC_ABSENT || !opt
                || !quick_value (q, NULL, depth + 1))
                return false;
        }
    }
}

bool quickpack_unpack_virtual (json_t *root,
                               const char *fmt,
                               va_list ap,
                               struct quick_virtual *virt)
{
    struct fmt_walk q = {.p = fmt, .virt = virt};
    bool done;

    if (!root || !fmt || quick_token (&q) != '{')
        return false;
    if (json_object_size (root) == 0) {
        va_copy (q.ap, ap);
        done = virtual_flat (&q) && quick_token (&q) == '\0';
        va_end (q.ap);
        if (done)
            return true;
        q = (struct fmt_walk){.p = fmt, .virt = virt};
        (void)quick_token (&q);
    }
    va_copy (q.ap, ap);
    done = quick_value (&q, root, 0) && quick_token (&q) == '\0';
    va_end (q.ap);
    return done;
}

static bool quick_value (struct fmt_walk *q, json_t *v, int depth)
{
    char c = quick_token (q);
    void *t;

    if (c == '{')
        return quick_object (q, v, depth);
    q->p++;
    switch (c) {
    case 'n':
        return !v || json_is_null (v);
    case 's':
        if (quick_token (q) == '%' || (v && !json_is_string (v)) ||
            !(t = va_arg (q->ap, void *)))
            return false;
        if (v)
            *(const char **)t = json_string_value (v);
        return true;
    case 'i':
    case 'I':
    case 'b':
    case 'f':
    case 'F':
    case 'o':
        break;
    default:
        return false;
    }
    if (v && ((c == 'i' || c == 'I') ? !json_is_integer (v)
              : c == 'b'             ? !json_is_boolean (v)
              : c == 'f'             ? !json_is_real (v)
              : c == 'F'             ? !json_is_number (v)
                                     : false))
        return false;
    if (!(t = va_arg (q->ap, void *)))
        return false;
    if (!v)
        return true;
    switch (c) {
    case 'i':
        *(int *)t = (int)json_integer_value (v);
        break;
    case 'I':
        *(json_int_t *)t = json_integer_value (v);
        break;
    case 'b':
        *(int *)t = json_is_true (v);
        break;
    case 'f':
        *(double *)t = json_real_value (v);
        break;
    case 'F':
        *(double *)t = json_number_value (v);
        break;
    default:
        *(json_t **)t = v;
    }
    return true;
}

bool quickpack_unpack (json_t *root, const char *fmt, va_list ap)
{
    struct fmt_walk q = {.p = fmt};
    bool done;

    if (!root || !fmt)
        return false;
    va_copy (q.ap, ap);
    done = quick_value (&q, root, 0) && quick_token (&q) == '\0';
    va_end (q.ap);
    return done;
}

/* Pack for the formats plugins mostly use: objects, nested, of 's' keys
 * and s i I b f O n values, with jansson's meaning (keys and strings
 * checked as UTF-8).  jansson's pack costs 2-3 times as much for these,
 * on paths such as every jobspec update and priority answer.  Anything
 * else, and any failure, leaves the whole format to jansson, which words
 * the error: the quick pass consumes a copy of the arguments and takes no
 * reference it does not give back ('o', which steals one, is jansson's). */
static json_t *quick_pack_value (struct fmt_walk *q, int depth);

/* ASCII text is valid UTF-8: jansson's own check, a few times slower,
 * is left for the rest. */
static bool ascii (const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s >= 0x80)
            return false;
    return true;
}

static json_t *quick_pack_object (struct fmt_walk *q, int depth)
{
    json_t *o;

    if (depth > 32 || !(o = json_object ()))
        return NULL;
    q->p++;
    for (;;) {
        const char *key;
        json_t *v;
        int k = quick_key (q, &key);
        if (k == 0)
            return o;
        if (k < 0 || !(v = quick_pack_value (q, depth + 1)))
            break;
        if ((ascii (key) ? json_object_set_new_nocheck (o, key, v)
                         : json_object_set_new (o, key, v))
            < 0)
            break;
    }
    json_decref (o);
    return NULL;
}

static json_t *quick_pack_value (struct fmt_walk *q, int depth)
{
    char c = quick_token (q);
    const char *s;
    json_t *v;

    if (c == '{')
        return quick_pack_object (q, depth);
    q->p++;
    switch (c) {
    case 's':
        if (!(s = va_arg (q->ap, const char *)))
            return NULL;
        return ascii (s) ? json_string_nocheck (s) : json_string (s);
    case 'i':
        return json_integer (va_arg (q->ap, int));
    case 'I':
        return json_integer (va_arg (q->ap, json_int_t));
    case 'b':
        return va_arg (q->ap, int) ? json_true () : json_false ();
    case 'f':
        return json_real (va_arg (q->ap, double));
    case 'O':
        return (v = va_arg (q->ap, json_t *)) ? json_incref (v) : NULL;
    case 'n':
        return json_null ();
    }
    return NULL;
}

/* Whether the quick pack takes fmt: an object, of only what it knows (no
 * '?', '*', '#', '%', '+', 'o', '['). */
static bool quick_pack_takes (struct fmt_walk *q, const char *fmt)
{
    return fmt && fmt[strspn (fmt, "{}siIbfOn \t\n,:")] == '\0'
           && quick_token (q) == '{';
}

json_t *quickpack_pack (const char *fmt, va_list ap)
{
    struct fmt_walk q = {.p = fmt};
    json_t *o;

    if (!quick_pack_takes (&q, fmt))
        return NULL;
    va_copy (q.ap, ap);
    o = quick_pack_value (&q, 0);
    va_end (q.ap);
    if (o && quick_token (&q) != '\0') {
        json_decref (o);
        o = NULL;
    }
    return o;
}

#define PACK_INTO_MAX 8

int quickpack_pack_into (json_t *target, const char *fmt, va_list ap)
{
    struct fmt_walk q = {.p = fmt};
    const char *keys[PACK_INTO_MAX], *key;
    json_t *values[PACK_INTO_MAX];
    int n = 0, k, rc;

    if (!json_is_object (target) || !quick_pack_takes (&q, fmt))
        return 0;
    va_copy (q.ap, ap);
    q.p++;
    while ((k = quick_key (&q, &key)) == 1) {
        if (n == PACK_INTO_MAX || !key || !ascii (key)
            || !(values[n] = quick_pack_value (&q, 1)))
            break;
        keys[n++] = key;
    }
    rc = k == 0 && quick_token (&q) == '\0' ? 1 : 0;
    va_end (q.ap);
    for (int i = 0; i < n; i++) {
        /* an ASCII key needs no UTF-8 check: only memory can fail (the
         * value is stolen even then) */
        if (rc == 1) {
            if (json_object_set_new_nocheck (target, keys[i], values[i]) < 0)
                rc = -1;
        } else
            json_decref (values[i]);
    }
    return rc;
}

json_t *plugin_vpack (json_error_t *err, const char *fmt, va_list ap)
{
    json_t *o = quickpack_pack (fmt, ap);
    return o ? o : json_vpack_ex (err, 0, fmt, ap);
}

int quickpack_vunpack (json_t *root,
                       json_error_t *err,
                       const char *fmt,
                       va_list ap)
{
    if (quickpack_unpack (root, fmt, ap))
        return 0;
    return json_vunpack_ex (root, err, 0, fmt, ap);
}
