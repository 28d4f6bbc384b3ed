/* Flux plugin args (flux_plugin_arg_*): the IN and OUT objects a callback
 * gets, packed and unpacked with jansson formats (the common ones through
 * quickpack), and what of IN the runtime builds only when a reader needs
 * it, or tells without building (plugin_arg_set_lazy, plugin_arg.h).
 * Behaviour follows flux-core's plugin.c (see the semantics reference);
 * the code is our own. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include <flux/core.h>

#include "host.h"
#include "plugin_arg.h"
#include "quickpack.h"

struct flux_plugin_arg {
    json_t *in;
    json_t *out;
    /* What of 'in' is built only when a reader asks for it (most
     * callbacks read a few members or none): plugin_arg.h. */
    const struct plugin_arg_lazy *lazy;
    void *lazy_arg;
    bool filled; /* lazy->fill has put its members in 'in' */
    bool key_got; /* lazy->key has been built (kept in 'in') */
    /* members unpacks read through lazy->find, alive as long as the args,
     * as the members of 'in' would be */
    json_t **found;
    int found_count, found_cap; /* (emptied args keep the room) */
    /* and the strings of the scalars they read (quickpack.h) */
    size_t found_text_len;
    char found_text[256];
    char error[JSON_ERROR_TEXT_LENGTH + 64];
};

static void arg_fill (flux_plugin_arg_t *args);
static void arg_lazy_clear (flux_plugin_arg_t *args);

flux_plugin_arg_t *flux_plugin_arg_create (void)
{
    return calloc (1, sizeof (flux_plugin_arg_t));
}

flux_plugin_arg_t *plugin_arg_create_with (json_t *in, json_t *out)
{
    flux_plugin_arg_t *args = flux_plugin_arg_create ();
    if (!args) {
        json_decref (in);
        json_decref (out);
        return NULL;
    }
    args->in = in;
    args->out = out;
    return args;
}

bool plugin_arg_empty (flux_plugin_arg_t *args)
{
    if (!json_is_object (args->in) || !json_is_object (args->out)
        || args->in->refcount != 1 || args->out->refcount != 1)
        return false;
    arg_lazy_clear (args);
    /* (clearing walks the table even when there is nothing in it) */
    if (json_object_size (args->in))
        json_object_clear (args->in);
    if (json_object_size (args->out))
        json_object_clear (args->out);
    for (int i = 0; i < args->found_count; i++)
        json_decref (args->found[i]);
    args->found_count = 0;
    args->found_text_len = 0;
    args->filled = false;
    args->key_got = false;
    args->error[0] = '\0';
    return true;
}

json_t *plugin_arg_in (flux_plugin_arg_t *args)
{
    return args->in;
}

void plugin_arg_set_out (flux_plugin_arg_t *args, json_t *out)
{
    json_decref (args->out);
    args->out = out;
}

void plugin_arg_objects (flux_plugin_arg_t *args, json_t **in, json_t **out)
{
    arg_fill (args);
    *in = json_incref (args->in);
    *out = json_incref (args->out);
}

static void arg_lazy_clear (flux_plugin_arg_t *args)
{
    const struct plugin_arg_lazy *lazy = args->lazy;

    if (lazy) {
        args->lazy = NULL;
        if (lazy->destroy)
            lazy->destroy (args->lazy_arg);
    }
}

int plugin_arg_set_lazy (flux_plugin_arg_t *args,
                         const struct plugin_arg_lazy *lazy,
                         void *arg)
{
    if (!args || !lazy || !lazy->key || !lazy->get) {
        errno = EINVAL;
        return -1;
    }
    arg_lazy_clear (args);
    args->lazy = lazy;
    args->lazy_arg = arg;
    args->key_got = false;
    return 0;
}

/* The members lazy->fill gives put in 'in' (those it has already are
 * kept), once. */
static void arg_fill (flux_plugin_arg_t *args)
{
    if (!args->lazy || !args->lazy->fill || args->filled
        || !json_is_object (args->in))
        return;
    jobtap_host_json_pool_begin (); /* fill only builds */
    args->lazy->fill (args->lazy_arg, args->in);
    jobtap_host_json_pool_end ();
    args->filled = true;
}

