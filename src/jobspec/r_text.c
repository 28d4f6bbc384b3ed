/* r_text: the text R is written in, RFC 22 idsets and RFC 29 hostlists.
 *
 * Slurm-free and jansson-only, like the rest of src/jobspec; the forms
 * are those flux-core writes (idsets without brackets, hostlists in the
 * order given). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "r_text.h"

/* Every range of an idset fits "4294967295-4294967295,". */
enum { IDSET_RANGE_MAX = 22 };

/* A numeric suffix has at most this many digits, so that it fits an
 * unsigned long long; longer ones are left uncompressed. */
enum { HOST_DIGITS_MAX = 18 };

static int cmp_u32 (const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

char *idset_text_sorted (const uint32_t *ids, size_t n)
{
    char *text = malloc (n * IDSET_RANGE_MAX + 1);
    char *p = text;

    if (!text)
        return NULL;
    *p = '\0';
    for (size_t i = 0; i < n;) {
        uint32_t lo = ids[i], hi = lo;
        /* hi + 1 wraps at UINT32_MAX, where only a repeat can follow */
        while (++i < n && (ids[i] == hi || ids[i] == hi + 1))
            hi = ids[i];
        p += sprintf (p, "%s%u", p == text ? "" : ",", lo);
        if (hi > lo)
            p += sprintf (p, "-%u", hi);
    }
    return text;
}

char *idset_text (const uint32_t *ids, size_t n)
{
    uint32_t *sorted;
    char *text;

    if (!ids) {
        if (!(text = malloc (IDSET_RANGE_MAX + 1)))
            return NULL;
        if (n == 0)
            text[0] = '\0';
        else
            sprintf (text, n == 1 ? "0" : "0-%u", (uint32_t)(n - 1));
        return text;
    }
    /* + 1: malloc (0) may be NULL */
    if (!(sorted = malloc (n * sizeof (*sorted) + 1)))
        return NULL;
    memcpy (sorted, ids, n * sizeof (*sorted));
    qsort (sorted, n, sizeof (*sorted), cmp_u32);
    text = idset_text_sorted (sorted, n);
    free (sorted);
    return text;
}

/* A hostname as RFC 29 splits it: a prefix and a numeric suffix. */
struct host_suffix {
    size_t prefix_len;
    unsigned long long num;
    int width;   /* digits in the suffix; 0: no suffix, never compressed */
    bool padded; /* a leading zero, so the width is part of the name */
};

static void host_suffix_parse (const char *name, struct host_suffix *h)
{
    size_t len = strlen (name), start = len;

    while (start > 0 && name[start - 1] >= '0' && name[start - 1] <= '9')
        start--;
    memset (h, 0, sizeof (*h));
    h->prefix_len = len;
    /* an all-digit name has no prefix to share */
    if (start == 0 || start == len || len - start > HOST_DIGITS_MAX)
        return;
    h->prefix_len = start;
    h->width = (int)(len - start);
    h->padded = name[start] == '0' && h->width > 1;
    h->num = strtoull (name + start, NULL, 10);
}

/* Hosts written as one "prefix[a-b,c]" string: they share the prefix,
 * their numbers rise (so decoding gives back rank order), and one
 * "%0*llu" prints every suffix back as it was. */
struct host_run {
    const char *first;
    size_t prefix_len;
    unsigned long long last;
    int fixed_width; /* a padded member fixes the width; 0: none yet */
    int same_width;  /* the width every member has, or -1 */
};

static void host_run_start (struct host_run *run,
                            const char *name,
                            const struct host_suffix *h)
{
    run->first = name;
    run->prefix_len = h->prefix_len;
    run->last = h->num;
    run->fixed_width = h->padded ? h->width : 0;
    run->same_width = h->width;
}

/* "n09" joins "n08" (both %02), "n10" joins "n9" (both %llu), "n010"
 * joins neither "n9" nor "n10": its zero would be lost or invented. */
static bool host_run_join (struct host_run *run,
                           const char *name,
                           const struct host_suffix *h)
{
    if (h->width == 0 || h->prefix_len != run->prefix_len ||
        memcmp (name, run->first, run->prefix_len) != 0 || h->num <= run->last)
        return false;
    if (run->fixed_width && h->width != run->fixed_width)
        return false;
    if (!run->fixed_width && h->padded) {
        if (h->width != run->same_width)
            return false;
        run->fixed_width = h->width;
    }
    if (h->width != run->same_width)
        run->same_width = -1;
    run->last = h->num;
    return true;
}

/* "prefix[a-b,c]" for a run of count (>= 2) hosts.  malloc'd, or NULL. */
static char *host_run_text (const struct host_run *run,
                            const struct host_suffix *sfx,
                            size_t count)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream (&text, &len);

    if (!f)
        return NULL;
    fprintf (f, "%.*s[", (int)run->prefix_len, run->first);
    for (size_t i = 0; i < count;) {
        unsigned long long lo = sfx[i].num, hi = lo;
        bool first = i == 0;
        while (++i < count && sfx[i].num == hi + 1)
            hi = sfx[i].num;
        fprintf (f, "%s%0*llu", first ? "" : ",", run->fixed_width, lo);
        if (hi > lo)
            fprintf (f, "-%0*llu", run->fixed_width, hi);
    }
    fputc (']', f);
    if (fclose (f) != 0) {
        free (text);
        return NULL;
    }
    return text;
}

/* Flux writes the whole hostlist as one string: ["a[1-2],login"]. Takes
 * the array of parts. */
static json_t *join_as_one (json_t *parts)
{
    size_t len = 0, i;
    json_t *v, *one = NULL;
    char *text, *p;

    if (json_array_size (parts) == 0)
        return parts;
    json_array_foreach (parts, i, v)
        len += json_string_length (v) + 1;
    if ((text = p = malloc (len + 1))) {
        json_array_foreach (parts, i, v) {
            if (i > 0)
                *p++ = ',';
            memcpy (p, json_string_value (v), json_string_length (v));
            p += json_string_length (v);
        }
        *p = '\0';
        one = json_pack ("[s]", text);
        free (text);
    }
    json_decref (parts);
    return one;
}

json_t *hostlist_text (const char *const *names, size_t n)
{
    struct host_suffix *sfx = calloc (n, sizeof (*sfx));
    json_t *list = json_array ();
    size_t i = 0;

    if (!sfx || !list)
        goto nomem;
    for (size_t k = 0; k < n; k++)
        host_suffix_parse (names[k], &sfx[k]);
    while (i < n) {
        struct host_run run;
        size_t end = i + 1;
        char *text;

        host_run_start (&run, names[i], &sfx[i]);
        if (sfx[i].width > 0)
            while (end < n && host_run_join (&run, names[end], &sfx[end]))
                end++;
        text = end - i == 1 ? strdup (names[i])
                            : host_run_text (&run, &sfx[i], end - i);
        /* valid names are ASCII: no UTF-8 check needed */
        if (!text ||
            json_array_append_new (list, json_string_nocheck (text)) < 0) {
            free (text);
            goto nomem;
        }
        free (text);
        i = end;
    }
    free (sfx);
    return join_as_one (list);
nomem:
    free (sfx);
    json_decref (list);
    return NULL;
}

bool hostlist_name_valid (const char *s)
{
    if (!s || !*s)
        return false;
    for (; *s; s++)
        if ((unsigned char)*s < 0x21 || (unsigned char)*s > 0x7e ||
            strchr ("[],", *s))
            return false;
    return true;
}
