/* R's one-line summary (rsummary.h). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rsummary.h"

/* name and ids as Flux writes them: brackets around more than one id */
static void put_ids (FILE *f, const char *name, const char *ids)
{
    bool one = ids[strcspn (ids, ",-")] == '\0';
    fprintf (f, one ? "%s%s" : "%s[%s]", name, ids);
}

static int by_name (const void *a, const void *b)
{
    return strcmp (*(const char *const *)a, *(const char *const *)b);
}

/* core first, then the other children by name, as Flux lists them */
static void put_children (FILE *f, json_t *children)
{
    const char *names[16];
    size_t n = 0;
    const char *key;
    json_t *v;
    const char *core = json_string_value (json_object_get (children, "core"));

    json_object_foreach (children, key, v)
        if (strcmp (key, "core") && json_string_value (v) && n < 16)
            names[n++] = key;
    qsort (names, n, sizeof (names[0]), by_name);
    bool first = true;
    if (core && core[0]) {
        put_ids (f, "core", core);
        first = false;
    }
    for (size_t i = 0; i < n; i++) {
        const char *ids = json_string_value (json_object_get (children, names[i]));
        if (!ids[0])
            continue;
        if (!first)
            fputc (',', f);
        put_ids (f, names[i], ids);
        first = false;
    }
}

char *rsummary (json_t *R)
{
    json_t *lite = json_object_get (json_object_get (R, "execution"), "R_lite");
    char *out = NULL;
    size_t len = 0;
    size_t i;
    json_t *entry;
    FILE *f;

    if (json_array_size (lite) == 0 || !(f = open_memstream (&out, &len)))
        return NULL;
    json_array_foreach (lite, i, entry) {
        const char *rank = json_string_value (json_object_get (entry, "rank"));
        if (!rank)
            continue;
        if (i > 0)
            fputc (' ', f);
        put_ids (f, "rank", rank);
        fputc ('/', f);
        put_children (f, json_object_get (entry, "children"));
    }
    if (fclose (f) != 0 || len == 0) {
        free (out);
        return NULL;
    }
    return out;
}
