/* Loading and removing jobtap plugins: builtins, C plugins (DSOs) and Lua
 * policies (through the Lua host plugin), each given the instance config
 * (conf.update) and then the jobs that already exist (job.create, job.new
 * and DEPEND's callbacks on it alone, then a reprioritize).  Called by
 * jobtap_conf.c, host.c and restore.c; calls jtplugin.c, event.c, priority.c,
 * dispatch.c, job.c and reactor.c (a removed plugin's timers). */
#ifndef JOBTAP_PLUGINS_H
#define JOBTAP_PLUGINS_H

#include <stddef.h>
#include <jansson.h>

#include "host.h"

struct runtime;
struct jt_plugin;
struct job;

/* Load the builtins (.priority-default, .dependency-slurm). */
int loader_load_builtins (struct runtime *rt, jobtap_host_error_t *err);
/* Load 'name': a builtin ".name", a path, or a name found in 'dir' (may
 * be NULL) then the install search dir; 'conf' its own conf (object or
 * NULL).  Appended to the list (load order is call order). */
struct jt_plugin *loader_load (struct runtime *rt,
                               const char *name,
                               json_t *conf,
                               const char *dir,
                               jobtap_host_error_t *err);
/* Remove plugins by name, glob, or "all" (all but builtins). */
int loader_remove (struct runtime *rt,
                   const char *arg,
                   jobtap_host_error_t *err);
void loader_unload_all (struct runtime *rt);
struct jt_plugin *loader_find (struct runtime *rt, const char *list_name);
/* conf.update on one plugin; its rejection in err. */
int conf_update (struct jt_plugin *jt,
                 json_t *config,
                 jobtap_host_error_t *err);

/* job.create then job.new on jt alone (results ignored) for a job that
 * existed before the plugin saw it.  The caller makes the job current. */
void create_and_new_on (struct jt_plugin *jt, struct job *job);
/* Order 'n' items of 'size' at 'base' by jt's load sort order: by state
 * ('up'), by state descending ('down'), or as they are. */
void sort_for_plugin (struct jt_plugin *jt,
                      void *base,
                      size_t n,
                      size_t size,
                      int (*up) (const void *, const void *),
                      int (*down) (const void *, const void *));

#endif