/* lazy->key built and put in 'in', once. */
static void arg_get_key (flux_plugin_arg_t *args)
{
    json_t *o;

    if (!args->lazy || args->key_got)
        return;
    jobtap_host_json_pool_begin (); /* get only builds or parses */
    o = args->lazy->get (args->lazy_arg);
    if (o && json_is_object (args->in)
        && !json_object_get (args->in, args->lazy->key))
        json_object_set_new (args->in, args->lazy->key, o);
    else
        json_decref (o);
    jobtap_host_json_pool_end ();
    args->key_got = true;
}

void plugin_arg_resolve (flux_plugin_arg_t *args)
{
    if (!args || !args->lazy)
        return;
    arg_fill (args);
    arg_get_key (args);
    arg_lazy_clear (args);
}

bool plugin_arg_drop (flux_plugin_arg_t *args, const char *key, json_t *v)
{
    if (!args || !v || json_object_get (args->in, key) != v)
        return false;
    return json_object_del (args->in, key) == 0;
}

void flux_plugin_arg_destroy (flux_plugin_arg_t *args)
{
    if (args) {
        int saved_errno = errno;
        arg_lazy_clear (args);
        json_decref (args->in);
        json_decref (args->out);
        for (int i = 0; i < args->found_count; i++)
            json_decref (args->found[i]);
        free (args->found);
        free (args);
        errno = saved_errno;
    }
}

const char *flux_plugin_arg_strerror (flux_plugin_arg_t *args)
{
    if (!args)
        return strerror (errno);
    return args->error;
}

static __attribute__ ((format (printf, 3, 4))) int
arg_seterror (flux_plugin_arg_t *args, int errnum, const char *fmt, ...)
{
    if (args) {
        va_list ap;
        va_start (ap, fmt);
        vsnprintf (args->error, sizeof (args->error), fmt, ap);
        va_end (ap);
    }
    errno = errnum;
    return -1;
}

/* The members an unpack read through lazy->find: kept with the args
 * (their strings are the reader's until then).  -1 out of memory
 * (the values released). */
static int arg_keep_found (flux_plugin_arg_t *args, struct quick_virtual *vt)
{
    int need = args->found_count + vt->held_count;
    if (need > args->found_cap) {
        json_t **found = realloc (args->found, need * sizeof (*found));
        if (!found) {
            for (int i = 0; i < vt->held_count; i++)
                json_decref (vt->held[i]);
            return -1;
        }
        args->found = found;
        args->found_cap = need;
    }
    memcpy (args->found + args->found_count, vt->held,
            vt->held_count * sizeof (*args->found));
    args->found_count = need;
    return 0;
}

/* An unpack of IN reading what 'in' lacks through lazy->find: true if
 * done. */
static bool arg_unpack_found (flux_plugin_arg_t *args,
                              const char *fmt,
                              va_list ap)
{
    struct quick_virtual vt = {
        .find = args->lazy->find,
        .arg = args->lazy_arg,
        .text = args->found_text,
        .text_len = args->found_text_len,
        .text_cap = sizeof (args->found_text),
    };
    bool done = quickpack_unpack_virtual (args->in, fmt, ap, &vt);

    args->found_text_len = vt.text_len;
    if (vt.held_count == 0)
        return done;
    return arg_keep_found (args, &vt) == 0 && done;
}

static json_t **arg_target (flux_plugin_arg_t *args, int flags)
{
    return (flags & FLUX_PLUGIN_ARG_OUT) ? &args->out : &args->in;
}

/* Steals a reference to 'o' (which may be NULL, meaning "set NULL"). */
static int arg_store (flux_plugin_arg_t *args, int flags, json_t *o)
{
    json_t **target = arg_target (args, flags);

    if ((flags & FLUX_PLUGIN_ARG_REPLACE) && !(flags & FLUX_PLUGIN_ARG_OUT))
        arg_lazy_clear (args); /* the caller replaced what it belonged to */
    if ((flags & FLUX_PLUGIN_ARG_REPLACE) || !*target) {
        json_decref (*target);
        *target = o;
        return 0;
    }
    if (!o || !json_is_object (o) || !json_is_object (*target)) {
        json_decref (o);
        return arg_seterror (args,
                             EINVAL,
                             "cannot merge a non-object into existing args");
    }
    if (json_object_update (*target, o) < 0) {
        json_decref (o);
        return arg_seterror (args, ENOMEM, "merge failed");
    }
    json_decref (o);
    return 0;
}

