/* The loaded jobtap plugins and calls into them (jtplugin.h). */
#include <errno.h>
#include <stdlib.h>

#include "host.h"
#include "jtplugin.h"
#include "plugin_container.h"
#include "runtime.h"

struct jt_plugin *jt_get (flux_plugin_t *p)
{
    if (!p)
        return NULL;
    int saved_errno = errno;
    struct jt_plugin *jt = flux_plugin_aux_get (p, "flux::jobtap");
    errno = saved_errno;
    return jt;
}

struct runtime *jt_runtime (flux_plugin_t *p)
{
    struct jt_plugin *jt = jt_get (p);
    return jt ? jt->rt : NULL;
}

const char *jt_name (flux_plugin_t *p)
{
    struct jt_plugin *jt = jt_get (p);
    return jt && jt->list_name ? jt->list_name : "none";
}

const char *jt_internal_name (struct jt_plugin *jt)
{
    const char *name = flux_plugin_get_name (jt->p);
    return name ? name : jt->list_name;
}

bool is_loaded (struct runtime *rt, struct jt_plugin *jt)
{
    for (struct jt_plugin *x = rt->plugins; x; x = x->next)
        if (x == jt)
            return true;
    return false;
}

struct jt_plugin **jt_snapshot (struct runtime *rt, int *countp)
{
    return jt_snapshot_in (rt, NULL, 0, countp);
}

struct jt_plugin **jt_snapshot_in (struct runtime *rt,
                                   struct jt_plugin **buf,
                                   int cap,
                                   int *countp)
{
    int n = 0, i = 0;
    struct jt_plugin **v = buf;
    for (struct jt_plugin *jt = rt->plugins; jt; jt = jt->next)
        n++;
    if (n + 1 > cap && !(v = calloc (n + 1, sizeof (*v))))
        return NULL;
    for (struct jt_plugin *jt = rt->plugins; jt; jt = jt->next)
        v[i++] = jt;
    v[n] = NULL;
    *countp = n;
    return v;
}

void jt_destroy (struct jt_plugin *jt)
{
    if (jt) {
        struct runtime *rt = jt->rt;
        struct jt_plugin *prev = rt ? rt->calling : NULL;
        while (jt->services) {
            struct service *s = jt->services;
            jt->services = s->next;
            free (s->topic);
            free (s);
        }
        /* its aux destructors are its code (they may destroy its timers) */
        if (rt)
            rt->calling = jt;
        flux_plugin_destroy (jt->p);
        if (rt)
            rt->calling = prev;
        free (jt->list_name);
        free (jt->path);
        free (jt->sort_mode);
        free (jt);
    }
}

void jt_hold_all (struct runtime *rt)
{
    rt->calls_active++;
}

void jt_release_all (struct runtime *rt)
{
    if (--rt->calls_active == 0) {
        int saved_errno = errno;
        while (rt->retired) {
            struct jt_plugin *x = rt->retired;
            rt->retired = x->next;
            jt_destroy (x);
        }
        errno = saved_errno;
    }
}

struct jt_plugin *jt_enter (struct runtime *rt, struct jt_plugin *jt)
{
    struct jt_plugin *prev = rt->calling;
    jt_hold_all (rt);
    rt->calling = jt;
    return prev;
}

void jt_leave (struct runtime *rt, struct jt_plugin *prev)
{
    rt->calling = prev;
    jt_release_all (rt);
}

int jt_call (struct jt_plugin *jt,
                 const char *topic,
                 flux_plugin_arg_t *args)
{
    struct runtime *rt = jt->rt;
    struct jt_plugin *prev = jt_enter (rt, jt);
    int rc = flux_plugin_call (jt->p, topic, args);
    jt_leave (rt, prev);
    return rc;
}

void jt_retire (struct runtime *rt, struct jt_plugin *jt)
{
    for (struct jt_plugin **pp = &rt->plugins; *pp; pp = &(*pp)->next) {
        if (*pp == jt) {
            *pp = jt->next;
            break;
        }
    }
    plugin_handlers_changed ();
    if (rt->calls_active > 0) {
        jt->next = rt->retired;
        rt->retired = jt;
    }
    else
        jt_destroy (jt);
}
