/* control_proto: the wire format of the jobtap control socket, shared by
 * the server (control_server.c, inside slurmctld) and the `jobtap`
 * command. Knows nothing of Slurm or of the runtime.
 *
 * A message is a 4-byte big-endian length, then that many bytes of one
 * JSON object (UTF-8, no terminating NUL):
 *
 *   request   {"op": "list"|"load"|"remove"|"query"|"rpc"|"job"|"status", ...}
 *   response  {"ok": true, "result": ANY}
 *             {"ok": false, "errnum": N, "error": "text"}
 *
 * A message may be at most CONTROL_MAX_MESSAGE bytes (the length does not
 * count its own 4 bytes). Callers: control_server.c, control_ops.c and
 * src/jobtap (the client half, blocking). */
#ifndef SLURM_JOBTAP_CONTROL_PROTO_H
#define SLURM_JOBTAP_CONTROL_PROTO_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "host_error.h"

#define CONTROL_MAX_MESSAGE (1024 * 1024)
#define CONTROL_HEADER_SIZE 4

/* The frame of 'msg': header and compact JSON text in one new buffer of
 * *size bytes (caller frees). NULL with errno set (EMSGSIZE if the text is
 * longer than CONTROL_MAX_MESSAGE, ENOMEM). */
char *control_frame (json_t *msg, size_t *size);

/* The length a 4-byte header announces. */
uint32_t control_frame_length (const unsigned char header[CONTROL_HEADER_SIZE]);

/* Responses (new references; NULL only when out of memory).  ok takes
 * the caller's reference to 'result' (NULL means JSON null). */
json_t *control_response_ok (json_t *result);
json_t *control_response_error (int errnum, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

/* Parse a request body: a new object with a string "op" in *op (borrowed
 * from the object), or NULL with *errnum EPROTO and errtext "malformed
 * request: <why>". */
json_t *control_request_parse (const char *body,
                               size_t len,
                               const char **op,
                               int *errnum,
                               jobtap_host_error_t *errtext);

/* --- the client half (blocking I/O on a connected socket) ------------- */

/* Send one message. 0, or -1 with errno set. */
int control_send (int fd, json_t *msg);

/* Receive one message: a new object, or NULL with errno set (EPROTO for
 * a message that is no JSON object, EMSGSIZE, ECONNRESET for end of file
 * before a whole message). */
json_t *control_recv (int fd);

#endif
