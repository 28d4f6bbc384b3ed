/* The Flux plugin container: handlers, args, conf, aux and DSO loading.
 * Behaviour follows flux-core's plugin.c (see the semantics reference);
 * the code is our own. */
#include <dlfcn.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/random.h>
#include <time.h>
#include <jansson.h>

#include <flux/core.h>

#include "aux.h"
#include "host.h"
#include "internal.h"

struct handler {
    char *topic;
    bool glob;        /* topic has fnmatch specials; else strcmp will do */
    flux_plugin_f cb;
    void *data;
    struct handler *next;
};

struct flux_plugin {
    char *name;
    char *path;
    char uuid[37];
    int flags;
    json_t *conf;
    char *conf_str;
    struct handler *handlers;
    struct aux_item *aux;
    void *dso;
    char last_error[129];
};

struct flux_plugin_arg {
    json_t *in;
    json_t *out;
    /* One key of 'in' built only when a reader asks for it (the runtime
     * keeps jobspecs compact and most callbacks never read them). */
    const char *lazy_key;
    json_t *(*lazy_get) (void *arg);
    void (*lazy_free) (void *arg);
    void *lazy_arg;
    char error[JSON_ERROR_TEXT_LENGTH + 64];
};

static int plugin_seterror (flux_plugin_t *p, int errnum, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

static int plugin_seterror (flux_plugin_t *p, int errnum, const char *fmt, ...)
{
    if (p) {
        if (fmt) {
            va_list ap;
            va_start (ap, fmt);
            vsnprintf (p->last_error, sizeof (p->last_error), fmt, ap);
            va_end (ap);
        }
        else
            snprintf (p->last_error,
                      sizeof (p->last_error),
                      "%s",
                      strerror (errnum));
    }
    errno = errnum;
    return -1;
}

static void clear_error (flux_plugin_t *p)
{
    if (p)
        p->last_error[0] = '\0';
}

/* A random (version 4) uuid.  getrandom() avoids a libuuid dependency;
 * fall back to a time/address mix if the kernel refuses. */
static void make_uuid (char *buf, size_t len, const void *seed)
{
    unsigned char b[16];
    static const char hex[] = "0123456789abcdef";
    int n = 0;

    if (getrandom (b, sizeof (b), GRND_NONBLOCK) != (ssize_t)sizeof (b)) {
        struct timespec ts;
        uint64_t x;
        clock_gettime (CLOCK_REALTIME, &ts);
        x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20)
            ^ (uint64_t)(uintptr_t)seed;
        for (int i = 0; i < 16; i++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            b[i] = (unsigned char)(x >> 56);
        }
    }
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    if (len < 37)
        return;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            buf[n++] = '-';
        buf[n++] = hex[b[i] >> 4];
        buf[n++] = hex[b[i] & 0xf];
    }
    buf[n] = '\0';
}

flux_plugin_t *flux_plugin_create (void)
{
    flux_plugin_t *p = calloc (1, sizeof (*p));
    if (!p)
        return NULL;
    p->flags = FLUX_PLUGIN_RTLD_LAZY;
    make_uuid (p->uuid, sizeof (p->uuid), p);
    return p;
}

static void handlers_destroy (struct handler *h)
{
    while (h) {
        struct handler *next = h->next;
        free (h->topic);
        free (h);
        h = next;
    }
}

void flux_plugin_destroy (flux_plugin_t *p)
{
    if (p) {
        int saved_errno = errno;
        json_decref (p->conf);
        handlers_destroy (p->handlers);
        free (p->conf_str);
        free (p->path);
        free (p->name);
        aux_destroy (&p->aux);
#if !defined(__SANITIZE_ADDRESS__)
        /* ASan cannot symbolize leaks in closed DSOs: keep them open. */
        if (p->dso)
            dlclose (p->dso);
#endif
        free (p);
        errno = saved_errno;
    }
}

int flux_plugin_get_flags (flux_plugin_t *p)
{
    return p ? p->flags : 0;
}

int flux_plugin_set_flags (flux_plugin_t *p, int flags)
{
    const int valid = FLUX_PLUGIN_RTLD_LAZY | FLUX_PLUGIN_RTLD_NOW
                      | FLUX_PLUGIN_RTLD_GLOBAL | FLUX_PLUGIN_RTLD_DEEPBIND;
    if (!p || (flags & ~valid)) {
        errno = EINVAL;
        return -1;
    }
    p->flags = flags;
    return 0;
}

