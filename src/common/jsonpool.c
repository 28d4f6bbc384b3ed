/* A small-block pool for the jansson trees the runtime builds per job.
 *
 * About half of what the runtime spent per submission was malloc and free
 * on jansson's behalf: ~175 blocks of 16 to 256 bytes per job (jobspec
 * tree, callback args, event entries), built on one slurmctld thread and
 * freed on another, so glibc's per-thread caches miss and every call takes
 * the arena's slow path.  Here each block size class has free lists, and a
 * block costs a pop or a push on the calling thread's own list.
 *
 * Jansson's allocator hooks are process-wide, and code outside the runtime
 * (plugins, libjwt in slurmctld) rightly frees json_dumps() strings with
 * free().  So:
 * - the pool serves only allocations made inside a scope
 *   (jobtap_host_json_pool_begin/end), which the runtime opens around code
 *   that only builds or parses trees, never around plugin code (builds
 *   with assertions abort if it does: JSON_POOL_ASSERT_OUTSIDE); all other
 *   jansson allocations go to malloc;
 * - blocks come from one reserved address range, carved in pages of one
 *   size class; the free hook gives any pointer outside it to free();
 * - every thread may allocate and free; each keeps a few free blocks of
 *   its own (struct cache) and visits the shared lists, under a spin lock,
 *   once per POOL_BATCH blocks (a mutex cost more than the work it
 *   guarded; taking the lock for every block cost ~200 atomic exchanges
 *   per job, on a cache line every slurmctld thread wrote);
 * - the library is linked with -z nodelete (meson.build), so the hooks
 *   stay valid after slurmctld unloads the plugins that loaded us.
 * Memory freed to the pool is reused for jansson blocks, not given back to
 * the system; the range is address space only, made writable page by page.
 *
 * It is off unless slurmctld's environment has SLURM_JOBTAP_JSON_POOL=1
 * (any value but 0): with the few trees the runtime now builds per job,
 * a short-lived slurmctld RPC thread's own cache (its refill, its
 * hand-back and the key's destructor when the thread exits) costs more
 * than malloc would (docs/performance.md). */
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <syslog.h>

#include <jansson.h>

#include "host.h"
#include "jsonpool.h"
#include "log.h"

#define POOL_RANGE (1UL << 30) /* address space reserved; not memory */
#define POOL_PAGE (1UL << 16)  /* made writable and carved for one class */
#define POOL_GRAIN 16          /* class sizes: 16, 32, ... POOL_MAX */
#define POOL_MAX 256
#define POOL_CLASSES (POOL_MAX / POOL_GRAIN)
#define POOL_BATCH 32 /* blocks a thread takes or gives back per lock */
#define POOL_PARTIALS 8 /* part-used lists kept whole per class */

/* A batch is a NULL-terminated list of POOL_BATCH free blocks linked
 * through their first word; the shared stack of batches links batch heads
 * through their second word (every block has at least two). */
#define NEXT(b) (((void **)(b))[0])
#define NEXT_BATCH(b) (((void **)(b))[1])

static struct {
    uintptr_t base, end;     /* the reserved range; 0, 0 when off */
    uintptr_t next_page;     /* first page not yet carved */
    uint8_t page_class[POOL_RANGE / POOL_PAGE];
    void *batches[POOL_CLASSES]; /* full batches */
    /* What exiting threads leave: their part-used hot lists, kept whole
     * (a slurmctld RPC thread lives for one submission and leaves one per
     * class it used), and single blocks once those slots are taken. */
    struct partial {
        void *head;
        unsigned n;
    } partial[POOL_CLASSES][POOL_PARTIALS];
    unsigned n_partial[POOL_CLASSES];
    void *loose[POOL_CLASSES];
    uintptr_t carve[POOL_CLASSES], carve_end[POOL_CLASSES];
    size_t in_use; /* bytes in blocks handed out, as of each thread's last
                      visit (the thread's own change since is in cache) */
    size_t high_water; /* most in_use seen at a visit */
    size_t blocks;     /* blocks carved */
    size_t range_full; /* allocations sent to malloc, the range used up */
    pthread_key_t exit_key; /* runs cache_flush when a thread exits */
    int locked;
} pool;

