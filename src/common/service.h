/* Plugin services (flux_jobtap_service_register): finding the handler
 * for a request's topic and handing the request to it.
 *
 * Called by rpc.c (flux_rpc from plugins) and host_service.c (the
 * host's service calls); calls jtplugin.h and msg.h.  Under the runtime
 * lock. */
#ifndef JOBTAP_SERVICE_H
#define JOBTAP_SERVICE_H

#include <flux/core.h>

#include "host.h"

struct runtime;

/* Give 'request' to the service registered for its topic, either
 * "job-manager.<plugin>.<method>" or the short "<plugin>.<method>".  The
 * handler runs now and responds now or later (msg.h).  -1 with err set,
 * the handler not called and no response sent: ENOSYS "No service
 * matching <topic> is registered", or EPERM when the caller's rolemask
 * is not allowed (rolemask 0 at registration: owner only). */
int service_send (struct runtime *rt,
                  const flux_msg_t *request,
                  jobtap_host_error_t *err);

#endif
