/* plugin_arg.c: the runtime's side of flux_plugin_arg_t (the public API
 * is include/flux/plugin.h): args built from objects directly, read back,
 * and a key built only when a reader may need it. */
#ifndef JOBTAP_PLUGIN_ARG_H
#define JOBTAP_PLUGIN_ARG_H

#include <stdbool.h>
#include <jansson.h>
#include <flux/core.h>

/* Args holding 'in' and 'out' (references stolen; either may be NULL):
 * the runtime's hot paths build objects directly, without formats. */
flux_plugin_arg_t *plugin_arg_create_with (json_t *in, json_t *out);
/* New references to the args' IN and OUT objects (NULL where unset). */
void plugin_arg_objects (flux_plugin_arg_t *args, json_t **in, json_t **out);
/* Make 'key' of the IN args a value built by get(arg) (new reference) the
 * first time a reader may need it: an unpack whose format names the key
 * (or that it cannot tell), or arg_get.  destroy(arg) runs once the value
 * is built or the args are destroyed. */
int plugin_arg_set_lazy (flux_plugin_arg_t *args,
                         const char *key,
                         json_t *(*get) (void *arg),
                         void (*destroy) (void *arg),
                         void *arg);
/* Build the lazy key now (for args handed to a plugin to keep). */
void plugin_arg_resolve (flux_plugin_arg_t *args);
/* Remove 'key' from the IN args if its value is 'v' (the args let go of
 * their reference); true if removed. */
bool plugin_arg_drop (flux_plugin_arg_t *args, const char *key, json_t *v);

#endif
