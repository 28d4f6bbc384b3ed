/* The control server's listening sockets (control_listen.h). */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "control_listen.h"
#include "host_error.h"

/* Make room at 'path' (control_listen_unix). */
static int clear_path (const char *path,
                       bool *taken_over,
                       jobtap_host_error_t *err)
{
    struct sockaddr_un addr = { .sun_family = AF_UNIX };
    struct stat st;
    int fd;

    *taken_over = false;
    if (lstat (path, &st) < 0)
        return errno == ENOENT ? 0 : errprintf (err, "%s: %s", path,
                                                strerror (errno));
    if (!S_ISSOCK (st.st_mode)) {
        errno = EEXIST;
        return errprintf (err, "%s: exists and is not a socket", path);
    }
    snprintf (addr.sun_path, sizeof (addr.sun_path), "%s", path);
    if ((fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) >= 0) {
        *taken_over = connect (fd, (struct sockaddr *)&addr, sizeof (addr))
                      == 0;
        close (fd);
    }
    if (unlink (path) < 0 && errno != ENOENT)
        return errprintf (err, "%s: cannot remove the old socket: %s", path,
                          strerror (errno));
    return 0;
}

int control_listen_unix (const char *path,
                         dev_t *dev,
                         ino_t *ino,
                         bool *taken_over,
                         jobtap_host_error_t *err)
{
    struct sockaddr_un addr = { .sun_family = AF_UNIX };
    struct stat st;
    int fd;

    if (strlen (path) >= sizeof (addr.sun_path)) {
        errno = ENAMETOOLONG;
        return errprintf (err, "%s: path is longer than %zu bytes", path,
                          sizeof (addr.sun_path) - 1);
    }
    if (clear_path (path, taken_over, err) < 0)
        return -1;
    strcpy (addr.sun_path, path);
    fd = socket (AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return errprintf (err, "socket: %s", strerror (errno));
    if (bind (fd, (struct sockaddr *)&addr, sizeof (addr)) < 0) {
        int e = errno;
        close (fd);
        errno = e;
        return errprintf (err, "%s: bind: %s", path, strerror (e));
    }
    if (chmod (path, 0666) < 0 || stat (path, &st) < 0 || listen (fd, 128) < 0) {
        int e = errno;
        unlink (path);
        close (fd);
        errno = e;
        return errprintf (err, "%s: %s", path, strerror (e));
    }
    *dev = st.st_dev;
    *ino = st.st_ino;
    return fd;
}

int control_listen_tcp (const char *address, int port, jobtap_host_error_t *err)
{
    struct addrinfo hints = {
        .ai_family = AF_UNSPEC,
        .ai_socktype = SOCK_STREAM,
        .ai_flags = AI_PASSIVE | AI_NUMERICSERV,
    };
    struct addrinfo *res = NULL, *ai;
    char service[16];
    int fd = -1, e = 0, rc;
    const int on = 1, off = 0;

    if (port <= 0 || port > 65535) {
        errno = EINVAL;
        return errprintf (err, "control port %d: not a port number", port);
    }
    if (!address || !*address || !strcmp (address, "*")) {
        address = NULL;
        hints.ai_family = AF_INET6; /* dual-stack: IPv4 too */
    }
    snprintf (service, sizeof (service), "%d", port);
    rc = getaddrinfo (address, service, &hints, &res);
    if (rc != 0 && !address) { /* no IPv6 on this host */
        hints.ai_family = AF_INET;
        rc = getaddrinfo (address, service, &hints, &res);
    }
    if (rc != 0) {
        errno = EINVAL;
        return errprintf (err, "control address %s: %s",
                          address ? address : "*", gai_strerror (rc));
    }
    for (ai = res; ai; ai = ai->ai_next) {
        fd = socket (ai->ai_family,
                     ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                     ai->ai_protocol);
        if (fd < 0) {
            e = errno;
            continue;
        }
        (void)setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof (on));
        /* Slurm 24.11's reconfigure starts the new slurmctld while the old
         * one still listens: both may hold the port (same uid only) until
         * the old one exits */
        (void)setsockopt (fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof (on));
        if (ai->ai_family == AF_INET6 && !address)
            (void)setsockopt (fd, IPPROTO_IPV6, IPV6_V6ONLY, &off,
                              sizeof (off));
        if (bind (fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen (fd, 128) == 0)
            break;
        e = errno;
        close (fd);
        fd = -1;
    }
    freeaddrinfo (res);
    if (fd < 0) {
        errno = e ? e : EADDRNOTAVAIL;
        return errprintf (err, "control port %s:%d: %s",
                          address ? address : "*", port, strerror (errno));
    }
    return fd;
}
