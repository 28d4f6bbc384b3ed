/* libFuzzer harness: the control socket's request path.
 *
 * The input is what a client sends: a 4-byte length and a body.  It goes
 * through the command's receive (control_recv, over a pipe) and the
 * server's parse (control_request_parse, as control_server.c calls it);
 * a request that parses runs (control_ops_run) on a runtime with its
 * builtins, from an owner, except load, which runs for a plain user (so
 * it is refused: the fuzzer would otherwise dlopen what it names), and
 * remove, refused too (each input starts from the same plugins).
 * Checks: a parse either gives an object with a string "op" or an EPROTO
 * "malformed request: ..."; every response is {"ok": true, ...} or
 * {"ok": false, "errnum": N, "error": S} and frames again. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "control_ops.h"
#include "control_proto.h"
#include "host.h"

#define MAX_INPUT 60000 /* below a pipe's buffer: one write, no thread */

static void quiet (int level, const char *msg, void *arg)
{
    (void)level, (void)msg, (void)arg;
}

static const struct jobtap_host_ops ops = {.log = quiet};

int LLVMFuzzerInitialize (int *argc, char ***argv)
{
    jobtap_host_error_t err;
    (void)argc, (void)argv;
    if (jobtap_host_init (&ops, NULL) < 0 ||
        jobtap_host_load_config (NULL, &err) < 0) {
        fprintf (stderr, "fuzz_control: runtime: %s\n", err.text);
        exit (1);
    }
    return 0;
}

static void fail (const char *what, const char *detail)
{
    fprintf (stderr, "fuzz_control: %s: %s\n", what, detail ? detail : "");
    abort ();
}

static void check_response (json_t *resp)
{
    int ok, errnum;
    const char *error;
    size_t size;

    if (!resp)
        fail ("no response", NULL);
    if (json_unpack (resp, "{s:b}", "ok", &ok) < 0)
        fail ("response without ok", NULL);
    if (!ok && json_unpack (resp, "{s:i s:s}", "errnum", &errnum, "error",
                            &error) < 0)
        fail ("error response without errnum and error", NULL);
    char *frame = control_frame (resp, &size);
    if (!frame && errno != EMSGSIZE)
        fail ("response does not frame", strerror (errno));
    free (frame);
}

static int answers;

static void rpc_done (json_t *payload, int errnum, const char *errstr,
                      void *arg)
{
    (void)arg;
    json_t *resp = control_ops_rpc_response (payload, errnum, errstr);
    check_response (resp);
    json_decref (resp);
    __atomic_add_fetch (&answers, 1, __ATOMIC_SEQ_CST);
}

/* The command's half: the same bytes read back as one message. */
static void client_recv (const uint8_t *data, size_t size)
{
    int fds[2];
    if (pipe (fds) < 0)
        fail ("pipe", strerror (errno));
    if (size && write (fds[1], data, size) != (ssize_t)size)
        fail ("write", strerror (errno));
    close (fds[1]);
    errno = 0;
    json_t *msg = control_recv (fds[0]);
    close (fds[0]);
    if (!msg && errno != EPROTO && errno != EMSGSIZE && errno != ECONNRESET)
        fail ("control_recv errno", strerror (errno));
    if (msg && !json_is_object (msg))
        fail ("control_recv gave a non-object", NULL);
    json_decref (msg);
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    jobtap_host_error_t errtext;
    const char *op = NULL;
    int errnum = 0;

    if (size > MAX_INPUT)
        return 0;
    client_recv (data, size);
    if (size < CONTROL_HEADER_SIZE)
        return 0;
    uint32_t len = control_frame_length (data);
    if (len > size - CONTROL_HEADER_SIZE)
        len = (uint32_t)(size - CONTROL_HEADER_SIZE);
    const char *body = (const char *)data + CONTROL_HEADER_SIZE;

    json_t *req = control_request_parse (body, len, &op, &errnum, &errtext);
    if (!req) {
        if (errnum != EPROTO
            || strncmp (errtext.text, "malformed request: ", 19))
            fail ("parse error", errtext.text);
        return 0;
    }
    if (!json_is_object (req) || !op ||
        !json_is_string (json_object_get (req, "op")) ||
        strcmp (op, json_string_value (json_object_get (req, "op"))))
        fail ("parse gave no op", NULL);

    struct control_caller caller = {
        .uid = 1000,
        .rolemask = strcmp (op, "load") && strcmp (op, "remove")
                        ? JOBTAP_ROLE_OWNER
                        : JOBTAP_ROLE_USER,
    };
    json_t *resp = control_ops_run (op, req, &caller, rpc_done, NULL);
    if (resp) {
        check_response (resp);
        json_decref (resp);
    }
    json_decref (req);
    return 0;
}
