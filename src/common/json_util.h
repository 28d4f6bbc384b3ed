/* Small jansson helpers of the runtime's own (header only). */
#ifndef JOBTAP_JSON_UTIL_H
#define JOBTAP_JSON_UTIL_H

#include <jansson.h>

/* Set o[key] = v, stealing v; fails if v is NULL (out of memory).  For
 * the runtime's literal keys, which need no UTF-8 check. */
static inline int obj_set (json_t *o, const char *key, json_t *v)
{
    return json_object_set_new_nocheck (o, key, v);
}

#endif
