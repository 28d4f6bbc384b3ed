/* jobtap: drive the jobtap plugins of a running slurmctld, as `flux
 * jobtap` drives Flux's job manager: list, load, remove, query, call a
 * plugin's service (rpc), show a job as jobtap sees it, and say which
 * jobtap.conf is in use and whether the last reload was refused (status).
 *
 * Speaks to slurmctld's control socket (src/control/control_proto.h);
 * or, with --host, to its TCP control port with each request sealed in a
 * munge credential (control_munge.h); site_conf.c finds them, job_print.c
 * shows a job. docs/cli.md is the
 * manual. Exit status: 0, 1 for an error, 2 for a usage error. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <netdb.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>

#include "array_id.h"
#include "array_task.h"
#include "load_conf.h"
#include "control_proto.h"
#include "job_print.h"
#include "control_munge.h"
#include "site_conf.h"

/* How long to wait for slurmctld's answer: longer than the server's own
 * rpc timeout (60 s), so the server's ETIMEDOUT comes first. */
#define RESPONSE_TIMEOUT_S 75

static const char *usage_text =
    "Usage: jobtap [--socket PATH | --host HOST[:PORT]] COMMAND [ARGS]\n"
    "  list [--all] [--json]          plugins in call order (--all: with\n"
    "                                 the builtins)\n"
    "  load PATH [KEY=VALUE...]       load a plugin with this conf (values\n"
    "                                 that parse as JSON are JSON)\n"
    "  remove NAME|GLOB|all           remove plugins\n"
    "  query NAME                     a plugin's plugin.query, as JSON\n"
    "  rpc TOPIC [JSON|-]             call a plugin's service (payload from\n"
    "                                 the argument or stdin)\n"
    "  job ID [--json]                a job as jobtap sees it (ID: a job\n"
    "                                 id, ARRAYID_TASKID or a hetjob's\n"
    "                                 LEADER+OFFSET, as squeue shows them)\n"
    "  status [--json]                the jobtap.conf in use and the last\n"
    "                                 reload (exit 1 if it was refused)\n"
    "The socket: --socket, $JOBTAP_CONTROL_SOCKET, control-socket in\n"
    "jobtap.conf beside slurm.conf, or StateSaveLocation/jobtap.sock.\n"
    "--host: slurmctld's control port (PORT, or control-port in\n"
    "jobtap.conf), each request sealed with munge as Slurm's AuthInfo\n"
    "says.\n";

static void usage_error (const char *fmt, ...)
    __attribute__ ((format (printf, 1, 2), noreturn));
static void usage_error (const char *fmt, ...)
{
    va_list ap;
    fputs ("jobtap: ", stderr);
    va_start (ap, fmt);
    vfprintf (stderr, fmt, ap);
    va_end (ap);
    fputc ('\n', stderr);
    fputs (usage_text, stderr);
    exit (2);
}

static void die (const char *fmt, ...) __attribute__ ((format (printf, 1, 2),
                                                       noreturn));
static void die (const char *fmt, ...)
{
    va_list ap;
    fputs ("jobtap: ", stderr);
    va_start (ap, fmt);
    vfprintf (stderr, fmt, ap);
    va_end (ap);
    fputc ('\n', stderr);
    exit (1);
}

/* Where the requests go: the Unix socket, or a TCP port (host set). */
struct endpoint {
    char *path;
    const char *host;
    char port[16];
    char *munge_socket;
};

static int connect_tcp (const struct endpoint *ep)
{
    struct addrinfo hints = { .ai_family = AF_UNSPEC,
                              .ai_socktype = SOCK_STREAM };
    struct addrinfo *res, *ai;
    int fd = -1, e = 0, rc;

    if ((rc = getaddrinfo (ep->host, ep->port, &hints, &res)))
        die ("%s: %s", ep->host, gai_strerror (rc));
    for (ai = res; ai; ai = ai->ai_next) {
        if ((fd = socket (ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
                          ai->ai_protocol)) < 0) {
            e = errno;
            continue;
        }
        if (connect (fd, ai->ai_addr, ai->ai_addrlen) == 0)
            break;
        e = errno;
        close (fd);
        fd = -1;
    }
    freeaddrinfo (res);
    if (fd < 0)
        die ("cannot connect to slurmctld's jobtap control port %s:%s: %s%s",
             ep->host, ep->port, strerror (e),
             e == ECONNREFUSED ? " (is control-port set in jobtap.conf?)"
                               : "");
    return fd;
}

