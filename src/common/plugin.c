/* The Flux plugin container: handlers, conf, aux and DSO loading (args are
 * plugin_arg.c).  Behaviour follows flux-core's plugin.c (see the semantics
 * reference); the code is our own. */
#include <dlfcn.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>
#include <time.h>
#include <jansson.h>

#include <flux/core.h>

#include "aux.h"
#include "host.h"
#include "jsonpool.h"
#include "plugin_container.h"
#include "quickpack.h"

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

static __attribute__ ((format (printf, 3, 4))) int
plugin_seterror (flux_plugin_t *p, int errnum, const char *fmt, ...)
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

/* Process-wide, as the handler tables it counts changes of are: every
 * runtime's topic cache checks it. */
static unsigned handlers_generation = 1;

unsigned plugin_handlers_generation (void)
{
    return handlers_generation;
}

void plugin_handlers_changed (void)
{
    if (++handlers_generation == 0)
        handlers_generation = 1;
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

void flux_plugin_aux_delete_value (flux_plugin_t *p, const void *val)
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
    JSON_POOL_ASSERT_OUTSIDE (p->name, topic);
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
