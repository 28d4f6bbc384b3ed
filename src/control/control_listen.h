/* control_listen: the control server's listening sockets. A Unix socket
 * at a path (every user may connect; each request is authorized on its
 * own), and, where the site asks for one, a TCP port whose requests are
 * sealed in munge credentials (control_munge.h). Both non-blocking and
 * close-on-exec. Callers: control_server.c. */
#ifndef SLURM_JOBTAP_CONTROL_LISTEN_H
#define SLURM_JOBTAP_CONTROL_LISTEN_H

#include <stdbool.h>
#include <sys/types.h>

#include "host.h"

/* Listen at 'path' (mode 0666). A socket file already there is replaced,
 * also one another process still serves: Slurm 24.11's reconfigure starts
 * the new slurmctld before the old one exits. *taken_over says whether
 * someone still served it; *dev and *ino identify our file, so that only
 * it is removed at the end. The fd, or -1 with errno and err set. */
int control_listen_unix (const char *path,
                         dev_t *dev,
                         ino_t *ino,
                         bool *taken_over,
                         jobtap_host_error_t *err);

/* Listen on TCP 'port' at 'address' (a host name or numeric address;
 * NULL or "" or "*": every address, IPv6 and IPv4). SO_REUSEPORT, so that
 * a slurmctld replacing this one (24.11's reconfigure) can listen before
 * this one has closed; a port another program holds fails. The fd, or -1
 * with errno and err set ("control port *:6825: Address already in
 * use"). */
int control_listen_tcp (const char *address, int port, jobtap_host_error_t *err);

#endif
