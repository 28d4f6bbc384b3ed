/* R's one-line summary (rsummary.h). Written into a strbuf: it is made
 * once per job that starts, where open_memstream and fprintf cost several
 * times the summary itself. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rsummary.h"
#include "strbuf.h"

/* name and ids as Flux writes them: brackets around more than one id */
static void put_ids (struct strbuf *t, const char *name, const char *ids)
{
    bool one = ids[strcspn (ids, ",-")] == '\0';
    strbuf_puts (t, name);
    if (!one)
        strbuf_put (t, "[", 1);
    strbuf_puts (t, ids);
    if (!one)
        strbuf_put (t, "]", 1);
}

static int by_name (const void *a, const void *b)
{
    return strcmp (*(const char *const *)a, *(const char *const *)b);
}

/* core first, then the other children by name, as Flux lists them */
static void put_children (struct strbuf *t, json_t *children)
{
    const char *names[16];
    size_t n = 0;
    const char *key;
    json_t *v;
    const char *core = json_string_value (json_object_get (children, "core"));

    json_object_foreach (children, key, v)
        if (strcmp (key, "core") && json_string_value (v) && n < 16)
            names[n++] = key;
    if (n > 1)
        qsort (names, n, sizeof (names[0]), by_name);
    bool first = true;
    if (core && core[0]) {
        put_ids (t, "core", core);
        first = false;
    }
    for (size_t i = 0; i < n; i++) {
        const char *ids = json_string_value (json_object_get (children, names[i]));
        if (!ids[0])
            continue;
        if (!first)
            strbuf_put (t, ",", 1);
        put_ids (t, names[i], ids);
        first = false;
    }
}

char *rsummary (json_t *R)
{
    json_t *lite = json_object_get (json_object_get (R, "execution"), "R_lite");
    struct strbuf t = {0};
    size_t i;
    json_t *entry;

    if (json_array_size (lite) == 0)
        return NULL;
    json_array_foreach (lite, i, entry) {
        const char *rank = json_string_value (json_object_get (entry, "rank"));
        if (!rank)
            continue;
        if (i > 0)
            strbuf_put (&t, " ", 1);
        put_ids (&t, "rank", rank);
        strbuf_put (&t, "/", 1);
        put_children (&t, json_object_get (entry, "children"));
    }
    return strbuf_take (&t);
}
