/* plugin.c: what the runtime does with a Flux plugin container beyond the
 * public flux_plugin_* API (include/flux/plugin.h): builtins' init, a
 * handler lookup that leaves the plugin's last error alone, and the
 * generation of the plugins' handlers that dispatch.c's topic cache
 * checks. */
#ifndef JOBTAP_PLUGIN_CONTAINER_H
#define JOBTAP_PLUGIN_CONTAINER_H

#include <stdbool.h>
#include <flux/core.h>

int plugin_init_builtin (flux_plugin_t *p, flux_plugin_init_f init);

/* flux_plugin_match_handler without touching the plugin's last error. */
bool plugin_has_handler (flux_plugin_t *p, const char *topic);

/* Changes whenever a plugin adds or removes a handler, and when the
 * runtime loads or unloads a plugin (plugin_handlers_changed): what the
 * runtime remembers of which plugins handle a topic is valid while it
 * stays the same.  Never 0. */
unsigned plugin_handlers_generation (void);
void plugin_handlers_changed (void);

#endif
