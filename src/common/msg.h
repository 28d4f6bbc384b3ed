/* Messages: flux_msg_t (requests to plugin services and their
 * responses), reference counted, and where a request's response goes.
 *
 * Who calls it: service.c hands requests to plugin handlers, rpc.c makes
 * the requests of flux_rpc and reads their responses, host_service.c those of
 * the host's service calls.  Plugins use the flux_msg_*, flux_request_*
 * and flux_respond* calls of <flux/core.h>.  Calls log.h, and plugin.c's
 * packer (quickpack.h) for flux_respond_pack.
 *
 * Threads: a handler may keep a request (flux_msg_incref) and respond
 * later from any thread.  A response is delivered under the runtime
 * lock, so the reply hook runs with it held. */
#ifndef JOBTAP_MSG_H
#define JOBTAP_MSG_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>
#include <flux/core.h>

/* Where a request's response goes: called once, with the response
 * (borrowed; flux_msg_incref to keep it) and the runtime lock held. */
typedef void (*msg_reply_f) (const flux_msg_t *response, void *arg);

/* A request to 'topic' from 'cred'.  The payload is 'json' (an object,
 * kept by reference) or the text 's' (copied); both NULL: no payload.
 * With 'noresponse' the sender wants no response (FLUX_RPC_NORESPONSE).
 * NULL with errno set on failure.  Drop with flux_msg_decref. */
flux_msg_t *msg_request_create (const char *topic,
                                json_t *json,
                                const char *s,
                                struct flux_msg_cred cred,
                                bool noresponse);

/* Send the request's response to reply(response, arg), or nowhere if
 * reply is NULL (the sender went away).  A request dropped by its last
 * holder with a reply still set and no response gets an EPROTO error
 * response, so no sender waits forever. */
void msg_set_reply (const flux_msg_t *request, msg_reply_f reply, void *arg);

/* Does anyone but the caller (who holds one reference) hold 'msg'?  A
 * handler that kept a request may still answer it. */
bool msg_held_elsewhere (const flux_msg_t *msg);

/* The payload of a message as JSON: a borrowed object, NULL if it has
 * none (or an error response).  Text that is not JSON gives a JSON
 * string, so a host still sees what a handler sent. */
json_t *msg_payload_json (const flux_msg_t *msg);

#endif
