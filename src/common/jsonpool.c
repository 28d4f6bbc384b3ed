/* A small-block pool for the jansson trees the runtime builds per job.
 *
 * About half of what the runtime spent per submission was malloc and free
 * on jansson's behalf: ~175 blocks of 16 to 256 bytes per job (jobspec
 * tree, callback args, event entries), built on one slurmctld thread and
 * freed on another, so glibc's per-thread caches miss and every call takes
 * the arena's slow path.  Here each block size class has a free list, and a
 * block costs a pop or a push.
 *
 * Jansson's allocator hooks are process-wide, and code outside the runtime
 * (plugins, libjwt in slurmctld) rightly frees json_dumps() strings with
 * free().  So:
 * - the pool serves only allocations made inside a scope
 *   (jobtap_host_json_pool_begin/end), which the runtime opens around code
 *   that only builds or parses trees, never around plugin code; all other
 *   jansson allocations go to malloc;
 * - blocks come from one reserved address range, carved in pages of one
 *   size class; the free hook gives any pointer outside it to free();
 * - every thread may allocate and free; a spin lock guards the lists (a
 *   pop or push: a mutex cost more than the work it guarded);
 * - the library is linked with -z nodelete (meson.build), so the hooks
 *   stay valid after slurmctld unloads the plugins that loaded us.
 * Memory freed to the pool is reused for jansson blocks, not given back to
 * the system; the range is address space only, made writable page by page.
 *
 * SLURM_JOBTAP_JSON_POOL=0 turns it off (=1 forces it on).  It is off by
 * default under valgrind and in sanitizer builds, which must see each
 * block to find leaks and stray accesses; profiles under callgrind set 1. */
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <jansson.h>

#include "host.h"

#ifdef HAVE_VALGRIND_H
#include <valgrind/valgrind.h>
#else
#define RUNNING_ON_VALGRIND 0
#endif

#define POOL_RANGE (1UL << 30) /* address space reserved; not memory */
#define POOL_PAGE (1UL << 16)  /* made writable and carved for one class */
#define POOL_GRAIN 16          /* class sizes: 16, 32, ... POOL_MAX */
#define POOL_MAX 256
#define POOL_CLASSES (POOL_MAX / POOL_GRAIN)

static struct {
    uintptr_t base, end;     /* the reserved range; 0, 0 when off */
    uintptr_t next_page;     /* first page not yet carved */
    uint8_t page_class[POOL_RANGE / POOL_PAGE];
    void *free_list[POOL_CLASSES];
    uintptr_t carve[POOL_CLASSES], carve_end[POOL_CLASSES];
    size_t in_use; /* bytes in blocks handed out */
    int locked;
} pool;

/* Scopes open on this thread.  The default TLS model: initial-exec would
 * save a call per scope but can make dlopen of the plugin fail when the
 * process has no static TLS to spare. */
static __thread unsigned scope_depth;

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

static void *pool_malloc (size_t size)
{
    unsigned cls;
    void *p = NULL;

    if (!scope_depth || size > POOL_MAX)
        return malloc (size);
    cls = size ? (size - 1) / POOL_GRAIN : 0;
    pool_lock ();
    if ((p = pool.free_list[cls]))
        pool.free_list[cls] = *(void **)p;
    else if (pool.carve[cls] + class_size (cls) <= pool.carve_end[cls]
             || new_page (cls) == 0) {
        p = (void *)pool.carve[cls];
        pool.carve[cls] += class_size (cls);
    }
    if (p)
        pool.in_use += class_size (cls);
    pool_unlock ();
    return p ? p : malloc (size); /* range used up: libc from here on */
}

static void pool_free (void *ptr)
{
    uintptr_t p = (uintptr_t)ptr;
    unsigned cls;

    if (p < pool.base || p >= pool.end) {
        free (ptr);
        return;
    }
    cls = pool.page_class[(p - pool.base) / POOL_PAGE];
    pool_lock ();
    *(void **)ptr = pool.free_list[cls];
    pool.free_list[cls] = ptr;
    pool.in_use -= class_size (cls);
    pool_unlock ();
}

static bool pool_wanted (void)
{
    const char *env = getenv ("SLURM_JOBTAP_JSON_POOL");

    if (env && *env)
        return strcmp (env, "0") != 0;
#if defined(__SANITIZE_ADDRESS__)
    return false;
#else
    return !RUNNING_ON_VALGRIND;
#endif
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
    pool.base = pool.next_page = (uintptr_t)range;
    pool.end = pool.base + POOL_RANGE;
    json_set_alloc_funcs (pool_malloc, pool_free);
}

size_t jobtap_host_json_pool_bytes (void)
{
    size_t n;

    pool_lock ();
    n = pool.in_use;
    pool_unlock ();
    return n;
}

void jobtap_host_json_pool_begin (void)
{
    scope_depth++;
}

void jobtap_host_json_pool_end (void)
{
    if (scope_depth > 0) /* an unmatched end must not open every scope */
        scope_depth--;
}
