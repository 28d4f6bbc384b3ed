/* update_memo: the jobspec updates plugins packed lately, kept as their
 * objects, so that a pack of the same format with the same arguments (a
 * policy setting one default on job after job) gives the kept object
 * instead of building an equal one, and its listing's text is written
 * once.  The objects are shared between jobs from then on, so nothing
 * changes them in place: whoever merges into an update copies it first
 * (spec.h: own_object).  Only flat objects of scalars are kept: "{s:s}",
 * with values s i I b f n; anything else is packed as before.
 *
 * Its holder serialises its use (the runtime's, under the runtime lock).
 * Calls compact.c only. */
#ifndef JOBTAP_UPDATE_MEMO_H
#define JOBTAP_UPDATE_MEMO_H

#include <stdarg.h>
#include <stddef.h>
#include <jansson.h>

#define UPDATE_MEMO_SLOTS 4
/* The most bytes of a pack's format and arguments a slot compares. */
#define UPDATE_MEMO_KEY_MAX 256

/* A pack call's format and arguments, written out for comparing: the
 * format's text, then each key and string with its NUL, each number's
 * bytes.  len 0: the call cannot be kept. */
struct update_memo_key {
    size_t len;
    char bytes[UPDATE_MEMO_KEY_MAX];
};

struct update_memo_slot {
    json_t *o;   /* NULL: empty */
    char *text;  /* o's compact text, made when first asked */
    size_t text_len;
    struct update_memo_key key;
};

struct update_memo {
    struct update_memo_slot slot[UPDATE_MEMO_SLOTS];
    unsigned next;
};

/* The kept object that fmt and ap pack to (a new reference), or NULL;
 * then *key says whether what the caller packs may be kept. ap is not
 * consumed. */
json_t *update_memo_find (struct update_memo *m,
                          struct update_memo_key *key,
                          const char *fmt,
                          va_list ap);
/* Keep o (a reference taken) as what 'key' packs to, in place of the
 * oldest; nothing if the key cannot be kept. */
void update_memo_keep (struct update_memo *m,
                       const struct update_memo_key *key,
                       json_t *o);
/* o's compact text and its length if o is kept here, else NULL. */
const char *update_memo_text (struct update_memo *m, json_t *o, size_t *len);
/* Let go of every kept object. */
void update_memo_clear (struct update_memo *m);

#endif
