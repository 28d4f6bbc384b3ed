/* The store's files (store.h has their layout): the journal's and the
 * snapshot's lines read into what they keep, a snapshot written the way
 * Slurm writes its state files, and the text buffer the store writes
 * with.  Files and text only: no runtime, no lock (the runtime's log
 * aside).  Called by store.c; calls log.c. */
#ifndef JOBTAP_STORE_FILE_H
#define JOBTAP_STORE_FILE_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <jansson.h>

#include "host.h"

/* Growing text; on allocation failure what would not fit is dropped.
 * The writes are inline: the store makes a few dozen a job, most of a
 * constant string, whose length and copy the compiler then knows. */
struct strbuf {
    char *data;
    size_t len, cap;
};
/* Grow b to hold n more bytes and the NUL: 0, or -1 (b unchanged). */
int strbuf_grow (struct strbuf *b, size_t n);
/* Room for n more bytes (and the NUL): where to write them, then
 * strbuf_wrote with how many were; NULL if it cannot grow. */
static inline char *strbuf_room (struct strbuf *b, size_t n)
{
    if (b->len + n + 1 > b->cap && strbuf_grow (b, n) < 0)
        return NULL;
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
/* v in decimal at p (room for 20 bytes); returns the end. */
char *put_u64_at (char *p, uint64_t v);
void strbuf_put_u64 (struct strbuf *b, uint64_t v);
void strbuf_free (struct strbuf *b);
/* strbuf_free and free of a malloc'd strbuf (NULL: nothing). */
void strbuf_destroy (struct strbuf *b);

/* "dir/name" (malloc'd), or NULL. */
char *store_path (const char *dir, const char *name);
/* write() all of data; *done says how much went, also on failure. */
int store_write_all (int fd, const char *data, size_t len, size_t *done);

/* What 'dir' keeps: "<id>" -> its entries, from the snapshot (or the
 * previous one, if the last was not complete; one that cannot be read
 * is moved aside) and the journals from its generation on, below
 * 'below' (0: all).  *last: the highest generation seen.  NULL + err. */
json_t *store_read_dir (const char *dir,
                        unsigned long below,
                        unsigned long *last,
                        jobtap_host_error_t *err);
/* Write 'kept' as snapshot 'gen' (*bytes its size): a new file, synced,
 * the old one renamed aside, the new one into place, the directory
 * synced.  0, or -1 + err. */
int store_write_snapshot (const char *dir,
                          json_t *kept,
                          unsigned long gen,
                          size_t *bytes,
                          jobtap_host_error_t *err);
/* Remove the journals below 'gen' (a snapshot of gen has them). */
void store_unlink_journals_below (const char *dir, unsigned long gen);
#endif