/* Each thread's own free blocks, so a block costs a pop or a push without
 * the lock: per class a hot list (up to a batch) and at most one full
 * batch behind it.  Threads take whole batches from the shared stack and
 * give whole batches back, so the lock is taken once per POOL_BATCH
 * blocks; slurmctld's RPC threads allocate and our agent frees, and an
 * exiting thread gives everything back.  Reached through TLS descriptors
 * (meson.build): initial-exec would be as quick but can make dlopen of the
 * plugin fail when the process has no static TLS to spare. */
struct cache {
    void *hot[POOL_CLASSES];
    unsigned n_hot[POOL_CLASSES];
    void *full[POOL_CLASSES];
    ptrdiff_t in_use; /* bytes handed out minus freed, not yet in pool */
    unsigned scope_depth; /* scopes open on this thread */
    bool armed;           /* exit_key set: cache_flush runs at exit */
};
/* Per thread: jansson calls its allocator hooks with no context. */
static __thread struct cache cache;

static void pool_lock (void)
{
    while (__atomic_exchange_n (&pool.locked, 1, __ATOMIC_ACQUIRE)) {
        while (__atomic_load_n (&pool.locked, __ATOMIC_RELAXED))
            sched_yield (); /* the holder was preempted: let it run */
    }
}

static void pool_unlock (void)
{
    __atomic_store_n (&pool.locked, 0, __ATOMIC_RELEASE);
}

/* Lock the pool for thread cache c, settling c's count of bytes in use. */
static void pool_visit (struct cache *c)
{
    pool_lock ();
    pool.in_use += c->in_use;
    c->in_use = 0;
    if (pool.in_use > pool.high_water)
        pool.high_water = pool.in_use;
}

/* A full batch of class cls onto the shared stack; pool locked. */
static void batch_push (unsigned cls, void *batch)
{
    NEXT_BATCH (batch) = pool.batches[cls];
    pool.batches[cls] = batch;
}

static size_t class_size (unsigned cls)
{
    return (cls + 1) * POOL_GRAIN;
}

/* A fresh page for class cls; pool locked. */
static int new_page (unsigned cls)
{
    uintptr_t page = pool.next_page;

    if (page + POOL_PAGE > pool.end
        || mprotect ((void *)page, POOL_PAGE, PROT_READ | PROT_WRITE) < 0)
        return -1;
    pool.next_page += POOL_PAGE;
    pool.page_class[(page - pool.base) / POOL_PAGE] = cls;
    pool.carve[cls] = page;
    pool.carve_end[cls] = page + POOL_PAGE;
    return 0;
}

/* Make sure this thread gives its blocks back when it exits. */
static void cache_arm (struct cache *c)
{
    if (!c->armed) {
        c->armed = true;
        pthread_setspecific (pool.exit_key, c);
    }
}

/* Fill c's empty hot list of class cls from the pool: a full batch, else
 * a part-used list, else loose blocks, else freshly carved ones.  Returns
 * the number taken, 0 when the range is used up. */
