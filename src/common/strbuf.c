/* Growing text (strbuf.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

int strbuf_grow (struct strbuf *b, size_t n)
{
    size_t cap = b->cap ? b->cap : 256;
    if (n > SIZE_MAX / 4 - b->len)
        return -1; /* the doubling below would overflow */
    while (cap < b->len + n + 1)
        cap *= 2;
    char *d = realloc (b->data, cap);
    if (!d)
        return -1;
    b->data = d;
    b->cap = cap;
    return 0;
}

char *put_u64_at (char *p, uint64_t v)
{
    /* the digits counted first, then written in place from the last (the
     * numbers written most are short: no copy through a buffer) */
    size_t n = 1;
    for (uint64_t t = v; t >= 10; t /= 10)
        n++;
    char *end = p + n;
    do {
        *--end = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    return p + n;
}

void strbuf_put_u64 (struct strbuf *b, uint64_t v)
{
    char *p = strbuf_room (b, 20);
    if (p)
        strbuf_wrote (b, (size_t)(put_u64_at (p, v) - p));
}

char *strbuf_take (struct strbuf *b)
{
    char *text = b->dropped || b->len == 0 ? NULL : b->data;
    if (!text)
        free (b->data);
    memset (b, 0, sizeof (*b));
    return text;
}

void strbuf_free (struct strbuf *b)
{
    free (b->data);
    memset (b, 0, sizeof (*b));
}

struct strbuf *strbuf_new (void)
{
    /* not calloc: glibc's calloc (2.36, 2.41) goes past the thread's
     * cache of free blocks, and strbufs are made on the submission path */
    struct strbuf *b = malloc (sizeof (*b));
    if (b)
        *b = (struct strbuf){0};
    return b;
}

void strbuf_destroy (struct strbuf *b)
{
    if (b) {
        free (b->data);
        free (b);
    }
}
