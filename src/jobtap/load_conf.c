/* The conf of `jobtap load`'s KEY=VALUE pairs (load_conf.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load_conf.h"

static json_t *value_of (const char *text)
{
    json_t *v = json_loads (text, JSON_DECODE_ANY, NULL);
    return v ? v : json_string (text);
}

/* Set key (dotted, of keylen bytes) in conf to v (stolen): 0, or -1 with
 * why in err. */
static int set_path (json_t *conf,
                     const char *key,
                     size_t keylen,
                     json_t *v,
                     jobtap_host_error_t *err)
{
    json_t *o = conf;
    const char *part = key, *end = key + keylen;

    for (;;) {
        const char *dot = memchr (part, '.', (size_t)(end - part));
        size_t len = (size_t)((dot ? dot : end) - part);
        if (len == 0) {
            errprintf (err, "%.*s has an empty key part", (int)keylen,
                       key);
            goto fail;
        }
        if (!dot) {
            if (json_object_setn_new (o, part, len, v) < 0) {
                errprintf (err, "%s", strerror (ENOMEM));
                return -1;
            }
            return 0;
        }
        json_t *next = json_object_getn (o, part, len);
        if (!next) {
            if (!(next = json_object ())
                || json_object_setn_new (o, part, len, next) < 0) {
                errprintf (err, "%s", strerror (ENOMEM));
                goto fail;
            }
        }
        else if (!json_is_object (next)) {
            errprintf (err, "%.*s: %.*s is not an object",
                       (int)keylen, key, (int)(dot - key), key);
            goto fail;
        }
        o = next;
        part = dot + 1;
    }
fail:
    json_decref (v);
    return -1;
}

json_t *load_conf_from_pairs (int n,
                              char *const *pairs,
                              jobtap_host_error_t *err)
{
    json_t *conf = json_object ();

    if (!conf) {
        errprintf (err, "%s", strerror (ENOMEM));
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        const char *eq = strchr (pairs[i], '=');
        json_t *v;
        if (!eq || eq == pairs[i]) {
            errprintf (err, "%s is not KEY=VALUE", pairs[i]);
            goto fail;
        }
        if (!(v = value_of (eq + 1))) {
            errprintf (err, "%s", strerror (ENOMEM));
            goto fail;
        }
        if (set_path (conf, pairs[i], (size_t)(eq - pairs[i]), v, err)
            < 0)
            goto fail;
    }
    return conf;
fail:
    json_decref (conf);
    return NULL;
}
