/* The loaded jobtap plugins as the runtime keeps them: struct jt_plugin
 * (one per plugin in load order, with its services), finding it from a
 * flux_plugin_t, and calling it.  A plugin unloaded while a callback is
 * running (it may be that plugin's own) is unlinked at once but
 * destroyed only when no callback is running, so no caller walking the
 * plugins, and no plugin returning from its callback, meets freed memory.
 * The runtime also knows whose code runs (rt->calling): what a plugin
 * creates meanwhile (timers, futures' continuations) belongs to it, and
 * dies with it (reactor.h).
 * Called by every module that calls plugins; calls only plugin.c. */
#ifndef JOBTAP_JTPLUGIN_H
#define JOBTAP_JTPLUGIN_H

#include <stdbool.h>
#include <stdint.h>
#include <flux/core.h>

struct runtime;

struct service {
    char *topic;
    uint32_t rolemask;
    flux_msg_handler_f cb;
    void *arg;
    struct service *next;
};

/* Stored in the plugin's aux as "flux::jobtap", so flux_jobtap_* can tell
 * jobtap plugins from others and reach the runtime through them. */
/* How a plugin fares in one pass over every job (priority.c). */
struct pass_count {
    int failures;         /* its callbacks that failed */
    uint64_t first_failed; /* the first job they failed for */
    int skipped;          /* jobs it was not called for, after too many */
    int quiet_lines;      /* its log lines sent to debug level */
};

struct jt_plugin {
    struct runtime *rt;
    flux_plugin_t *p;
    char *list_name;      /* basename or ".builtin" */
    char *path;           /* NULL for builtins */
    char *sort_mode;      /* set_load_sort_order */
    bool removed;         /* loader.c: unloaded, perhaps still running */
    struct service *services;
    struct pass_count pass; /* priority.c: this plugin in the current pass */
    struct jt_plugin *next;
};

/* A plugin whose callbacks fail for job after job in one pass over every
 * job (reprioritize_all) is logged in full for its first few failures,
 * then skipped for the rest of the pass, and summed up in one line at
 * its end (priority.c): a runaway policy costs a bounded time per pass,
 * not one limit per job. */
#define PASS_TOPIC "job.priority.get" /* the calls a pass counts */
#define PASS_LOUD_FAILURES 3
#define PASS_SKIP_FAILURES 10
static inline bool pass_quiet (const struct jt_plugin *jt)
{
    return jt && jt->pass.failures >= PASS_LOUD_FAILURES;
}
/* Whether to leave jt out of this job's call (counted). */
static inline bool pass_skips (struct jt_plugin *jt)
{
    if (jt->pass.failures < PASS_SKIP_FAILURES)
        return false;
    jt->pass.skipped++;
    return true;
}
static inline void pass_failed (struct jt_plugin *jt, uint64_t id)
{
    if (jt->pass.failures++ == 0)
        jt->pass.first_failed = id;
}

/* The jobtap plugin behind p, or NULL (errno kept). */
struct jt_plugin *jt_get (flux_plugin_t *p);
/* The runtime behind p, or NULL if p is not a loaded jobtap plugin. */
struct runtime *jt_runtime (flux_plugin_t *p);
const char *jt_name (flux_plugin_t *p);
/* What the plugin calls itself (flux_plugin_get_name), else list_name. */
const char *jt_internal_name (struct jt_plugin *jt);

bool is_loaded (struct runtime *rt, struct jt_plugin *jt);
/* The loaded plugins in load order (malloc'd, *countp of them). */
struct jt_plugin **jt_snapshot (struct runtime *rt, int *countp);
/* The same in buf when they fit in its cap (every stack call takes one),
 * else malloc'd: the caller frees what is not buf.  NULL if out of
 * memory. */
struct jt_plugin **jt_snapshot_in (struct runtime *rt,
                                   struct jt_plugin **buf,
                                   int cap,
                                   int *countp);

/* While held (nested holds count), retired plugins are not destroyed:
 * a caller walking a snapshot of the plugins holds them. */
void jt_hold_all (struct runtime *rt);
void jt_release_all (struct runtime *rt);
/* Plugin code of jt is about to run (a callback, its init, a service
 * handler, a continuation, a timer; jt NULL: code of no plugin): held as
 * jt_hold_all does, and rt->calling is jt until jt_leave, which
 * takes the value jt_enter returned.  They nest. */
struct jt_plugin *jt_enter (struct runtime *rt, struct jt_plugin *jt);
void jt_leave (struct runtime *rt, struct jt_plugin *prev);
/* flux_plugin_call on jt, between jt_enter and jt_leave. */
int jt_call (struct jt_plugin *jt,
                 const char *topic,
                 flux_plugin_arg_t *args);
/* Unlink jt from the loaded list (if there) and destroy it now, or when
 * the last running callback returns. */
void jt_retire (struct runtime *rt, struct jt_plugin *jt);
/* Destroy a plugin that was never in the list. */
void jt_destroy (struct jt_plugin *jt);

#endif