static unsigned cache_refill (struct cache *c, unsigned cls)
{
    size_t size = class_size (cls);
    void *head = NULL;
    unsigned n = 0;

    cache_arm (c);
    pool_visit (c);
    if ((head = pool.batches[cls])) {
        pool.batches[cls] = NEXT_BATCH (head);
        n = POOL_BATCH;
    }
    else if (pool.n_partial[cls] > 0) {
        struct partial *pl = &pool.partial[cls][--pool.n_partial[cls]];
        head = pl->head;
        n = pl->n;
    }
    else {
        while (n < POOL_BATCH && pool.loose[cls]) {
            void *b = pool.loose[cls];
            pool.loose[cls] = NEXT (b);
            NEXT (b) = head;
            head = b;
            n++;
        }
        while (n < POOL_BATCH
               && (pool.carve[cls] + size <= pool.carve_end[cls]
                   || new_page (cls) == 0)) {
            void *b = (void *)pool.carve[cls];
            pool.carve[cls] += size;
            pool.blocks++;
            NEXT (b) = head;
            head = b;
            n++;
        }
    }
    pool_unlock ();
    c->hot[cls] = head;
    c->n_hot[cls] = n;
    return n;
}

/* Give a full batch of class cls back to the pool. */
static void pool_put_batch (struct cache *c, unsigned cls, void *batch)
{
    pool_visit (c);
    batch_push (cls, batch);
    pool_unlock ();
}

/* At thread exit (pthread key destructor): everything back to the pool.
 * A later free on this thread arms the key again, and pthreads calls
 * this again. */
static void cache_flush (void *arg)
{
    struct cache *c = arg;

    pool_visit (c);
    for (unsigned cls = 0; cls < POOL_CLASSES; cls++) {
        if (c->full[cls]) {
            batch_push (cls, c->full[cls]);
            c->full[cls] = NULL;
        }
        if (c->hot[cls] && pool.n_partial[cls] < POOL_PARTIALS) {
            struct partial *pl = &pool.partial[cls][pool.n_partial[cls]++];
            pl->head = c->hot[cls];
            pl->n = c->n_hot[cls];
            c->hot[cls] = NULL;
        }
        while (c->hot[cls]) {
            void *b = c->hot[cls];
            c->hot[cls] = NEXT (b);
            NEXT (b) = pool.loose[cls];
            pool.loose[cls] = b;
        }
        c->n_hot[cls] = 0;
    }
    pool_unlock ();
    c->armed = false;
}

/* A block from c's hot list of class cls, which has one. */
static inline void *hot_pop (struct cache *c, unsigned cls)
{
    void *p = c->hot[cls];

    c->hot[cls] = NEXT (p);
    c->n_hot[cls]--;
    c->in_use += class_size (cls);
    return p;
}

/* Block ptr onto c's hot list of class cls, which has room. */
static inline void hot_push (struct cache *c, unsigned cls, void *ptr)
{
    NEXT (ptr) = c->hot[cls];
    c->hot[cls] = ptr;
    c->n_hot[cls]++;
    c->in_use -= class_size (cls);
}

/* pool_malloc when this thread's hot list of class cls is empty. */
__attribute__ ((noinline)) static void *malloc_refill (struct cache *c,
                                                      unsigned cls,
                                                      size_t size)
{
    if (c->full[cls]) {
        c->hot[cls] = c->full[cls];
        c->n_hot[cls] = POOL_BATCH;
        c->full[cls] = NULL;
    }
    else if (!cache_refill (c, cls)) {
        __atomic_add_fetch (&pool.range_full, 1, __ATOMIC_RELAXED);
        return malloc (size); /* range used up: libc from here on */
    }
    return hot_pop (c, cls);
}

static void *pool_malloc (size_t size)
{
    struct cache *c = &cache;
    unsigned cls;

    if (!c->scope_depth || size > POOL_MAX)
        return malloc (size);
    cls = size ? (size - 1) / POOL_GRAIN : 0;
    if (__builtin_expect (!c->hot[cls], 0))
        return malloc_refill (c, cls, size);
    return hot_pop (c, cls);
}

/* pool_free when this thread's hot list of class cls is empty (the thread
 * may hold blocks from now on) or full (it becomes the full batch, and the
 * one there goes back to the pool). */
