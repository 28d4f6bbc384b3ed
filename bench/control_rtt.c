/* control-rtt: the round trip of a service call through slurmctld's jobtap
 * control socket, as a client on the same machine sees it.
 *
 *   control-rtt SOCKET TOPIC CALLS [RATE]
 *
 * Makes CALLS calls of TOPIC (payload {}), one connection per call as the
 * jobtap command does, and prints the median, p99 and max in microseconds.
 * With RATE (calls per second) the calls are paced, for a background load
 * beside a throughput run (bench/control.sh); 0 or absent: back to back. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "control_proto.h"

static double now_us (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int call_once (const char *path, const char *topic)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    int fd, ok = 0;
    json_t *req, *resp;

    if (strlen (path) >= sizeof (addr.sun_path))
        return -1;
    strcpy (addr.sun_path, path);
    if ((fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
        return -1;
    if (connect (fd, (struct sockaddr *)&addr, sizeof (addr)) < 0) {
        close (fd);
        return -1;
    }
    req = json_pack ("{s:s s:s s:{}}", "op", "rpc", "topic", topic, "payload");
    if (req && control_send (fd, req) == 0 && (resp = control_recv (fd))) {
        json_unpack (resp, "{s:b}", "ok", &ok);
        json_decref (resp);
    }
    json_decref (req);
    close (fd);
    return ok ? 0 : -1;
}

static int cmp (const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main (int argc, char **argv)
{
    if (argc < 4) {
        fprintf (stderr, "usage: control-rtt SOCKET TOPIC CALLS [RATE]\n");
        return 2;
    }
    const char *path = argv[1], *topic = argv[2];
    long calls = atol (argv[3]);
    double rate = argc > 4 ? atof (argv[4]) : 0;
    double *rtt = calloc (calls > 0 ? calls : 1, sizeof (*rtt));
    long failed = 0;
    double start = now_us ();

    if (!rtt || calls <= 0)
        return 2;
    for (long i = 0; i < calls; i++) {
        if (rate > 0) {
            double due = start + i * 1e6 / rate, t = now_us ();
            if (due > t)
                usleep ((useconds_t)(due - t));
        }
        double t0 = now_us ();
        if (call_once (path, topic) < 0)
            failed++;
        rtt[i] = now_us () - t0;
    }
    qsort (rtt, calls, sizeof (*rtt), cmp);
    printf ("calls %ld failed %ld median_us %.0f p99_us %.0f max_us %.0f\n",
            calls, failed, rtt[calls / 2], rtt[(calls * 99) / 100],
            rtt[calls - 1]);
    free (rtt);
    return failed ? 1 : 0;
}
