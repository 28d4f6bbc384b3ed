/* The runtime's reactor: timers (flux_timer_watcher_*, flux_watcher_*,
 * flux_reactor_now), run by one thread of the runtime's own, and which
 * plugin each watcher belongs to.
 *
 * Flux's job manager runs its plugins' watchers from its reactor loop;
 * slurmctld has no loop to lend, so the runtime keeps a thread: started
 * when the first timer is started, stopped and joined by the last
 * jobtap_host_fini, started again if a later init's plugins need it.  It
 * sleeps in ppoll() until the earliest deadline, or until an eventfd
 * wakes it, without the runtime lock; it runs an expired timer's callback
 * with the lock held, as its plugin's code (jt_enter), like any other
 * callback: no current job, the whole Flux API allowed.
 *
 * A watcher belongs to the plugin whose code created it (rt->calling).
 * When that plugin is removed its watchers stop for good
 * (reactor_plugin_gone), and those it did not destroy itself are freed
 * once it has been destroyed (reactor_reap): its code is gone, so they
 * must never fire.
 *
 * The Flux entry points (in reactor.c) take the runtime lock; the
 * functions below are called with it held, except reactor_destroy.
 * Called by host.c (the last fini), loader.c (removing a plugin) and
 * rpc.c (flux_future_then's timeout); calls jtplugin.h, log.h and
 * flux_handle.h (the runtime behind a flux_t). */
#ifndef JOBTAP_REACTOR_H
#define JOBTAP_REACTOR_H

#include <stdbool.h>
#include <flux/core.h>

struct runtime;
struct jt_plugin;

/* rt's reactor, made on first use (its thread waits for the first timer
 * started).  NULL with errno ENOMEM. */
flux_reactor_t *reactor_get (struct runtime *rt);

/* A timer as flux_timer_watcher_create makes it, owned by the plugin
 * whose code runs (its plugin's removal stops it for good), but never
 * freed by reactor_reap: its creator destroys it (a future may outlive
 * its plugin, and keeps its timer). */
flux_watcher_t *reactor_timer_create_kept (flux_reactor_t *r,
                                           flux_watcher_f cb,
                                           void *arg);
/* The plugin w belongs to (NULL: none, or it is gone), and whether it
 * belonged to a plugin that has been removed. */
struct jt_plugin *reactor_watcher_owner (flux_watcher_t *w);
bool reactor_watcher_orphaned (flux_watcher_t *w);

/* jt is being removed: its watchers stop and never start again, and
 * those made from its code from now on are born stopped for good. */
void reactor_plugin_gone (struct runtime *rt, struct jt_plugin *jt);
/* Free removed plugins' watchers, once no removed plugin is left to be
 * destroyed (rt->retired is empty): their destructors may still destroy
 * them until then. */
void reactor_reap (struct runtime *rt);

/* The last jobtap_host_fini: take rt's reactor (NULL if it has none),
 * make its remaining watchers inert (start does nothing, destroy frees)
 * and tell its thread to stop.  Then reactor_destroy, called without the
 * runtime lock (the thread needs it to finish), joins the thread and
 * frees the reactor. */
flux_reactor_t *reactor_detach (struct runtime *rt);
void reactor_destroy (flux_reactor_t *r);

#endif
