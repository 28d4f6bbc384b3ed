/* Private declarations shared by the runtime's source files. */
#ifndef JOBTAP_INTERNAL_H
#define JOBTAP_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <jansson.h>
#include <flux/core.h>

#include "host.h"

#ifdef __cplusplus
extern "C" {
#endif

/* plugin.c */
int plugin_init_builtin (flux_plugin_t *p, flux_plugin_init_f init);
/* flux_plugin_match_handler without touching the plugin's last error. */
bool plugin_has_handler (flux_plugin_t *p, const char *topic);
/* Changes whenever a plugin adds or removes a handler, and when the
 * runtime loads or unloads a plugin (plugin_handlers_changed): what the
 * runtime remembers of which plugins handle a topic is valid while it
 * stays the same.  Never 0. */
extern unsigned plugin_handlers_gen;
void plugin_handlers_changed (void);
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
/* json_vpack_ex, quicker for the usual formats; the same results and
 * errors. */
json_t *plugin_vpack (json_error_t *err, const char *fmt, va_list ap);

/* flux.c */
/* The runtime's flux_t (runtime.h: rt->h): what flux_jobtap_get_flux
 * gives plugins, with its aux and log, and the runtime it belongs to
 * (flux_rpc finds the services there).  NULL h: NULL. */
struct runtime;
flux_t *flux_handle_create (struct runtime *rt);
void flux_handle_destroy (flux_t *h);
struct runtime *flux_handle_runtime (flux_t *h);

/* compact.c: compact JSON text of o (malloc'd), NULL on failure.  Not
 * thread-safe (it remembers shared subtrees' text): under the runtime
 * lock.  compact_memo_clear lets go of what it remembers. */
char *compact_dumps (json_t *o);
/* The same text appended to a growing malloc'd buffer (*data may be
 * NULL), NUL-terminated. -1 (the buffer as it was) on allocation failure. */
int compact_append (json_t *o, char **data, size_t *len, size_t *cap);
void compact_memo_clear (void);

/* toml.cpp: parse a TOML file into a JSON object.  On success *lines is
 * an array holding the source line of each [job-manager] plugins entry,
 * and *table_lines (if not NULL) an object giving the first line of each
 * table under [policy] and [queues] by its dotted name ("queues.debug").
 * On failure returns NULL with "file:line:col: message" in err. */
json_t *toml_file_to_json (const char *path,
                           json_t **lines,
                           json_t **table_lines,
                           jobtap_host_error_t *err);

#ifdef __cplusplus
}
#endif

#endif