static int connect_unix (const char *path)
{
    struct sockaddr_un addr = { .sun_family = AF_UNIX };
    int fd;

    if (strlen (path) >= sizeof (addr.sun_path))
        die ("control socket %s: %s", path, strerror (ENAMETOOLONG));
    strcpy (addr.sun_path, path);
    if ((fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
        die ("socket: %s", strerror (errno));
    if (connect (fd, (struct sockaddr *)&addr, sizeof (addr)) < 0) {
        int e = errno;
        die ("cannot connect to slurmctld's jobtap control socket %s: %s%s",
             path, strerror (e),
             e == ENOENT || e == ECONNREFUSED
                 ? " (is slurmctld running with job_submit/jobtap?)"
                 : "");
    }
    return fd;
}

static int connect_to (const struct endpoint *ep)
{
    struct timeval send_tv = { 10, 0 }, recv_tv = { RESPONSE_TIMEOUT_S, 0 };
    int fd = ep->host ? connect_tcp (ep) : connect_unix (ep->path);

    (void)setsockopt (fd, SOL_SOCKET, SO_SNDTIMEO, &send_tv, sizeof (send_tv));
    (void)setsockopt (fd, SOL_SOCKET, SO_RCVTIMEO, &recv_tv, sizeof (recv_tv));
    return fd;
}

/* Send 'req' (taken), return the result of a successful response (a new
 * reference); an error response ends the program with "jobtap: WHAT:
 * <the server's text>". */
/* The request's result (new reference), or NULL with the server's error
 * in *errnum and err; a request that cannot be made at all dies. */
static json_t *try_call (const struct endpoint *ep,
                         json_t *req,
                         const char *what,
                         int *errnum,
                         jobtap_host_error_t *err)
{
    json_t *resp, *result = NULL;
    const char *error = NULL;
    int ok = 0;
    jobtap_host_error_t errtext;

    if (!req)
        die ("%s: %s", what, strerror (ENOMEM));
    if (ep->host) {
        json_t *sealed = control_munge_seal (req, ep->munge_socket, &errtext);
        if (!sealed)
            die ("%s: %s", what, errtext.text);
        json_decref (req);
        req = sealed;
    }
    int fd = connect_to (ep);
    if (control_send (fd, req) < 0)
        die ("%s: cannot send the request: %s", what, strerror (errno));
    json_decref (req);
    if (!(resp = control_recv (fd))) {
        int e = errno;
        die ("%s: no answer from slurmctld: %s", what,
             e == EAGAIN || e == EWOULDBLOCK ? strerror (ETIMEDOUT)
                                             : strerror (e));
    }
    close (fd);
    *errnum = 0;
    if (json_unpack (resp, "{s:b s?o s?i s?s}", "ok", &ok, "result", &result,
                     "errnum", errnum, "error", &error) < 0)
        die ("%s: %s", what, strerror (EPROTO));
    if (!ok) {
        if (!*errnum)
            *errnum = EPROTO;
        errprintf (err, "%s",
                   error && *error ? error : strerror (*errnum));
        json_decref (resp);
        return NULL;
    }
    result = json_incref (result ? result : json_null ());
    json_decref (resp);
    return result;
}

static json_t *call (const struct endpoint *ep, json_t *req, const char *what)
{
    jobtap_host_error_t err;
    int errnum;
    json_t *result = try_call (ep, req, what, &errnum, &err);
    if (!result)
        die ("%s: %s", what, err.text);
    return result;
}

static void print_json (json_t *o, size_t flags)
{
    char *s = json_dumps (o, flags | JSON_ENCODE_ANY);
    if (!s)
        die ("%s", strerror (ENOMEM));
    puts (s);
    free (s);
}

/* Options after the subcommand: only these flags, no other dashes. */
/* A subcommand's flags, before or after its arguments (as `jobtap job 42
 * --json` reads). The arguments are moved up to argv[1...]; returns their
 * end (the new argc). After "--" everything is an argument. */
static int parse_flags (int argc, char **argv, const char *cmd,
                        const char *allowed, bool *all, bool *json)
{
    int n = 1;
    bool flags_done = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!flags_done && !strcmp (a, "--"))
            flags_done = true;
        else if (flags_done || a[0] != '-' || a[1] == '\0')
            argv[n++] = argv[i];
        else if (!strcmp (a, "--all") && strstr (allowed, "all"))
            *all = true;
        else if (!strcmp (a, "--json") && strstr (allowed, "json"))
            *json = true;
        else
            usage_error ("%s: unknown option %s", cmd, a);
    }
    return n;
}

static int cmd_list (const struct endpoint *ep, int argc, char **argv)
{
    bool all = false, json = false;
    size_t i;
    json_t *v, *names;

    if (parse_flags (argc, argv, "list", "all json", &all, &json) > 1)
        usage_error ("list takes no arguments");
    names = call (ep, json_pack ("{s:s s:b}", "op", "list", "all", all),
                  "list");
    if (json)
        print_json (names, JSON_COMPACT);
    else
        json_array_foreach (names, i, v)
            puts (json_string_value (v) ? json_string_value (v) : "?");
    json_decref (names);
    return 0;
}

