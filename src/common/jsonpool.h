/* jsonpool.c: the small-block pool that serves the runtime's jansson
 * allocations made inside a scope (jobtap_host_json_pool_begin/end,
 * declared in host.h for the adapter); everything else goes to malloc.
 * What it holds is bounded by the address range it reserves (POOL_RANGE,
 * 1 GiB); past it, jansson blocks come from malloc.
 *
 * Callers: plugin.c (the no-plugin-code-in-a-scope rule), the runtime's
 * shutdown (jobtap_json_pool_log_stats) and the unit tests. */
#ifndef JOBTAP_JSONPOOL_H
#define JOBTAP_JSONPOOL_H

#include <stdbool.h>
#include <stddef.h>

/* Scopes open on the calling thread: counted whether the pool is on or
 * off, so the rule below holds in valgrind and sanitizer runs too. */
unsigned json_pool_scope_depth (void) __attribute__ ((visibility ("hidden")));

/* The rule that no plugin code runs inside a scope: a block a plugin made
 * there would come from the pool, and its free() of a json_dumps() string
 * would crash later, far away.  Where the runtime is about to run plugin
 * code (who: the plugin's name, what: the topic or service), builds with
 * assertions (the default debugoptimized, the sanitizer and debug builds;
 * not -Db_ndebug=true) log why at LOG_CRIT and abort inside a scope. */
#ifndef NDEBUG
#define JSON_POOL_ASSERT_OUTSIDE(who, what)                                    \
    do {                                                                       \
        if (json_pool_scope_depth () > 0)                                      \
            json_pool_scope_abort ((who), (what));                             \
    } while (0)
#else
#define JSON_POOL_ASSERT_OUTSIDE(who, what)                                    \
    do {                                                                       \
    } while (0)
#endif
void json_pool_scope_abort (const char *who, const char *what)
    __attribute__ ((noreturn, visibility ("hidden")));

struct json_pool_stats {
    bool on;           /* the pool serves scoped jansson blocks */
    size_t reserved;   /* address range reserved: the bound */
    size_t mapped;     /* bytes made writable: what the pool holds */
    size_t blocks;     /* blocks carved from them */
    size_t in_use;     /* bytes in blocks handed out (as of each
                          thread's last visit, exact for the caller) */
    size_t high_water; /* most bytes in use seen at a visit */
    size_t range_full; /* allocations sent to malloc: the range used up */
};

/* Exported (jobtap_*) for the unit tests. */
void jobtap_json_pool_stats (struct json_pool_stats *st);

/* One log line (runtime_log, LOG_INFO) with the stats: for the runtime's
 * shutdown. */
void jobtap_json_pool_log_stats (void);

#endif
