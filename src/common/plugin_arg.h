/* plugin_arg.c: the runtime's side of flux_plugin_arg_t (the public API
 * is include/flux/plugin.h): args built from objects directly, read back,
 * and what of IN is built only when a reader needs it. */
#ifndef JOBTAP_PLUGIN_ARG_H
#define JOBTAP_PLUGIN_ARG_H

#include <stdbool.h>
#include <jansson.h>
#include <flux/core.h>

struct jobtap_spec_scalar; /* host.h */

/* Args holding 'in' and 'out' (references stolen; either may be NULL):
 * the runtime's hot paths build objects directly, without formats. */
flux_plugin_arg_t *plugin_arg_create_with (json_t *in, json_t *out);
/* Empty the args for use again, as new args of empty IN and OUT objects:
 * false (the args as they were) when something else holds IN or OUT, or
 * either is not an object; the caller then destroys them. */
bool plugin_arg_empty (flux_plugin_arg_t *args);
/* The IN and OUT objects of args made by plugin_arg_create_with or
 * emptied (borrowed), for the runtime to fill. */
json_t *plugin_arg_in (flux_plugin_arg_t *args);
/* Replace OUT with 'out' (stolen). */
void plugin_arg_set_out (flux_plugin_arg_t *args, json_t *out);
/* New references to the args' IN and OUT objects (NULL where unset), IN
 * with the members of a lazy fill (not its key). */
void plugin_arg_objects (flux_plugin_arg_t *args, json_t **in, json_t **out);

/* What of the IN args is built only when a reader needs it (the runtime's
 * args of a job's callback, plugin_arg_set_lazy): 'key' (the jobspec),
 * built by get(arg) (a new reference) when a reader may want it (an
 * unpack whose format names the key, or that it cannot tell, or arg_get);
 * the members fill(arg, in) puts in IN (the job's fields; it leaves those
 * IN has), put there when a reader needs IN as an object; and with find,
 * an unpack of members find tells (as ops.jobspec_find, host.h, with
 * paths from IN's top) reads them without either.  fill and find may be
 * NULL; destroy(arg) runs once key is built or the args are destroyed. */
struct plugin_arg_lazy {
    const char *key;
    json_t *(*get) (void *arg);
    void (*fill) (void *arg, json_t *in);
    int (*find) (void *arg, const char *const *path, int depth,
                 json_t **value, struct jobtap_spec_scalar *scalar);
    void (*destroy) (void *arg);
};
int plugin_arg_set_lazy (flux_plugin_arg_t *args,
                         const struct plugin_arg_lazy *lazy,
                         void *arg);
/* Build the lazy key now, and fill IN (for args handed to a plugin to
 * keep). */
void plugin_arg_resolve (flux_plugin_arg_t *args);
/* Remove 'key' from the IN args if its value is 'v' (the args let go of
 * their reference); true if removed. */
bool plugin_arg_drop (flux_plugin_arg_t *args, const char *key, json_t *v);

#endif
