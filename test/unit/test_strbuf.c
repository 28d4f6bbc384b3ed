/* strbuf.c: growing text, and what a write that cannot grow leaves. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"
#include "tap.h"

int main (void)
{
    struct strbuf b = {0};

    ok (strbuf_take (&b) == NULL, "nothing written: no text");
    strbuf_puts (&b, "{\"id\":");
    strbuf_put_u64 (&b, 0);
    strbuf_put (&b, ",", 1);
    strbuf_put_u64 (&b, UINT64_MAX);
    strbuf_puts (&b, "}");
    is (b.data, "{\"id\":0,18446744073709551615}", "strings and numbers");
    ok (b.len == strlen (b.data) && !b.dropped, "len counts them, none dropped");

    /* numbers at each count of digits, as printf writes them */
    struct strbuf n = {0};
    char want[1024]; /* (60 numbers of up to 20 digits) */
    size_t wlen = 0;
    uint64_t v = 1;
    for (int digits = 1; digits <= 20; digits++, v *= 10) {
        uint64_t vs[] = {v - 1, v, v + 1};
        for (size_t i = 0; i < 3; i++) {
            strbuf_put_u64 (&n, vs[i]);
            strbuf_put (&n, " ", 1);
            wlen += (size_t)snprintf (want + wlen, sizeof (want) - wlen,
                                      "%llu ", (unsigned long long)vs[i]);
        }
    }
    is (n.data, want, "numbers of 1 to 20 digits and their neighbours");
    strbuf_free (&n);

    /* past the first 256 bytes, then several doublings */
    char line[1000];
    memset (line, 'x', sizeof (line) - 1);
    line[sizeof (line) - 1] = '\0';
    size_t before = b.len;
    for (int i = 0; i < 5; i++)
        strbuf_puts (&b, line);
    ok (b.len == before + 5 * (sizeof (line) - 1) && b.cap > b.len
            && b.data[b.len] == '\0',
        "grows past its first size, NUL-terminated");

    strbuf_truncate (&b, before);
    is (b.data, "{\"id\":0,18446744073709551615}", "truncated back");

    /* a write that cannot grow (its size would overflow the doubling):
     * dropped, said so, the text as it was */
    size_t cap = b.cap;
    ok (strbuf_room (&b, SIZE_MAX - 8) == NULL, "no room for SIZE_MAX - 8");
    ok (b.dropped && b.len == before && b.cap == cap,
        "dropped is set, the text and its buffer unchanged");
    strbuf_puts (&b, "!");
    ok (b.dropped && b.data[b.len - 1] == '!',
        "later writes go on; dropped stays until the writer clears it");
    ok (strbuf_take (&b) == NULL && !b.data && !b.len && !b.dropped,
        "take after a drop: no text, the buffer freed and emptied");

    strbuf_puts (&b, "rank0/core0");
    char *text = strbuf_take (&b);
    is (text, "rank0/core0", "take hands the text over");
    ok (!b.data && !b.len && !b.cap, "and leaves the buffer empty");
    free (text);

    struct strbuf *h = strbuf_new ();
    ok (h && !h->data && !h->len && !h->cap && !h->dropped,
        "a new strbuf is empty");
    strbuf_puts (h, "kept");
    is (h->data, "kept", "and takes text");
    strbuf_destroy (h); /* valgrind and ASan: nothing left */
    strbuf_destroy (NULL);
    strbuf_free (&b);
    done_testing ();
}
