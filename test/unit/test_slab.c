/* slab.c: blocks handed out are distinct, aligned and whole; freed ones
 * come back before a new chunk is made; clear refuses while a block is
 * out and empties the slab otherwise; chunks grow with the slab, up to a
 * bound. */
#include <stdlib.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "slab.h"
#include "tap.h"

#define N 1000 /* several chunks of 100-byte blocks */

static void test_blocks (void)
{
    struct slab s = {0};
    unsigned char *p[N];
    int aligned = 0, whole = 0, distinct = 1;

    for (int i = 0; i < N; i++) {
        p[i] = slab_alloc (&s, 100);
        if (!p[i])
            break;
        memset (p[i], i & 0xff, 100);
        aligned += (uintptr_t)p[i] % alignof (max_align_t) == 0;
    }
    for (int i = 0; i < N; i++) {
        int ok_bytes = 1;
        for (int b = 0; b < 100; b++)
            ok_bytes &= p[i][b] == (i & 0xff);
        whole += ok_bytes;
        if (i > 0 && p[i] == p[i - 1])
            distinct = 0;
    }
    ok (aligned == N, "%d blocks, each aligned as malloc aligns", N);
    ok (whole == N && distinct,
        "each keeps its own 100 bytes (none overlaps another)");
    ok (s.in_use == N, "all %d counted in use", N);
    ok (slab_clear (&s) == -1,
        "clear with blocks out: refused, nothing freed");
#ifndef SLAB_PLAIN_MALLOC
    size_t blocks = s.nblocks;
    ok (s.chunks != NULL && blocks >= N && blocks < 2 * N,
        "the blocks come from chunks (%zu blocks)", blocks);
    slab_free (&s, p[10]);
    slab_free (&s, p[20]);
    unsigned char *a = slab_alloc (&s, 100), *b = slab_alloc (&s, 100);
    ok (a == p[20] && b == p[10] && s.nblocks == blocks,
        "freed blocks are handed out again, last freed first, no new chunk");
    p[10] = b;
    p[20] = a;
#endif
    slab_free (&s, NULL);
    ok (s.in_use == N, "freeing NULL: nothing");
    for (int i = 0; i < N; i++)
        slab_free (&s, p[i]);
    ok (s.in_use == 0 && s.nfree == s.nblocks, "all back");
    ok (slab_clear (&s) == 0 && !s.chunks && !s.free && s.size == 0,
        "cleared: empty again");
    ok ((p[0] = slab_alloc (&s, 24)) != NULL && s.size == 24,
        "an empty slab takes a new size");
    slab_free (&s, p[0]);
    ok (slab_clear (&s) == 0, "and clears again");
}

/* 100k blocks: a chunk as large as the slab so far, so a few grows, each
 * of at most a MiB of blocks. */
static void test_growth (void)
{
#ifndef SLAB_PLAIN_MALLOC
    enum { MANY = 100000 };
    struct slab s = {0};
    void **p = malloc (MANY * sizeof (*p));
    size_t grows = 0, largest = 0, before = 0;
    int got = 0;

    for (got = 0; p && got < MANY && (p[got] = slab_alloc (&s, 100)); got++) {
        if (s.nblocks != before) {
            grows++;
            if (s.nblocks - before > largest)
                largest = s.nblocks - before;
            before = s.nblocks;
        }
    }
    ok (got == MANY, "%d blocks", MANY);
    ok (grows <= 20, "in %zu chunks, not one per few hundred blocks", grows);
    ok (largest * 100 <= 1024 * 1024, "the largest of %zu blocks (a MiB at most)",
        largest);
    for (int i = 0; i < got; i++)
        slab_free (&s, p[i]);
    ok (slab_clear (&s) == 0, "all back, cleared");
    free (p);
#endif
}

int main (void)
{
    test_blocks ();
    test_growth ();
    done_testing ();
    return 0;
}
