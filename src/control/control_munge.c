/* Requests sealed in munge credentials (control_munge.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <munge.h>

#include "control_munge.h"

char *control_munge_socket_of_authinfo (const char *authinfo)
{
    const char *s = authinfo;

    while (s && *s) {
        size_t len = strcspn (s, ",");
        if (!strncmp (s, "socket=", 7) && len > 7)
            return strndup (s + 7, len - 7);
        s += len;
        if (*s == ',')
            s++;
    }
    return NULL;
}

void *control_munge_ctx_create (const char *munge_socket)
{
    munge_ctx_t ctx = munge_ctx_create ();

    if (!ctx) {
        errno = ENOMEM;
        return NULL;
    }
    if (munge_socket && *munge_socket
        && munge_ctx_set (ctx, MUNGE_OPT_SOCKET, munge_socket)
               != EMUNGE_SUCCESS) {
        munge_ctx_destroy (ctx);
        errno = EINVAL;
        return NULL;
    }
    return ctx;
}

void control_munge_ctx_destroy (void *ctx)
{
    if (ctx)
        munge_ctx_destroy (ctx);
}

json_t *control_munge_seal (json_t *request,
                            const char *munge_socket,
                            jobtap_host_error_t *errtext)
{
    char *text = json_dumps (request, JSON_COMPACT);
    char *cred = NULL;
    munge_ctx_t ctx;
    munge_err_t e;
    json_t *frame;

    if (!text) {
        errprintf (errtext, "%s", strerror (ENOMEM));
        errno = ENOMEM;
        return NULL;
    }
    size_t len = strlen (text);
    if (len > CONTROL_MAX_SEALED) {
        errprintf (errtext,
                   "request of %zu bytes is larger than the limit of %d "
                   "bytes over TCP",
                   len, CONTROL_MAX_SEALED);
        free (text);
        errno = EMSGSIZE;
        return NULL;
    }
    if (!(ctx = control_munge_ctx_create (munge_socket))) {
        errprintf (errtext, "munge: %s", strerror (errno));
        free (text);
        return NULL;
    }
    e = munge_encode (&cred, ctx, text, (int)len);
    free (text);
    if (e != EMUNGE_SUCCESS) {
        errprintf (errtext, "munge: %s", munge_ctx_strerror (ctx));
        munge_ctx_destroy (ctx);
        errno = EPERM;
        return NULL;
    }
    munge_ctx_destroy (ctx);
    frame = json_pack ("{s:s}", "munge", cred);
    free (cred);
    if (!frame) {
        errprintf (errtext, "%s", strerror (ENOMEM));
        errno = ENOMEM;
    }
    return frame;
}

int control_munge_open (void *ctx,
                        const char *body,
                        size_t len,
                        char **request,
                        uint32_t *uid,
                        jobtap_host_error_t *errtext)
{
    json_t *frame = json_loadb (body, len, 0, NULL);
    const char *cred = NULL;
    void *payload = NULL;
    int payload_len = 0;
    uid_t cred_uid;
    gid_t cred_gid;
    munge_err_t e;

    if (!frame || !json_is_object (frame)) {
        json_decref (frame);
        errprintf (errtext, "malformed request: not a JSON object");
        errno = EPROTO;
        return -1;
    }
    if (json_unpack (frame, "{s:s}", "munge", &cred) < 0) {
        json_decref (frame);
        errprintf (errtext,
                   "authentication failed: a request over TCP must be sealed "
                   "in a munge credential");
        errno = EPERM;
        return -1;
    }
    e = munge_decode (cred, ctx, &payload, &payload_len, &cred_uid,
                      &cred_gid);
    json_decref (frame);
    if (e != EMUNGE_SUCCESS) {
        /* munge returns the payload of an expired or replayed credential
         * too: it is not to be trusted */
        free (payload);
        errprintf (errtext, "authentication failed: munge: %s",
                   munge_ctx_strerror (ctx) ? munge_ctx_strerror (ctx)
                                            : munge_strerror (e));
        errno = EPERM;
        return -1;
    }
    char *text = malloc ((size_t)payload_len + 1);
    if (!text) {
        free (payload);
        errprintf (errtext, "%s", strerror (ENOMEM));
        errno = ENOMEM;
        return -1;
    }
    if (payload_len > 0)
        memcpy (text, payload, (size_t)payload_len);
    text[payload_len] = '\0';
    free (payload);
    *request = text;
    *uid = (uint32_t)cred_uid;
    return 0;
}