__attribute__ ((noinline)) static void free_spill (struct cache *c,
                                                   unsigned cls, void *ptr)
{
    if (c->n_hot[cls] == POOL_BATCH) {
        if (c->full[cls])
            pool_put_batch (c, cls, c->full[cls]);
        c->full[cls] = c->hot[cls];
        c->hot[cls] = NULL;
        c->n_hot[cls] = 0;
    }
    cache_arm (c);
    hot_push (c, cls, ptr);
}

static void pool_free (void *ptr)
{
    struct cache *c = &cache;
    uintptr_t p = (uintptr_t)ptr;
    unsigned cls, n;

    if (p < pool.base || p >= pool.end) {
        free (ptr);
        return;
    }
    cls = pool.page_class[(p - pool.base) / POOL_PAGE];
    n = c->n_hot[cls];
    if (__builtin_expect (n == 0 || n == POOL_BATCH, 0))
        free_spill (c, cls, ptr);
    else
        hot_push (c, cls, ptr);
}

static bool pool_wanted (void)
{
    const char *env = getenv ("SLURM_JOBTAP_JSON_POOL");

    return env && *env && strcmp (env, "0") != 0;
}

/* Runs when the library is loaded, before any of its jansson calls. */
__attribute__ ((constructor)) static void pool_install (void)
{
    void *range;
    json_malloc_t m;
    json_free_t f;

    json_get_alloc_funcs (&m, &f);
    if (!pool_wanted () || m != malloc || f != free)
        return; /* off, or someone else's hooks: leave them be */
    range = mmap (NULL, POOL_RANGE, PROT_NONE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (range == MAP_FAILED)
        return; /* plain malloc, as without the pool */
    if (pthread_key_create (&pool.exit_key, cache_flush) != 0) {
        munmap (range, POOL_RANGE);
        return;
    }
    pool.base = pool.next_page = (uintptr_t)range;
    pool.end = pool.base + POOL_RANGE;
    json_set_alloc_funcs (pool_malloc, pool_free);
}

size_t jobtap_host_json_pool_bytes (void)
{
    size_t n;

    pool_lock ();
    n = pool.in_use + cache.in_use;
    pool_unlock ();
    return n;
}

void jobtap_host_json_pool_begin (void)
{
    cache.scope_depth++;
}

void jobtap_host_json_pool_end (void)
{
    if (cache.scope_depth > 0) /* an unmatched end must not open every scope */
        cache.scope_depth--;
}

unsigned json_pool_scope_depth (void)
{
    return cache.scope_depth;
}

void json_pool_scope_abort (const char *who, const char *what)
{
    runtime_log (LOG_CRIT,
                 "%s: %s called inside a jansson pool scope: plugin code "
                 "must never run in one (aborting)",
                 who ? who : "plugin", what ? what : "callback");
    abort ();
}

void jobtap_json_pool_stats (struct json_pool_stats *st)
{
    memset (st, 0, sizeof (*st));
    if (!pool.base)
        return;
    pool_lock ();
    st->on = true;
    st->reserved = POOL_RANGE;
    st->mapped = pool.next_page - pool.base;
    st->blocks = pool.blocks;
    st->in_use = pool.in_use + cache.in_use;
    st->high_water = pool.high_water > st->in_use ? pool.high_water
                                                  : st->in_use;
    st->range_full = __atomic_load_n (&pool.range_full, __ATOMIC_RELAXED);
    pool_unlock ();
}

void jobtap_json_pool_log_stats (void)
{
    struct json_pool_stats st;

    jobtap_json_pool_stats (&st);
    if (!st.on) {
        runtime_log (LOG_INFO, "jansson pool: off");
        return;
    }
    runtime_log (LOG_INFO,
                 "jansson pool: holds %zu KiB (%zu blocks) of %zu MiB "
                 "reserved; %zu KiB in use, high-water %zu KiB; %zu "
                 "allocations past the range",
                 st.mapped >> 10, st.blocks, st.reserved >> 20,
                 st.in_use >> 10, st.high_water >> 10, st.range_full);
}