int flux_plugin_arg_set (flux_plugin_arg_t *args,
                         int flags,
                         const char *json_str)
{
    json_t *o = NULL;
    json_error_t err;

    if (!args) {
        errno = EINVAL;
        return -1;
    }
    args->error[0] = '\0';
    if (json_str
        && !(o = json_loads (json_str, JSON_DECODE_ANY, &err)))
        return arg_seterror (args, EINVAL, "%s", err.text);
    return arg_store (args, flags, o);
}

int flux_plugin_arg_get (flux_plugin_arg_t *args, int flags, char **json_str)
{
    json_t *o;

    if (!args || !json_str) {
        errno = EINVAL;
        return -1;
    }
    args->error[0] = '\0';
    if (!(flags & FLUX_PLUGIN_ARG_OUT))
        plugin_arg_resolve (args);
    if (!(o = *arg_target (args, flags)))
        return arg_seterror (args, ENOENT, "No args currently set");
    if (!(*json_str = json_dumps (o, JSON_ENCODE_ANY | JSON_COMPACT)))
        return arg_seterror (args, ENOMEM, "json_dumps failed");
    return 0;
}

int flux_plugin_arg_vpack (flux_plugin_arg_t *args,
                           int flags,
                           const char *fmt,
                           va_list ap)
{
    json_error_t err;
    json_t *o;

    if (!args || !fmt) {
        errno = EINVAL;
        return -1;
    }
    args->error[0] = '\0';
    json_t **target = arg_target (args, flags);
    if (!(flags & FLUX_PLUGIN_ARG_REPLACE) && *target) {
        /* merged into the args' object without one in between */
        int rc = quickpack_pack_into (*target, fmt, ap);
        if (rc < 0)
            return arg_seterror (args, ENOMEM, "out of memory");
        if (rc > 0)
            return 0;
    }
    if (!(o = plugin_vpack (&err, fmt, ap)))
        return arg_seterror (args, EINVAL, "%s", err.text);
    return arg_store (args, flags, o);
}

int flux_plugin_arg_pack (flux_plugin_arg_t *args,
                          int flags,
                          const char *fmt,
                          ...)
{
    va_list ap;
    int rc;
    va_start (ap, fmt);
    rc = flux_plugin_arg_vpack (args, flags, fmt, ap);
    va_end (ap);
    return rc;
}

int flux_plugin_arg_vunpack (flux_plugin_arg_t *args,
                             int flags,
                             const char *fmt,
                             va_list ap)
{
    json_error_t err;
    int rc;

    if (!args || !fmt) {
        errno = EINVAL;
        return -1;
    }
    args->error[0] = '\0';
    if (!(flags & FLUX_PLUGIN_ARG_OUT) && args->lazy) {
        bool find = args->lazy->find != NULL;
        if (find && arg_unpack_found (args, fmt, ap))
            return 0;
        if (!args->key_got && quickpack_may_read (fmt, ap, args->lazy->key)) {
            /* the key whole, and what else it reads still told */
            arg_get_key (args);
            if (find && arg_unpack_found (args, fmt, ap))
                return 0;
        }
        arg_fill (args);
    }
    rc = quickpack_vunpack (*arg_target (args, flags), &err, fmt, ap);
    if (rc < 0)
        return arg_seterror (args, EINVAL, "%s", err.text);
    return rc;
}

int flux_plugin_arg_unpack (flux_plugin_arg_t *args,
                            int flags,
                            const char *fmt,
                            ...)
{
    va_list ap;
    int rc;
    va_start (ap, fmt);
    rc = flux_plugin_arg_vunpack (args, flags, fmt, ap);
    va_end (ap);
    return rc;
}
