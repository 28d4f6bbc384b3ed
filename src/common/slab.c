/* Blocks of one size reused from chunks (slab.h). */
#include <stdalign.h>
#include <stdbool.h>
#include <stdlib.h>

#include "slab.h"

#if !defined(SLAB_PLAIN_MALLOC) && defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#endif
#endif
#ifndef VALGRIND_CREATE_MEMPOOL
#define VALGRIND_CREATE_MEMPOOL(pool, rz, zeroed) ((void)0)
#define VALGRIND_DESTROY_MEMPOOL(pool) ((void)0)
#define VALGRIND_MEMPOOL_ALLOC(pool, addr, size) ((void)0)
#define VALGRIND_MEMPOOL_FREE(pool, addr) ((void)0)
#define VALGRIND_MAKE_MEM_NOACCESS(addr, len) ((void)0)
#endif

struct slab_chunk {
    struct slab_chunk *next;
    alignas (max_align_t) char blocks[];
};

#ifdef SLAB_PLAIN_MALLOC
void *slab_alloc (struct slab *s, size_t size)
{
    if (!s->size)
        s->size = size;
    void *p = malloc (s->size);
    if (p)
        s->in_use++;
    return p;
}

void slab_free (struct slab *s, void *p)
{
    if (p) {
        s->in_use--;
        free (p);
    }
}
#else
/* A block's stride in a chunk: its size, aligned as malloc aligns. */
static size_t stride (const struct slab *s)
{
    size_t a = alignof (max_align_t);
    return (s->size + a - 1) / a * a;
}

/* A chunk's bytes of blocks: the first a few dozen jobs, each next one
 * as many as the slab has, up to CHUNK_MAX_BYTES, so that it grows (two
 * allocations, one of them a large one that may make glibc consolidate
 * its free lists) a logarithmic number of times. */
#define CHUNK_BYTES 32768
#define CHUNK_MAX_BYTES (1024 * 1024)

/* One more chunk, its blocks on the free stack. */
static bool grow (struct slab *s)
{
    size_t step = stride (s);
    size_t bytes = s->nblocks * step;
    if (bytes < CHUNK_BYTES)
        bytes = CHUNK_BYTES;
    else if (bytes > CHUNK_MAX_BYTES)
        bytes = CHUNK_MAX_BYTES;
    size_t n = step < bytes ? bytes / step : 1;
    void **free_stack = realloc (s->free, (s->nblocks + n) * sizeof (void *));
    if (!free_stack)
        return false;
    s->free = free_stack;
    struct slab_chunk *c = malloc (sizeof (*c) + n * step);
    if (!c)
        return false;
    if (!s->chunks)
        VALGRIND_CREATE_MEMPOOL (s, 0, 0);
    c->next = s->chunks;
    s->chunks = c;
    VALGRIND_MAKE_MEM_NOACCESS (c->blocks, n * step);
    /* the first block handed out first */
    for (size_t i = n; i-- > 0;)
        s->free[s->nfree++] = c->blocks + i * step;
    s->nblocks += n;
    return true;
}

void *slab_alloc (struct slab *s, size_t size)
{
    if (!s->size)
        s->size = size;
    if (s->nfree == 0 && !grow (s))
        return NULL;
    void *p = s->free[--s->nfree];
    s->free[s->nfree] = NULL; /* so a leak checker sees only its holder */
    VALGRIND_MEMPOOL_ALLOC (s, p, s->size);
    s->in_use++;
    return p;
}

void slab_free (struct slab *s, void *p)
{
    if (!p)
        return;
    VALGRIND_MEMPOOL_FREE (s, p);
    s->free[s->nfree++] = p;
    s->in_use--;
}
#endif

int slab_clear (struct slab *s)
{
    if (s->in_use > 0)
        return -1;
    if (s->chunks)
        VALGRIND_DESTROY_MEMPOOL (s);
    while (s->chunks) {
        struct slab_chunk *c = s->chunks;
        s->chunks = c->next;
        free (c);
    }
    free (s->free);
    *s = (struct slab){0};
    return 0;
}
