/* update_memo.c: see update_memo.h. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compact.h"
#include "update_memo.h"

static bool put (struct update_memo_key *k, const void *p, size_t n)
{
    if (n > sizeof (k->bytes) - k->len)
        return false;
    memcpy (k->bytes + k->len, p, n);
    k->len += n;
    return true;
}

static bool put_string (struct update_memo_key *k, const char *s)
{
    return s && put (k, s, strlen (s) + 1);
}

/* What pack's format separators and blanks are. */
static const char *skip_blanks (const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == ',' || *p == ':')
        p++;
    return p;
}

/* One value of the format at *p, its argument written out. */
static bool put_value (struct update_memo_key *k, const char **p, va_list *ap)
{
    int i;
    json_int_t big;
    double d;

    switch (*(*p)++) {
    case 's':
        return put_string (k, va_arg (*ap, const char *));
    case 'i':
    case 'b':
        i = va_arg (*ap, int);
        return put (k, &i, sizeof (i));
    case 'I':
        big = va_arg (*ap, json_int_t);
        return put (k, &big, sizeof (big));
    case 'f':
        d = va_arg (*ap, double);
        return put (k, &d, sizeof (d));
    case 'n':
        return true;
    default:
        return false;
    }
}

/* key for fmt and ap: a flat object of 's' keys and scalar values, each
 * without a modifier (a '?', '*', '#', '%' or '+' after it ends the
 * walk, as does anything nested). */
static bool key_of (struct update_memo_key *k, const char *fmt, va_list *ap)
{
    const char *p = skip_blanks (fmt);

    k->len = 0;
    if (*p++ != '{' || !put (k, fmt, strlen (fmt) + 1))
        return false;
    for (;;) {
        p = skip_blanks (p);
        if (*p == '}')
            break;
        if (*p++ != 's' || !put_string (k, va_arg (*ap, const char *)))
            return false;
        p = skip_blanks (p);
        if (!put_value (k, &p, ap))
            return false;
        /* a modifier, or anything not a separator, before the next key */
        if (*p && !strchr (" \t\n,:}", *p))
            return false;
    }
    return *skip_blanks (p + 1) == '\0';
}

json_t *update_memo_find (struct update_memo *m,
                          struct update_memo_key *key,
                          const char *fmt,
                          va_list ap)
{
    va_list copy;
    bool kept;

    va_copy (copy, ap);
    kept = fmt && key_of (key, fmt, &copy);
    va_end (copy);
    if (!kept) {
        key->len = 0;
        return NULL;
    }
    for (int i = 0; i < UPDATE_MEMO_SLOTS; i++) {
        struct update_memo_slot *s = &m->slot[i];
        if (s->o && s->key.len == key->len
            && !memcmp (s->key.bytes, key->bytes, key->len))
            return json_incref (s->o);
    }
    return NULL;
}

static void slot_drop (struct update_memo_slot *s)
{
    json_decref (s->o);
    free (s->text);
    s->o = NULL;
    s->text = NULL;
    s->text_len = 0;
    s->key.len = 0;
}

void update_memo_keep (struct update_memo *m,
                       const struct update_memo_key *key,
                       json_t *o)
{
    if (!key->len || !o)
        return;
    struct update_memo_slot *s = &m->slot[m->next++ % UPDATE_MEMO_SLOTS];
    slot_drop (s);
    s->o = json_incref (o);
    s->key.len = key->len;
    memcpy (s->key.bytes, key->bytes, key->len);
}

const char *update_memo_text (struct update_memo *m, json_t *o, size_t *len)
{
    for (int i = 0; o && i < UPDATE_MEMO_SLOTS; i++) {
        struct update_memo_slot *s = &m->slot[i];
        if (s->o != o)
            continue;
        if (!s->text && (s->text = compact_dumps (NULL, o)))
            s->text_len = strlen (s->text);
        *len = s->text_len;
        return s->text;
    }
    return NULL;
}

void update_memo_clear (struct update_memo *m)
{
    for (int i = 0; i < UPDATE_MEMO_SLOTS; i++)
        slot_drop (&m->slot[i]);
    m->next = 0;
}
