/* control_munge: requests over TCP, sealed in a munge credential.
 *
 * On the Unix socket the kernel says who the peer is (SO_PEERCRED). Over
 * TCP it cannot, so each request travels inside a munge credential, as
 * each Slurm RPC does: the frame's JSON is {"munge": CRED} and CRED's
 * payload is the request's own JSON text. munged then vouches for the
 * sender's uid, the site key, the credential's age (its TTL, 300 s by
 * default) and that it was never used before (replay), and the request
 * cannot be separated from its sender. The response is plain.
 *
 * A request sealed this way may be at most CONTROL_MAX_SEALED bytes:
 * base64 makes a credential about 4/3 of its payload, and munged refuses
 * to decode much more than a mebibyte. Callers: control_server.c (open)
 * and the `jobtap` command (seal). */
#ifndef SLURM_JOBTAP_CONTROL_MUNGE_H
#define SLURM_JOBTAP_CONTROL_MUNGE_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "host_error.h"

#define CONTROL_MAX_SEALED (512 * 1024)

/* The frame {"munge": CRED} for 'request' (new reference), encoded by the
 * munged at 'munge_socket' (NULL: munge's default). NULL with errno and
 * errtext set ("munge: Socket communication error", "request of N bytes
 * is larger than ..."). */
json_t *control_munge_seal (json_t *request,
                            const char *munge_socket,
                            jobtap_host_error_t *errtext);

/* Open a sealed frame's body (the whole JSON text of {"munge": CRED}):
 * *request is the payload's JSON text (a new NUL-terminated string,
 * caller frees) and *uid the credential's uid. -1 with errno EPERM and
 * errtext "authentication failed: <why>" (a frame without a credential,
 * an invalid, expired or replayed one), or EPROTO for a frame that is no
 * sealed request. 'ctx' is a munge_ctx_t (void * here, to keep munge.h
 * out of the callers) set to the site's munged. */
int control_munge_open (void *ctx,
                        const char *body,
                        size_t len,
                        char **request,
                        uint32_t *uid,
                        jobtap_host_error_t *errtext);

/* The munged Slurm's auth/munge uses: socket= in an AuthInfo value (may
 * be NULL) as a new string, or NULL for munge's default. */
char *control_munge_socket_of_authinfo (const char *authinfo);

/* A munge context for control_munge_open speaking to 'munge_socket'
 * (NULL: the default); NULL with errno set. */
void *control_munge_ctx_create (const char *munge_socket);
void control_munge_ctx_destroy (void *ctx);

#endif
