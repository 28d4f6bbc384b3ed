/* What a JSON value has at a path, answered as a host's ops.jobspec_find
 * answers (JOBTAP_SPEC_*, host.h): the unit tests' finders over a
 * document of their own (arrays are left to the tree), and the recipe
 * the tests' hosts give for a jobspec (its text). */
#ifndef JOBTAP_TEST_FIND_JSON_H
#define JOBTAP_TEST_FIND_JSON_H

#include <jansson.h>

#include "host.h"

/* With 'scalar' not NULL, strings and numbers are told as scalars (a
 * string borrowed from root). */
static inline int find_in_json (json_t *root,
                                const char *const *path,
                                int depth,
                                json_t **value,
                                struct jobtap_spec_scalar *scalar)
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
    if (scalar && (json_is_string (v) || json_is_number (v))) {
        *scalar = (struct jobtap_spec_scalar){
            .type = json_typeof (v),
            .string = json_string_value (v),
            .integer = json_integer_value (v),
            .real = json_real_value (v),
        };
        return JOBTAP_SPEC_SCALAR;
    }
    *value = json_incref (v);
    return JOBTAP_SPEC_VALUE;
}

/* The same of the JSON text 'source' (len bytes); the document read is
 * kept until the next call, for the strings of the scalars told. */
static inline int find_in_json_text (const void *source,
                                     size_t len,
                                     const char *const *path,
                                     int depth,
                                     json_t **value,
                                     struct jobtap_spec_scalar *scalar)
{
    static json_t *last;
    json_decref (last);
    last = json_loadb (source, len, 0, NULL);
    return find_in_json (last, path, depth, value, scalar);
}

/* A test host's recipe for a jobspec: the jobspec's own text, made
 * again by parsing it (ops.jobspec_rebuild) and its members told from it
 * (ops.jobspec_find); recipe_rebuilds and recipe_finds count the calls. */
static int recipe_rebuilds, recipe_finds;

static inline json_t *recipe_rebuild (const void *source,
                                      size_t len,
                                      void *arg)
{
    (void)arg;
    recipe_rebuilds++;
    return json_loadb (source, len, 0, NULL);
}

static inline int recipe_find (const void *source,
                               size_t len,
                               const char *const *path,
                               int depth,
                               json_t **value,
                               struct jobtap_spec_scalar *scalar,
                               void *arg)
{
    (void)arg;
    recipe_finds++;
    return find_in_json_text (source, len, path, depth, value, scalar);
}

#endif
