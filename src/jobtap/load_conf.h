/* load_conf: the conf object of `jobtap load PATH KEY=VALUE...`, read as
 * `flux jobtap load` reads it: a VALUE that parses as JSON is that JSON,
 * any other is a string, and a dotted KEY is a path of nested objects
 * (a.b=1 is {"a": {"b": 1}}). */
#ifndef JOBTAP_CLI_LOAD_CONF_H
#define JOBTAP_CLI_LOAD_CONF_H

#include <stddef.h>
#include <jansson.h>

#include "host_error.h"

/* The conf of the n pairs (new reference), or NULL with why in err (a pair
 * without '=', an empty key part, a key under one that is not an object,
 * or out of memory). */
json_t *load_conf_from_pairs (int n,
                              char *const *pairs,
                              jobtap_host_error_t *err);

#endif
