/* control_ops: what each request of the control socket does, through the
 * runtime's host API (host.h) only: list, load, remove, query, rpc, job,
 * status.
 * Authorization is per request: load and remove need JOBTAP_ROLE_OWNER;
 * job shows a user only his own jobs; rpc hands the caller's uid and
 * rolemask to the service, which decides.
 *
 * Called by control_server.c from its thread, never under its own lock
 * (the host calls take the runtime's mutex, and a service's done callback
 * may run inside them). */
#ifndef SLURM_JOBTAP_CONTROL_OPS_H
#define SLURM_JOBTAP_CONTROL_OPS_H

#include <stdint.h>
#include <jansson.h>

#include "host.h"

/* Who sent a request (SO_PEERCRED and the server's role policy). */
struct control_caller {
    uint32_t uid;
    uint32_t rolemask; /* JOBTAP_ROLE_OWNER or JOBTAP_ROLE_USER */
};

/* Run 'request' (with op 'op'). Returns the response (a new object), or
 * NULL when an rpc was started: done (arg) then runs exactly once with
 * the service's answer, maybe already before this returns, maybe later
 * from another thread (see jobtap_host_service_call_async). */
json_t *control_ops_run (const char *op,
                         json_t *request,
                         const struct control_caller *caller,
                         jobtap_host_service_done_f done,
                         void *arg);

/* The response for a service's answer given to a done callback (a copy
 * of the payload, which stays the caller's). */
json_t *control_ops_rpc_response (json_t *payload,
                                  int errnum,
                                  const char *errstr);

#endif