const char *flux_plugin_strerror (flux_plugin_t *p)
{
    return p->last_error;
}

int flux_plugin_set_name (flux_plugin_t *p, const char *name)
{
    char *s;
    if (!p || !name)
        return plugin_seterror (p, EINVAL, NULL);
    clear_error (p);
    if (!(s = strdup (name)))
        return plugin_seterror (p, ENOMEM, NULL);
    free (p->name);
    p->name = s;
    return 0;
}

const char *flux_plugin_get_name (flux_plugin_t *p)
{
    if (!p) {
        errno = EINVAL;
        return NULL;
    }
    return p->name;
}

const char *flux_plugin_get_uuid (flux_plugin_t *p)
{
    if (!p) {
        errno = EINVAL;
        return NULL;
    }
    return p->uuid;
}

const char *flux_plugin_get_path (flux_plugin_t *p)
{
    return p ? p->path : NULL;
}

unsigned plugin_handlers_gen = 1;

void plugin_handlers_changed (void)
{
    if (++plugin_handlers_gen == 0)
        plugin_handlers_gen = 1;
}

int flux_plugin_remove_handler (flux_plugin_t *p, const char *topic)
{
    if (!p || !topic)
        return plugin_seterror (p, EINVAL, NULL);
    clear_error (p);
    for (struct handler **hp = &p->handlers; *hp; hp = &(*hp)->next) {
        if (strcmp ((*hp)->topic, topic) == 0) {
            struct handler *h = *hp;
            *hp = h->next;
            free (h->topic);
            free (h);
            plugin_handlers_changed ();
            break;
        }
    }
    return 0;
}

int flux_plugin_add_handler (flux_plugin_t *p,
                             const char *topic,
                             flux_plugin_f cb,
                             void *arg)
{
    struct handler *h, **hp;

    if (!p || !topic)
        return plugin_seterror (p, EINVAL, NULL);
    if (!cb)
        return flux_plugin_remove_handler (p, topic);
    clear_error (p);
    if (!(h = calloc (1, sizeof (*h))) || !(h->topic = strdup (topic))) {
        free (h);
        return plugin_seterror (p, ENOMEM, NULL);
    }
    h->glob = strpbrk (topic, "*?[\\") != NULL;
    h->cb = cb;
    h->data = arg;
    for (hp = &p->handlers; *hp; hp = &(*hp)->next)
        ;
    *hp = h;
    plugin_handlers_changed ();
    return 0;
}

flux_plugin_f flux_plugin_get_handler (flux_plugin_t *p, const char *topic)
{
    if (!p || !topic) {
        plugin_seterror (p, EINVAL, NULL);
        return NULL;
    }
    clear_error (p);
    for (struct handler *h = p->handlers; h; h = h->next)
        if (strcmp (h->topic, topic) == 0)
            return h->cb;
    return NULL;
}

static struct handler *match (flux_plugin_t *p, const char *topic)
{
    for (struct handler *h = p->handlers; h; h = h->next)
        if (h->glob ? fnmatch (h->topic, topic, 0) == 0
                    : strcmp (h->topic, topic) == 0)
            return h;
    return NULL;
}

bool plugin_has_handler (flux_plugin_t *p, const char *topic)
{
    return match (p, topic) != NULL;
}

flux_plugin_f flux_plugin_match_handler (flux_plugin_t *p, const char *topic)
{
    struct handler *h;
    if (!p || !topic) {
        plugin_seterror (p, EINVAL, NULL);
        return NULL;
    }
    clear_error (p);
    h = match (p, topic);
    return h ? h->cb : NULL;
}

int flux_plugin_register (flux_plugin_t *p,
                          const char *name,
                          const struct flux_plugin_handler t[])
{
    if (!p || !t)
        return plugin_seterror (p, EINVAL, NULL);
    clear_error (p);
    if (name && flux_plugin_set_name (p, name) < 0)
        return -1;
    for (; t->topic; t++) {
        if (flux_plugin_add_handler (p, t->topic, t->cb, t->data) < 0)
            return -1;
    }
    return 0;
}