static int cmd_load (const struct endpoint *ep, int argc, char **argv)
{
    if (argc < 2)
        usage_error ("load needs a plugin PATH");
    jobtap_host_error_t err;
    json_t *conf = load_conf_from_pairs (argc - 2, argv + 2, &err);
    if (!conf)
        usage_error ("load: %s", err.text);
    char what[512];
    snprintf (what, sizeof (what), "load %s", argv[1]);
    json_decref (call (ep,
                       json_pack ("{s:s s:s s:o}", "op", "load", "path",
                                  argv[1], "conf", conf),
                       what));
    return 0;
}

static int cmd_remove (const struct endpoint *ep, int argc, char **argv)
{
    char what[512];
    if (argc != 2)
        usage_error ("remove needs one NAME, GLOB or all");
    snprintf (what, sizeof (what), "remove %s", argv[1]);
    json_decref (call (ep,
                       json_pack ("{s:s s:s}", "op", "remove", "name",
                                  argv[1]),
                       what));
    return 0;
}

static int cmd_query (const struct endpoint *ep, int argc, char **argv)
{
    char what[512];
    if (argc != 2)
        usage_error ("query needs one plugin NAME");
    snprintf (what, sizeof (what), "query %s", argv[1]);
    json_t *o = call (ep,
                      json_pack ("{s:s s:s}", "op", "query", "name", argv[1]),
                      what);
    print_json (o, JSON_INDENT (2));
    json_decref (o);
    return 0;
}

static json_t *payload_from (const char *arg)
{
    json_error_t jerr;
    json_t *o = !strcmp (arg, "-") ? json_loadf (stdin, 0, &jerr)
                                   : json_loads (arg, 0, &jerr);
    if (!o)
        usage_error ("rpc: the payload is not JSON: %s", jerr.text);
    if (!json_is_object (o))
        usage_error ("rpc: the payload must be a JSON object");
    return o;
}

static int cmd_rpc (const struct endpoint *ep, int argc, char **argv)
{
    char what[512];
    if (argc < 2 || argc > 3)
        usage_error ("rpc needs a TOPIC and at most one payload");
    json_t *payload = argc == 3 ? payload_from (argv[2]) : json_null ();
    snprintf (what, sizeof (what), "rpc %s", argv[1]);
    json_t *o = call (ep,
                      json_pack ("{s:s s:s s:o}", "op", "rpc", "topic",
                                 argv[1], "payload", payload),
                      what);
    print_json (o, JSON_COMPACT);
    json_decref (o);
    return 0;
}

static int cmd_job (const struct endpoint *ep, int argc, char **argv)
{
    bool all = false, json = false;
    char *end;
    char what[512];

    if (parse_flags (argc, argv, "job", "json", &all, &json) != 2)
        usage_error ("job needs one job ID");
    errno = 0;
    unsigned long long id = strtoull (argv[1], &end, 10);
    json_t *o = NULL;
    if (array_task_syntax (argv[1])) {
        /* a task is a job of its own (array_id.h); in an array from
         * before that, the job of the record holding the task */
        jobtap_host_error_t err;
        int errnum;
        unsigned long array = strtoul (argv[1], &end, 10);
        unsigned long task = strtoul (end + 1, NULL, 10);
        snprintf (what, sizeof (what), "job %s", argv[1]);
        if (array <= UINT32_MAX && task <= ARRAY_TASK_INDEX_MAX)
            o = try_call (ep,
                          json_pack ("{s:s s:I}", "op", "job", "id",
                                     (json_int_t)array_task_jobid (
                                         (uint32_t)array, (uint32_t)task)),
                          what, &errnum, &err);
        if (!o && array_task_record_id (argv[1], &id, &err) < 0)
            die ("job %s: %s", argv[1], err.text);
    }
    else if (!errno && end != argv[1] && *end == '+' && argv[1][0] != '-'
             && end[1] >= '0' && end[1] <= '9'
             && strspn (end + 1, "0123456789") == strlen (end + 1))
        ; /* a hetjob's component (LEADER+OFFSET): its leader's job */
    else if (errno || end == argv[1] || *end || argv[1][0] == '-')
        usage_error ("job: %s is not a job ID", argv[1]);
    if (!o) {
        snprintf (what, sizeof (what), "job %llu", id);
        o = call (ep, json_pack ("{s:s s:I}", "op", "job", "id", (json_int_t)id),
                  what);
    }
    if (json)
        print_json (o, JSON_INDENT (2));
    else
        job_print (stdout, o);
    json_decref (o);
    return 0;
}

/* Seconds since the epoch as Slurm prints times (local time). */
static const char *time_text (json_t *t, char *buf, size_t size)
{
    time_t secs = (time_t)json_number_value (t);
    struct tm tm;
    if (!json_is_number (t) || !localtime_r (&secs, &tm)
        || !strftime (buf, size, "%Y-%m-%dT%H:%M:%S", &tm))
        snprintf (buf, size, "?");
    return buf;
}

