/* R's one-line summary (rsummary.h). Written into a buffer of its own:
 * it is made once per job that starts, where open_memstream and fprintf
 * cost several times the summary itself. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rsummary.h"

/* Growing text; failed says a write did not fit (out of memory). */
struct text {
    char *data;
    size_t len, cap;
    bool failed;
};

static void put (struct text *t, const char *s, size_t n)
{
    if (t->failed)
        return;
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 64;
        while (t->len + n + 1 > cap)
            cap *= 2;
        char *data = realloc (t->data, cap);
        if (!data) {
            t->failed = true;
            return;
        }
        t->data = data;
        t->cap = cap;
    }
    memcpy (t->data + t->len, s, n);
    t->len += n;
    t->data[t->len] = '\0';
}

static void puts_text (struct text *t, const char *s)
{
    put (t, s, strlen (s));
}

/* name and ids as Flux writes them: brackets around more than one id */
static void put_ids (struct text *t, const char *name, const char *ids)
{
    bool one = ids[strcspn (ids, ",-")] == '\0';
    puts_text (t, name);
    if (!one)
        put (t, "[", 1);
    puts_text (t, ids);
    if (!one)
        put (t, "]", 1);
}

static int by_name (const void *a, const void *b)
{
    return strcmp (*(const char *const *)a, *(const char *const *)b);
}

/* core first, then the other children by name, as Flux lists them */
static void put_children (struct text *t, json_t *children)
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
            put (t, ",", 1);
        put_ids (t, names[i], ids);
        first = false;
    }
}

char *rsummary (json_t *R)
{
    json_t *lite = json_object_get (json_object_get (R, "execution"), "R_lite");
    struct text t = {0};
    size_t i;
    json_t *entry;

    if (json_array_size (lite) == 0)
        return NULL;
    json_array_foreach (lite, i, entry) {
        const char *rank = json_string_value (json_object_get (entry, "rank"));
        if (!rank)
            continue;
        if (i > 0)
            put (&t, " ", 1);
        put_ids (&t, "rank", rank);
        put (&t, "/", 1);
        put_children (&t, json_object_get (entry, "children"));
    }
    if (t.failed || t.len == 0) {
        free (t.data);
        return NULL;
    }
    return t.data;
}