int flux_plugin_aux_set (flux_plugin_t *p,
                         const char *key,
                         void *val,
                         void (*free_fn) (void *))
{
    if (!p) {
        errno = EINVAL;
        return -1;
    }
    return aux_set (&p->aux, key, val, free_fn);
}

void *flux_plugin_aux_get (flux_plugin_t *p, const char *key)
{
    if (!p) {
        errno = EINVAL;
        return NULL;
    }
    return aux_get (p->aux, key);
}

void flux_plugin_aux_delete_value (flux_plugin_t *p, void *val)
{
    if (p)
        aux_delete_value (&p->aux, val);
}

void flux_plugin_aux_delete (flux_plugin_t *p, const void *val)
{
    if (p)
        aux_delete_value (&p->aux, val);
}

int flux_plugin_set_conf (flux_plugin_t *p, const char *json_str)
{
    json_error_t err;
    json_t *conf;

    if (!p || !json_str)
        return plugin_seterror (p, EINVAL, NULL);
    clear_error (p);
    if (!(conf = json_loads (json_str, 0, &err)))
        return plugin_seterror (p,
                                EINVAL,
                                "parse error: col %d: %s",
                                err.column,
                                err.text);
    /* Flux leaks the old object here; we release it. */
    json_decref (p->conf);
    p->conf = conf;
    free (p->conf_str);
    p->conf_str = NULL;
    return 0;
}

const char *flux_plugin_get_conf (flux_plugin_t *p)
{
    if (!p) {
        errno = EINVAL;
        return NULL;
    }
    clear_error (p);
    if (!p->conf) {
        plugin_seterror (p, ENOENT, "No plugin conf set");
        return NULL;
    }
    if (!p->conf_str
        && !(p->conf_str = json_dumps (p->conf, JSON_ENCODE_ANY | JSON_COMPACT))) {
        plugin_seterror (p, ENOMEM, NULL);
        return NULL;
    }
    return p->conf_str;
}

int flux_plugin_conf_unpack (flux_plugin_t *p, const char *fmt, ...)
{
    json_error_t err;
    va_list ap;
    int rc;

    if (!p || !fmt)
        return plugin_seterror (p, EINVAL, NULL);
    clear_error (p);
    if (!p->conf)
        return plugin_seterror (p, ENOENT, "No plugin conf set");
    va_start (ap, fmt);
    rc = json_vunpack_ex (p->conf, &err, 0, fmt, ap);
    va_end (ap);
    if (rc < 0)
        return plugin_seterror (p, EINVAL, "unpack error: %s", err.text);
    return 0;
}

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

static void arg_lazy_clear (flux_plugin_arg_t *args)
{
    if (args->lazy_get) {
        args->lazy_get = NULL;
        if (args->lazy_free)
            args->lazy_free (args->lazy_arg);
    }
}

int plugin_arg_set_lazy (flux_plugin_arg_t *args,
                         const char *key,
                         json_t *(*get) (void *arg),
                         void (*destroy) (void *arg),
                         void *arg)
{
    if (!args || !key || !get) {
        errno = EINVAL;
        return -1;
    }
    arg_lazy_clear (args);
    args->lazy_key = key;
    args->lazy_get = get;
    args->lazy_free = destroy;
    args->lazy_arg = arg;
    return 0;
}

void plugin_arg_resolve (flux_plugin_arg_t *args)
{
    json_t *o;

    if (!args || !args->lazy_get)
        return;
    jobtap_host_json_pool_begin (); /* lazy_get only builds or parses */
    o = args->lazy_get (args->lazy_arg);
    if (o && json_is_object (args->in)
        && !json_object_get (args->in, args->lazy_key))
        json_object_set_new (args->in, args->lazy_key, o);
    else
        json_decref (o);
    jobtap_host_json_pool_end ();
    arg_lazy_clear (args);
}

bool plugin_arg_drop (flux_plugin_arg_t *args, const char *key, json_t *v)
{
    if (!args || !v || json_object_get (args->in, key) != v)
        return false;
    return json_object_del (args->in, key) == 0;
}

