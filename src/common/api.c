/* The flux_jobtap_* calls about plugins rather than one job: the
 * handle, services, load sort order, reprioritizing, rejections and
 * errors, and calls between plugins.  Entry points of the Flux API: each
 * takes the runtime lock and reaches the runtime through its plugin. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <flux/core.h>
#include <flux/jobtap.h>

#include "dispatch.h"
#include "event.h"
#include "host.h"
#include "job.h"
#include "jtplugin.h"
#include "log.h"
#include "priority.h"
#include "runtime.h"

flux_t *flux_jobtap_get_flux (flux_plugin_t *p)
{
    struct runtime *rt = jt_runtime (p);

    if (!rt) {
        errno = EINVAL;
        return NULL;
    }
    return rt->h;
}

int flux_jobtap_service_register_ex (flux_plugin_t *p,
                                     const char *method,
                                     uint32_t rolemask,
                                     flux_msg_handler_f cb,
                                     void *arg)
{
    struct jt_plugin *jt;
    struct service *s;
    const char *name;
    char topic[1024];
    int n, rc = -1;

    runtime_lock ();
    if (!(jt = jt_get (p)) || !cb || !(name = flux_plugin_get_name (p))
        || strchr (name, '/')) {
        errno = EINVAL;
        goto out;
    }
    if (name[0] == '.')
        name++;
    if (method)
        n = snprintf (topic, sizeof (topic), "job-manager.%s.%s", name, method);
    else
        n = snprintf (topic, sizeof (topic), "job-manager.%s", name);
    if (n >= (int)sizeof (topic)) {
        errno = EINVAL;
        goto out;
    }
    if (!(s = calloc (1, sizeof (*s))) || !(s->topic = strdup (topic))) {
        free (s);
        goto out;
    }
    s->rolemask = rolemask;
    s->cb = cb;
    s->arg = arg;
    s->next = jt->services;
    jt->services = s;
    runtime_log (LOG_DEBUG, "jobtap: %s: registered service %s",
                 jt->list_name ? jt->list_name : name, topic);
    rc = 0;
out:
    runtime_unlock ();
    return rc;
}

int flux_jobtap_service_register (flux_plugin_t *p,
                                  const char *method,
                                  flux_msg_handler_f cb,
                                  void *arg)
{
    return flux_jobtap_service_register_ex (p, method, 0, cb, arg);
}

int flux_jobtap_set_load_sort_order (flux_plugin_t *p, const char *mode)
{
    struct jt_plugin *jt;
    int rc = -1;

    runtime_lock ();
    if (!(jt = jt_get (p)) || !mode
        || (strcmp (mode, "none") && strcmp (mode, "state")
            && strcmp (mode, "-state"))) {
        errno = EINVAL;
        goto out;
    }
    if (strcmp (mode, "none") != 0) {
        char *s = strdup (mode);
        if (!s)
            goto out;
        free (jt->sort_mode);
        jt->sort_mode = s;
    }
    rc = 0;
out:
    runtime_unlock ();
    return rc;
}

int flux_jobtap_reprioritize_all (flux_plugin_t *p)
{
    int rc;
    runtime_lock ();
    if (!jt_get (p)) {
        errno = EINVAL;
        rc = -1;
    }
    else
        rc = reprioritize_all (jt_runtime (p));
    runtime_unlock ();
    return rc;
}

int flux_jobtap_reprioritize_job (flux_plugin_t *p,
                                  flux_jobid_t id,
                                  unsigned int priority)
{
    struct runtime *rt = jt_runtime (p);
    struct job *job;
    int rc = -1;

    runtime_lock ();
    if (!jt_get (p))
        errno = EINVAL;
    else if (!(job = table_find (rt, id))
             || job->state == FLUX_JOB_STATE_INACTIVE) {
        /* literal id only: CURRENT_JOB is not special here */
        struct job *cur = current_job (rt);
        if (cur && cur->id == id && id != FLUX_JOBTAP_CURRENT_JOB) {
            reprioritize_one (cur, priority);
            rc = 0;
        }
        else
            errno = ENOENT;
    }
    else {
        reprioritize_one (job, priority);
        rc = 0;
    }
    runtime_unlock ();
    return rc;
}

int flux_jobtap_priority_unavail (flux_plugin_t *p, flux_plugin_arg_t *args)
{
    if (!jt_get (p)) {
        errno = EINVAL;
        return -1;
    }
    return flux_plugin_arg_pack (args,
                                 FLUX_PLUGIN_ARG_OUT,
                                 "{s:I}",
                                 "priority", (json_int_t)JOBTAP_PRIORITY_UNAVAIL);
}

static int jobtap_verror (flux_plugin_arg_t *args, const char *fmt, va_list ap)
{
    flux_error_t error;
    int n;

    memset (&error, 0, sizeof (error));
    n = vsnprintf (error.text, sizeof (error.text), fmt, ap);
    if (n >= (int)sizeof (error.text))
        error.text[sizeof (error.text) - 2] = '+';
    if (error.text[0])
        flux_plugin_arg_pack (args,
                              FLUX_PLUGIN_ARG_OUT,
                              "{s:s}",
                              "errmsg", error.text);
    return -1;
}

int flux_jobtap_error (flux_plugin_t *p,
                       flux_plugin_arg_t *args,
                       const char *fmt,
                       ...)
{
    va_list ap;
    (void)p;
    if (!fmt)
        return -1;
    va_start (ap, fmt);
    jobtap_verror (args, fmt, ap);
    va_end (ap);
    return -1;
}

int flux_jobtap_reject_job (flux_plugin_t *p,
                            flux_plugin_arg_t *args,
                            const char *fmt,
                            ...)
{
    va_list ap;
    if (!fmt) {
        const char *name;
        runtime_lock ();
        name = jt_name (p);
        flux_jobtap_error (p, args, "rejected by job-manager plugin '%s'", name);
        runtime_unlock ();
        return -1;
    }
    va_start (ap, fmt);
    jobtap_verror (args, fmt, ap);
    va_end (ap);
    return -1;
}

int flux_jobtap_call (flux_plugin_t *p,
                      flux_jobid_t id,
                      const char *topic,
                      flux_plugin_arg_t *args)
{
    struct job *job;
    int rc = -1;

    runtime_lock ();
    if (!p || !jt_get (p) || !args || !topic || !strncmp (topic, "job.", 4)) {
        errno = EINVAL;
        goto out;
    }
    if (!(job = lookup_jobid (p, id))) {
        errno = ENOENT;
        goto out;
    }
    rc = stack_call (job, topic, args);
out:
    runtime_unlock ();
    return rc;
}
