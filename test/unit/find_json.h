/* What a JSON value has at a path, answered as a host's ops.jobspec_find
 * answers (JOBTAP_SPEC_*, host.h): the unit tests' finders over a
 * document of their own.  Arrays are left to the tree. */
#ifndef JOBTAP_TEST_FIND_JSON_H
#define JOBTAP_TEST_FIND_JSON_H

#include <jansson.h>

#include "host.h"

static inline int find_in_json (json_t *root,
                                const char *const *path,
                                int depth,
                                json_t **value)
{
    json_t *v = root;

    for (int i = 0; i < depth && v; i++)
        v = json_is_object (v) ? json_object_get (v, path[i]) : NULL;
    if (!v)
        return JOBTAP_SPEC_ABSENT;
    if (json_is_object (v))
        return JOBTAP_SPEC_OBJECT;
    if (json_is_array (v))
        return JOBTAP_SPEC_UNKNOWN;
    *value = json_incref (v);
    return JOBTAP_SPEC_VALUE;
}

/* The same of the JSON text 'source' (len bytes). */
static inline int find_in_json_text (const void *source,
                                     size_t len,
                                     const char *const *path,
                                     int depth,
                                     json_t **value)
{
    json_t *root = json_loadb (source, len, 0, NULL);
    int kind = find_in_json (root, path, depth, value);

    json_decref (root);
    return kind;
}

#endif