/* Unpack format walking, to tell whether a format reads the lazy key.
 * Every unpack argument is a pointer (keys are const char *), so the
 * walk consumes them as void *.  Whatever it does not follow counts as
 * a read. */
struct fmt_walk {
    const char *p;
    va_list ap;
};

static void walk_blanks (struct fmt_walk *w)
{
    while (*w->p == ' ' || *w->p == '\t' || *w->p == '\n' || *w->p == ','
           || *w->p == ':')
        w->p++;
}

static bool walk_value (struct fmt_walk *w, int depth);

/* After '{' or '['.  In an object, a key equal to 'key' at depth 0 is a
 * read; so is '!' there (strict: a missing key would change the result). */
static bool walk_container (struct fmt_walk *w,
                            bool object,
                            const char *key,
                            int depth)
{
    for (;;) {
        walk_blanks (w);
        char c = *w->p;
        if (c == (object ? '}' : ']')) {
            w->p++;
            return true;
        }
        if (c == '!' && object && depth == 0)
            return false;
        if (c == '!' || c == '*') {
            w->p++;
            continue;
        }
        if (object) {
            const char *k;
            if (c != 's')
                return false;
            w->p++;
            k = va_arg (w->ap, const char *);
            if (depth == 0 && k && !strcmp (k, key))
                return false;
            if (*w->p == '?')
                w->p++;
        }
        if (!walk_value (w, depth + 1))
            return false;
    }
}

static bool walk_value (struct fmt_walk *w, int depth)
{
    walk_blanks (w);
    if (depth > 32)
        return false;
    switch (*w->p++) {
        case 's':
            (void)va_arg (w->ap, void *);
            if (*w->p == '%') {
                w->p++;
                (void)va_arg (w->ap, void *);
            }
            return true;
        case 'b': case 'i': case 'I': case 'f': case 'F': case 'o': case 'O':
            (void)va_arg (w->ap, void *);
            return true;
        case 'n':
            return true;
        case '{':
            return walk_container (w, true, NULL, depth);
        case '[':
            return walk_container (w, false, NULL, depth);
        default:
            return false;
    }
}

static bool fmt_may_read (const char *fmt, va_list ap, const char *key)
{
    struct fmt_walk w = {.p = fmt};
    bool clean;

    va_copy (w.ap, ap);
    walk_blanks (&w);
    if (*w.p == '{') {
        w.p++;
        clean = walk_container (&w, true, key, 0);
        walk_blanks (&w);
        clean = clean && *w.p == '\0';
    }
    else
        clean = false;
    va_end (w.ap);
    return !clean;
}

