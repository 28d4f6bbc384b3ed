/* Keys of a queued update that jobtap has changed since (superseded.h). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "superseded.h"

json_t *spec_dotted_get (json_t *o, const char *key)
{
    char *copy = strdup (key), *save = NULL;
    if (!copy)
        return NULL;
    for (char *part = strtok_r (copy, ".", &save); o && part;
         part = strtok_r (NULL, ".", &save))
        o = json_object_get (o, part);
    free (copy);
    return o;
}

/* Equal values; 120 and 120.0 are the same duration. */
static bool same (json_t *a, json_t *b)
{
    if (json_is_number (a) && json_is_number (b))
        return json_number_value (a) == json_number_value (b);
    return json_equal (a, b);
}

static void append_name (char **list, const char *key)
{
    size_t old = *list ? strlen (*list) : 0;
    char *s = realloc (*list, old + strlen (key) + 2);
    if (!s)
        return;
    if (old)
        s[old++] = ',';
    strcpy (s + old, key);
    *list = s;
}

int updates_drop_superseded (json_t *updates, json_t *spec, char **dropped)
{
    const char *key;
    json_t *v, *now;
    void *tmp;
    int n = 0;

    if (dropped)
        *dropped = NULL;
    json_object_foreach_safe (updates, tmp, key, v)
    {
        now = spec_dotted_get (spec, key);
        if (same (now ? now : json_null (), v))
            continue;
        if (dropped)
            append_name (dropped, key);
        json_object_del (updates, key);
        n++;
    }
    return n;
}
