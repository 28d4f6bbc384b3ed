/* Growing text, for what the runtime writes by hand: the kept state's
 * lines (store.c, store_file.c) and R's summary (rsummary.c).  Text only:
 * calls libc alone.  The writes are inline: the store makes a few dozen
 * a job, most of a constant string, whose length and copy the compiler
 * then knows. */
#ifndef JOBTAP_STRBUF_H
#define JOBTAP_STRBUF_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* On allocation failure what would not fit is dropped and 'dropped' says
 * so, until the writer clears it (the text is then missing a part). */
struct strbuf {
    char *data;
    size_t len, cap;
    bool dropped;
};
/* Grow b to hold n more bytes and the NUL: 0, or -1 (b unchanged). */
int strbuf_grow (struct strbuf *b, size_t n);
/* Room for n more bytes (and the NUL): where to write them, then
 * strbuf_wrote with how many were; NULL if it cannot grow (dropped). */
static inline char *strbuf_room (struct strbuf *b, size_t n)
{
    if (n >= b->cap - b->len && strbuf_grow (b, n) < 0) {
        b->dropped = true;
        return NULL;
    }
    return b->data + b->len;
}
static inline void strbuf_wrote (struct strbuf *b, size_t n)
{
    b->len += n;
    b->data[b->len] = '\0';
}
static inline void strbuf_put (struct strbuf *b, const char *s, size_t n)
{
    char *p = strbuf_room (b, n);
    if (p) {
        memcpy (p, s, n);
        strbuf_wrote (b, n);
    }
}
static inline void strbuf_puts (struct strbuf *b, const char *s)
{
    strbuf_put (b, s, strlen (s));
}
/* Back to its first len bytes (len <= b->len). */
static inline void strbuf_truncate (struct strbuf *b, size_t len)
{
    b->len = len;
    if (b->data)
        b->data[len] = '\0';
}
/* v in decimal at p (room for 20 bytes); returns the end. */
char *put_u64_at (char *p, uint64_t v);
void strbuf_put_u64 (struct strbuf *b, uint64_t v);
/* The text, b left empty (the caller frees it); NULL if a write was
 * dropped or nothing was written. */
char *strbuf_take (struct strbuf *b);
void strbuf_free (struct strbuf *b);
/* An empty strbuf of its own, for strbuf_destroy; NULL if out of memory. */
struct strbuf *strbuf_new (void);
/* strbuf_free and free of a malloc'd strbuf (NULL: nothing). */
void strbuf_destroy (struct strbuf *b);
#endif