void flux_plugin_arg_destroy (flux_plugin_arg_t *args)
{
    if (args) {
        int saved_errno = errno;
        arg_lazy_clear (args);
        json_decref (args->in);
        json_decref (args->out);
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

static int arg_seterror (flux_plugin_arg_t *args,
                         int errnum,
                         const char *fmt,
                         ...) __attribute__ ((format (printf, 3, 4)));
static int arg_seterror (flux_plugin_arg_t *args,
                         int errnum,
                         const char *fmt,
                         ...)
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

/* Unpack for the formats plugins mostly use: objects, nested, of keys
 * ('s', '?' when optional) and s i I b f F o n values, with jansson's
 * meaning.  jansson's own unpack builds a hashtable of the keys at every
 * object level, most of what a plugin's unpack cost.  Anything else (or
 * any error, whose message jansson words) returns false having written
 * only what jansson, given the same arguments again, writes too: so no
 * 'O', whose reference would be taken twice.  It walks formats as
 * fmt_may_read does. */
static char quick_token (struct fmt_walk *q)
{
    walk_blanks (q);
    return *q->p;
}

static bool quick_value (struct fmt_walk *q, json_t *v, int depth);

/* In an object of a format, after '{' or a member: 1 with *key at an 's'
 * key (its argument consumed), 0 at the closing '}' (passed), -1 at
 * anything else. */
static int quick_key (struct fmt_walk *q, const char **key)
{
    char c = quick_token (q);
    if (c == '}') {
        q->p++;
        return 0;
    }
    if (c != 's' || !(*key = va_arg (q->ap, const char *)))
        return -1;
    q->p++;
    return 1;
}

/* At '{'; o NULL: an optional key that is absent (arguments consumed,
 * nothing written). */
static bool quick_object (struct fmt_walk *q, json_t *o, int depth)
{
    if (depth > 32 || (o && !json_is_object (o)))
        return false;
    q->p++;
    for (;;) {
        const char *key;
        bool opt = false;
        json_t *v;
        int k = quick_key (q, &key);
        if (k <= 0)
            return k == 0;
        if (quick_token (q) == '?') {
            opt = true;
            q->p++;
        }
        v = o ? json_object_get (o, key) : NULL;
        if (o && !v && !opt)
            return false;
        if (!quick_value (q, v, depth + 1))
            return false;
    }
}

static bool quick_value (struct fmt_walk *q, json_t *v, int depth)
{
    char c = quick_token (q);
    void *t;

    if (c == '{')
        return quick_object (q, v, depth);
    q->p++;
    switch (c) {
    case 'n':
        return !v || json_is_null (v);
    case 's':
        if (quick_token (q) == '%' || (v && !json_is_string (v))
            || !(t = va_arg (q->ap, void *)))
            return false;
        if (v)
            *(const char **)t = json_string_value (v);
        return true;
    case 'i':
    case 'I':
    case 'b':
    case 'f':
    case 'F':
    case 'o':
        break;
    default:
        return false;
    }
    if (v
        && ((c == 'i' || c == 'I') ? !json_is_integer (v)
            : c == 'b'             ? !json_is_boolean (v)
            : c == 'f'             ? !json_is_real (v)
            : c == 'F'             ? !json_is_number (v)
                                   : false))
        return false;
    if (!(t = va_arg (q->ap, void *)))
        return false;
    if (!v)
        return true;
    switch (c) {
    case 'i':
        *(int *)t = (int)json_integer_value (v);
        break;
    case 'I':
        *(json_int_t *)t = json_integer_value (v);
        break;
    case 'b':
        *(int *)t = json_is_true (v);
        break;
    case 'f':
        *(double *)t = json_real_value (v);
        break;
    case 'F':
        *(double *)t = json_number_value (v);
        break;
    default:
        *(json_t **)t = v;
    }
    return true;
}

static bool quick_unpack (json_t *root, const char *fmt, va_list ap)
{
    struct fmt_walk q = { .p = fmt };
    bool done;

    if (!root)
        return false;
    va_copy (q.ap, ap);
    done = quick_value (&q, root, 0) && quick_token (&q) == '\0';
    va_end (q.ap);
    return done;
}

/* Pack for the formats plugins mostly use: objects, nested, of 's' keys
 * and s i I b f O n values, with jansson's meaning (keys and strings
 * checked as UTF-8).  jansson's pack costs 2-3 times as much for these,
 * on paths such as every jobspec update and priority answer.  Anything
 * else, and any failure, leaves the whole format to jansson, which words
 * the error: the quick pass consumes a copy of the arguments and takes no
 * reference it does not give back ('o', which steals one, is jansson's). */
static json_t *quick_pack_value (struct fmt_walk *q, int depth);

static json_t *quick_pack_object (struct fmt_walk *q, int depth)
{
    json_t *o;

    if (depth > 32 || !(o = json_object ()))
        return NULL;
    q->p++;
    for (;;) {
        const char *key;
        json_t *v;
        int k = quick_key (q, &key);
        if (k == 0)
            return o;
        if (k < 0 || !(v = quick_pack_value (q, depth + 1))
            || json_object_set_new (o, key, v) < 0)
            break;
    }
    json_decref (o);
    return NULL;
}

static json_t *quick_pack_value (struct fmt_walk *q, int depth)
{
    char c = quick_token (q);
    const char *s;
    json_t *v;

    if (c == '{')
        return quick_pack_object (q, depth);
    q->p++;
    switch (c) {
    case 's':
        return (s = va_arg (q->ap, const char *)) ? json_string (s) : NULL;
    case 'i':
        return json_integer (va_arg (q->ap, int));
    case 'I':
        return json_integer (va_arg (q->ap, json_int_t));
    case 'b':
        return va_arg (q->ap, int) ? json_true () : json_false ();
    case 'f':
        return json_real (va_arg (q->ap, double));
    case 'O':
        return (v = va_arg (q->ap, json_t *)) ? json_incref (v) : NULL;
    case 'n':
        return json_null ();
    }
    return NULL;
}

static json_t *quick_pack (const char *fmt, va_list ap)
{
    struct fmt_walk q = { .p = fmt };
    json_t *o;

    /* only what the quick pass knows: no '?', '*', '#', '%', '+', 'o', '[' */
    if (fmt[strspn (fmt, "{}siIbfOn \t\n,:")] != '\0'
        || quick_token (&q) != '{')
        return NULL;
    va_copy (q.ap, ap);
    o = quick_pack_value (&q, 0);
    va_end (q.ap);
    if (o && quick_token (&q) != '\0') {
        json_decref (o);
        o = NULL;
    }
    return o;
}

json_t *plugin_vpack (json_error_t *err, const char *fmt, va_list ap)
{
    json_t *o = quick_pack (fmt, ap);
    return o ? o : json_vpack_ex (err, 0, fmt, ap);
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
    if (!(flags & FLUX_PLUGIN_ARG_OUT) && args->lazy_get
        && fmt_may_read (fmt, ap, args->lazy_key))
        plugin_arg_resolve (args);
    if (quick_unpack (*arg_target (args, flags), fmt, ap))
        return 0;
    rc = json_vunpack_ex (*arg_target (args, flags), &err, 0, fmt, ap);
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

int flux_plugin_call (flux_plugin_t *p,
                      const char *topic,
                      flux_plugin_arg_t *args)
{
    struct handler *h;

    if (!p || !topic) {
        errno = EINVAL;
        return -1;
    }
    if (!(h = match (p, topic)))
        return 0;
    return h->cb (p, topic, args, h->data) < 0 ? -1 : 1;
}

static int open_flags (flux_plugin_t *p)
{
    int flags = 0;
    const char *s;

    if (p->flags & FLUX_PLUGIN_RTLD_LAZY)
        flags |= RTLD_LAZY;
    if (p->flags & FLUX_PLUGIN_RTLD_NOW)
        flags |= RTLD_NOW;
    flags |= (p->flags & FLUX_PLUGIN_RTLD_GLOBAL) ? RTLD_GLOBAL : RTLD_LOCAL;
#ifdef RTLD_DEEPBIND
    if ((p->flags & FLUX_PLUGIN_RTLD_DEEPBIND)
        && !((s = getenv ("FLUX_LOAD_WITH_DEEPBIND")) && strcmp (s, "0") == 0))
        flags |= RTLD_DEEPBIND;
#else
    (void)s;
#endif
    if (!(flags & (RTLD_LAZY | RTLD_NOW)))
        flags |= RTLD_LAZY;
    return flags;
}

int flux_plugin_load_dso (flux_plugin_t *p, const char *path)
{
    flux_plugin_init_f init;
    void *dso;

    if (!p || !path)
        return plugin_seterror (p, EINVAL, NULL);
    clear_error (p);
    if (access (path, R_OK) < 0)
        return plugin_seterror (p, errno, "%s: %s", path, strerror (errno));
    dlerror ();
    if (!(dso = dlopen (path, open_flags (p)))) {
        const char *e = dlerror ();
        return plugin_seterror (p, ENOENT, "dlopen: %s", e ? e : "failed");
    }
    if (p->dso)
        dlclose (p->dso);
    p->dso = dso;
    free (p->path);
    if (!(p->path = strdup (path)) || flux_plugin_set_name (p, path) < 0)
        return plugin_seterror (p, ENOMEM, NULL);
    if ((init = (flux_plugin_init_f)(uintptr_t)dlsym (dso, "flux_plugin_init"))
        && init (p) < 0)
        return plugin_seterror (p, 0, "%s: flux_plugin_init failed", path);
    return 0;
}

/* Used by the host for builtins, which have no DSO. */
int plugin_init_builtin (flux_plugin_t *p, flux_plugin_init_f init)
{
    clear_error (p);
    if (init (p) < 0)
        return plugin_seterror (p, errno ? errno : EINVAL,
                                "%s: flux_plugin_init failed", p->name);
    return 0;
}

json_t *plugin_conf_get (flux_plugin_t *p)
{
    return p ? p->conf : NULL;
}
