/* slab: blocks of one size carved from larger chunks and reused, for the
 * runtime's object made on every submission (the job): in slurmctld each
 * submission runs in a new thread, whose first malloc of a size takes
 * glibc's arena path (about 450 instructions for a job), while a block
 * off this stack costs a few.
 *
 * Not locked: the caller serializes (the runtime lock).  Chunks are kept
 * until slab_clear.  Built with AddressSanitizer, each block is a plain
 * malloc; under valgrind's memcheck each is a mempool chunk: a block used
 * after slab_free, or never freed, is reported as a heap block would be. */
#ifndef JOBTAP_SLAB_H
#define JOBTAP_SLAB_H

#include <stddef.h>

/* Built with AddressSanitizer: plain malloc and free, so that it sees
 * every block. */
#if defined(__SANITIZE_ADDRESS__)
#define SLAB_PLAIN_MALLOC 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SLAB_PLAIN_MALLOC 1
#endif
#endif

struct slab_chunk;

/* Zeroed, a slab is empty; its block size is the first slab_alloc's. */
struct slab {
    size_t size;      /* a block's bytes */
    void **free;      /* the free blocks, a stack with room for all */
    size_t nfree, nblocks;
    struct slab_chunk *chunks;
    size_t in_use; /* blocks handed out and not freed */
};

/* A block of 'size' bytes (not zeroed; every call on s gives the same
 * size), or NULL out of memory. */
void *slab_alloc (struct slab *s, size_t size);
/* Give p (from slab_alloc on s, or NULL) back. */
void slab_free (struct slab *s, void *p);
/* Free the chunks once no block is in use: 0, the slab empty again; else
 * nothing is freed: -1. */
int slab_clear (struct slab *s);

#endif