/* Exit 1 when the last reload was refused, so that a check after
 * `scontrol reconfigure` (which Slurm 22.05 reports as done before the
 * reload runs) can see it. */
static int cmd_status (const struct endpoint *ep, int argc, char **argv)
{
    bool all = false, json = false;
    char t1[64], t2[64];

    if (parse_flags (argc, argv, "status", "json", &all, &json) > 1)
        usage_error ("status takes no arguments");
    json_t *o = call (ep, json_pack ("{s:s}", "op", "status"), "status");
    json_t *reload = json_object_get (o, "reload");
    const char *path = json_string_value (json_object_get (o, "path"));
    const char *error = json_string_value (json_object_get (reload, "error"));
    bool refused = json_is_object (reload)
                   && !json_is_true (json_object_get (reload, "ok"));

    if (json)
        print_json (o, JSON_INDENT (2));
    else if (!json_is_true (json_object_get (o, "configured")))
        puts ("config: not loaded");
    else {
        printf ("config: %s\n", path ? path : "none (builtins only)");
        printf ("loaded: %s\n",
                time_text (json_object_get (o, "loaded_at"), t1, sizeof (t1)));
        if (!json_is_object (reload))
            puts ("last reload: none");
        else
            printf ("last reload: %s %s\n",
                    time_text (json_object_get (reload, "at"), t2,
                               sizeof (t2)),
                    refused ? "refused" : "ok");
        if (refused)
            printf ("error: %s\n", error ? error : "?");
    }
    json_decref (o);
    return refused ? 1 : 0;
}

static const struct command {
    const char *name;
    int (*run) (const struct endpoint *ep, int argc, char **argv);
} commands[] = {
    { "list", cmd_list },   { "load", cmd_load }, { "remove", cmd_remove },
    { "query", cmd_query }, { "rpc", cmd_rpc },   { "job", cmd_job },
    { "status", cmd_status }, { NULL, NULL },
};

/* --host HOST[:PORT] or [IPV6]:PORT; the port defaults to control-port in
 * jobtap.conf. */
static void endpoint_set_host (struct endpoint *ep, char *host)
{
    char *colon = NULL;
    int port = 0;

    if (host[0] == '[') { /* [::1]:6825 */
        char *close = strchr (host, ']');
        if (!close || (close[1] && close[1] != ':'))
            usage_error ("--host %s: not HOST[:PORT]", host);
        *close = '\0';
        colon = close[1] == ':' ? close + 1 : NULL;
        host++;
    }
    else if ((colon = strrchr (host, ':')) && strchr (host, ':') != colon)
        colon = NULL; /* a bare IPv6 address */
    if (colon) {
        char *end;
        *colon = '\0';
        long n = strtol (colon + 1, &end, 10);
        if (*end || n <= 0 || n > 65535)
            usage_error ("--host: %s is not a port number", colon + 1);
        port = (int)n;
    }
    if (!*host)
        usage_error ("--host needs a HOST");
    if (!port && !(port = site_conf_control_port ()))
        usage_error ("--host %s: no port given, and no control-port in "
                     "jobtap.conf",
                     host);
    ep->host = host;
    snprintf (ep->port, sizeof (ep->port), "%d", port);
}

int main (int argc, char **argv)
{
    static const struct option options[] = {
        { "socket", required_argument, NULL, 's' },
        { "host", required_argument, NULL, 'H' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *option_socket = NULL;
    char *option_host = NULL;
    struct endpoint ep = { 0 };
    int c;

    /* '+': stop at the subcommand, whose own options it parses */
    while ((c = getopt_long (argc, argv, "+s:H:h", options, NULL)) != -1) {
        if (c == 's')
            option_socket = optarg;
        else if (c == 'H')
            option_host = optarg;
        else if (c == 'h') {
            fputs (usage_text, stdout);
            return 0;
        }
        else
            usage_error ("unknown option");
    }
    if (option_socket && option_host)
        usage_error ("--socket and --host exclude each other");
    if (optind >= argc)
        usage_error ("no command");
    for (const struct command *cmd = commands; cmd->name; cmd++) {
        if (strcmp (cmd->name, argv[optind]) != 0)
            continue;
        if (option_host) {
            endpoint_set_host (&ep, option_host);
            ep.munge_socket = site_conf_munge_socket ();
        }
        else if (!(ep.path = site_conf_socket_path (option_socket)))
            die ("%s", strerror (ENOMEM));
        int rc = cmd->run (&ep, argc - optind, argv + optind);
        free (ep.path);
        free (ep.munge_socket);
        return rc;
    }
    usage_error ("unknown command %s", argv[optind]);
}
