/* toml: jobtap.conf's TOML read into JSON (toml++), with where each
 * part was in the file.  The one TOML reader of the project: the runtime
 * (conf.c) and the jobtap command (site_conf.c) both read jobtap.conf
 * through it.  A leaf: jansson and toml++ only. */
#ifndef JOBTAP_TOML_H
#define JOBTAP_TOML_H

#include <stddef.h>
#include <jansson.h>

#include "host_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Parse a TOML file into a JSON object.  On success *lines (if not NULL)
 * is an array holding the source line of each [job-manager] plugins
 * entry, and *table_lines (if not NULL) an object giving the first line
 * of each table under [policy] and [queues] by its dotted name
 * ("queues.debug").  On failure returns NULL with "file:line:col:
 * message" in err and errno set. */
json_t *toml_file_to_json (const char *path,
                           json_t **lines,
                           json_t **table_lines,
                           jobtap_host_error_t *err);

#ifdef __cplusplus
}
#endif

#endif
