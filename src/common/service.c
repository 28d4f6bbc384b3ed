/* Plugin services (service.h): topic lookup, the rolemask check, and
 * calling the handler. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <flux/core.h>

#include "host_error.h"
#include "jsonpool.h"
#include "jtplugin.h"
#include "log.h"
#include "runtime.h"
#include "service.h"

/* The service for topic, and in *owner the plugin that registered it. */
static struct service *service_find (struct runtime *rt,
                                     const char *topic,
                                     struct jt_plugin **owner)
{
    for (struct jt_plugin *jt = rt->plugins; jt; jt = jt->next)
        for (struct service *s = jt->services; s; s = s->next)
            if (!strcmp (s->topic, topic)) {
                *owner = jt;
                return s;
            }
    return NULL;
}

/* The full topic first; then the short form, as if "job-manager." led. */
static struct service *service_lookup (struct runtime *rt,
                                       const char *topic,
                                       struct jt_plugin **owner)
{
    static const char prefix[] = "job-manager.";
    char buf[1024];
    struct service *s;

    if ((s = service_find (rt, topic, owner))
        || !strncmp (topic, prefix, sizeof (prefix) - 1))
        return s;
    if (snprintf (buf, sizeof (buf), "%s%s", prefix, topic)
        >= (int)sizeof (buf))
        return NULL;
    return service_find (rt, buf, owner);
}

static bool service_allowed (struct service *s, uint32_t rolemask)
{
    if (rolemask & FLUX_ROLE_OWNER)
        return true;
    /* rolemask 0 at registration means owner only */
    return s->rolemask != 0 && (s->rolemask & rolemask);
}

int service_send (struct runtime *rt,
                  const flux_msg_t *request,
                  jobtap_host_error_t *err)
{
    struct flux_msg_cred cred;
    struct jt_plugin *owner, *prev;
    struct service *s;
    const char *topic;
    int rc = -1;

    if (flux_msg_get_topic (request, &topic) < 0
        || flux_msg_get_cred (request, &cred) < 0)
        return errprintf (err, "invalid request");
    runtime_lock ();
    if (!(s = service_lookup (rt, topic, &owner))) {
        errno = ENOSYS;
        errprintf (err, "No service matching %s is registered", topic);
        goto out;
    }
    if (!service_allowed (s, cred.rolemask)) {
        errno = EPERM;
        errprintf (err, "Request requires owner credentials");
        goto out;
    }
    JSON_POOL_ASSERT_OUTSIDE (NULL, topic);
    /* a handler may unload its own plugin: keep it until cb returns */
    prev = jt_enter (rt, owner);
    s->cb (rt->h, NULL, request, s->arg);
    jt_leave (rt, prev);
    rc = 0;
out:
    runtime_unlock ();
    return rc;
}
