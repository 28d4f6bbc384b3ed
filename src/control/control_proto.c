/* The control socket's wire format (control_proto.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "control_proto.h"

char *control_frame (json_t *msg, size_t *size)
{
    char *text = json_dumps (msg, JSON_COMPACT);
    char *frame;
    size_t len;

    if (!text) {
        errno = ENOMEM;
        return NULL;
    }
    len = strlen (text);
    if (len > CONTROL_MAX_MESSAGE) {
        free (text);
        errno = EMSGSIZE;
        return NULL;
    }
    if (!(frame = malloc (CONTROL_HEADER_SIZE + len))) {
        free (text);
        errno = ENOMEM;
        return NULL;
    }
    frame[0] = (char)((len >> 24) & 0xff);
    frame[1] = (char)((len >> 16) & 0xff);
    frame[2] = (char)((len >> 8) & 0xff);
    frame[3] = (char)(len & 0xff);
    memcpy (frame + CONTROL_HEADER_SIZE, text, len);
    free (text);
    *size = CONTROL_HEADER_SIZE + len;
    return frame;
}

uint32_t control_frame_length (const unsigned char header[CONTROL_HEADER_SIZE])
{
    return (uint32_t)header[0] << 24 | (uint32_t)header[1] << 16
           | (uint32_t)header[2] << 8 | (uint32_t)header[3];
}

json_t *control_response_ok (json_t *result)
{
    return json_pack ("{s:b s:o}", "ok", 1, "result",
                      result ? result : json_null ());
}

json_t *control_response_error (int errnum, const char *fmt, ...)
{
    char text[1024];
    va_list ap;

    va_start (ap, fmt);
    vsnprintf (text, sizeof (text), fmt, ap);
    va_end (ap);
    return json_pack ("{s:b s:i s:s}", "ok", 0, "errnum", errnum, "error",
                      text);
}

json_t *control_request_parse (const char *body,
                               size_t len,
                               const char **op,
                               int *errnum,
                               jobtap_host_error_t *errtext)
{
    json_error_t jerr;
    json_t *req;

    *errnum = EPROTO;
    if (!(req = json_loadb (body, len, 0, &jerr))) {
        errprintf (errtext, "malformed request: %s", jerr.text);
        return NULL;
    }
    if (json_unpack (req, "{s:s}", "op", op) < 0) {
        errprintf (errtext,
                   "malformed request: no \"op\" string in the object");
        json_decref (req);
        return NULL;
    }
    *errnum = 0;
    return req;
}

static int write_all (int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write (fd, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

/* 0 when 'len' bytes were read, -1 with errno (ECONNRESET at end of
 * file). */
static int read_all (int fd, void *buf, size_t len)
{
    char *p = buf;
    while (len > 0) {
        ssize_t n = read (fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0) {
            errno = ECONNRESET;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int control_send (int fd, json_t *msg)
{
    size_t size;
    char *frame = control_frame (msg, &size);
    int rc;

    if (!frame)
        return -1;
    rc = write_all (fd, frame, size);
    free (frame);
    return rc;
}

json_t *control_recv (int fd)
{
    unsigned char header[CONTROL_HEADER_SIZE];
    uint32_t len;
    char *body;
    json_t *msg;

    if (read_all (fd, header, sizeof (header)) < 0)
        return NULL;
    len = control_frame_length (header);
    if (len > CONTROL_MAX_MESSAGE) {
        errno = EMSGSIZE;
        return NULL;
    }
    if (!(body = malloc (len ? len : 1)))
        return NULL;
    if (read_all (fd, body, len) < 0) {
        free (body);
        return NULL;
    }
    msg = json_loadb (body, len, 0, NULL);
    free (body);
    if (!msg || !json_is_object (msg)) {
        json_decref (msg);
        errno = EPROTO;
        return NULL;
    }
    return msg;
}
