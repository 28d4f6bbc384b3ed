/* The adapter's settings (conf.h). */
#include <config.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/common/slurm_xlator.h"
#include "src/common/log.h"
#include "src/common/read_config.h"

#include "conf.h"
#include "host.h"

/* reprioritize-period not given (any negative value given is logged). */
#define PERIOD_UNSET INT_MIN

void conf_load (struct conf *conf)
{
    json_t *s = jobtap_host_settings ();
    const char *mode = NULL;
    int period = PERIOD_UNSET;
    int log_spec = 0;
    const char *socket_path = NULL, *address = NULL;
    char *control_socket = NULL, *control_address = NULL;
    int port = 0;
    const char *state_path = NULL;
    char *state_dir = NULL;
    int state_sync = 1;
    bool policy_defaults = jobtap_host_policy_has_defaults ();
    const char *spool = slurm_conf.state_save_location
                            ? slurm_conf.state_save_location
                            : "/var/spool/slurmctld";

    if (s && json_unpack (s, "{s?s s?i s?b s?s s?i s?s s?s s?b}",
                          "priority-mode", &mode, "reprioritize-period",
                          &period, "log-jobspec", &log_spec,
                          "control-socket", &socket_path, "control-port",
                          &port, "control-address", &address, "state-dir",
                          &state_path, "state-sync", &state_sync) < 0)
        error ("jobtap: [slurm-jobtap] priority-mode must be a string, "
               "reprioritize-period an integer, log-jobspec a boolean, "
               "control-socket a string, control-port an integer, "
               "control-address a string, state-dir a string and "
               "state-sync a boolean; using defaults");
    if (state_path && *state_path && state_path[0] != '/') {
        error ("jobtap: [slurm-jobtap] state-dir \"%s\" is not an absolute "
               "path; using the default", state_path);
        state_path = NULL;
    }
    if (state_path && *state_path)
        state_dir = strdup (state_path);
    else if (!state_path
             && asprintf (&state_dir, "%s/jobtap-state", spool) < 0)
        state_dir = NULL;
    if (port < 0 || port > 65535) {
        error ("jobtap: [slurm-jobtap] control-port %d is not a port "
               "number; the control port stays closed",
               port);
        port = 0;
    }
    if (address && *address)
        control_address = strdup (address);
    if (socket_path && socket_path[0] != '/') {
        error ("jobtap: [slurm-jobtap] control-socket \"%s\" is not an "
               "absolute path; using the default",
               socket_path);
        socket_path = NULL;
    }
    if (socket_path)
        control_socket = strdup (socket_path);
    else if (asprintf (&control_socket, "%s/jobtap.sock", spool) < 0)
        control_socket = NULL;
    pthread_mutex_lock (&conf->lock);
    free (conf->state_dir);
    conf->state_dir = state_dir;
    conf->state_sync = state_sync;
    enum priority_mode priority_mode = PRIORITY_SITE_FACTOR;
    if (mode && !strcmp (mode, "authoritative"))
        priority_mode = PRIORITY_AUTHORITATIVE;
    else if (mode && strcmp (mode, "site-factor"))
        error ("jobtap: [slurm-jobtap] priority-mode \"%s\" is not "
               "\"site-factor\" or \"authoritative\"; using site-factor",
               mode);
    if (period < 0 && period != PERIOD_UNSET)
        error ("jobtap: [slurm-jobtap] reprioritize-period %d is negative; "
               "using 30",
               period);
    conf->reprioritize_period = period >= 0 ? period : 30;
    atomic_store_explicit (&conf->priority_mode, priority_mode,
                           memory_order_relaxed);
    atomic_store_explicit (&conf->log_jobspec, log_spec != 0,
                           memory_order_relaxed);
    atomic_store_explicit (&conf->policy_defaults, policy_defaults,
                           memory_order_relaxed);
    free (conf->control_socket);
    conf->control_socket = control_socket;
    conf->control_port = port;
    free (conf->control_address);
    conf->control_address = control_address;
    pthread_mutex_unlock (&conf->lock);
    json_decref (s);
}

bool conf_policy_defaults (struct conf *conf)
{
    return atomic_load_explicit (&conf->policy_defaults,
                                 memory_order_relaxed);
}

bool conf_log_jobspec (struct conf *conf)
{
    return atomic_load_explicit (&conf->log_jobspec, memory_order_relaxed);
}

enum priority_mode conf_priority_mode (struct conf *conf)
{
    return (enum priority_mode)atomic_load_explicit (&conf->priority_mode,
                                                     memory_order_relaxed);
}

int conf_reprioritize_period (struct conf *conf)
{
    pthread_mutex_lock (&conf->lock);
    int period = conf->reprioritize_period;
    pthread_mutex_unlock (&conf->lock);
    return period;
}

char *conf_control_socket (struct conf *conf)
{
    pthread_mutex_lock (&conf->lock);
    char *path = conf->control_socket ? strdup (conf->control_socket) : NULL;
    pthread_mutex_unlock (&conf->lock);
    return path;
}

int conf_control_port (struct conf *conf, char **address)
{
    pthread_mutex_lock (&conf->lock);
    int port = conf->control_port;
    *address = conf->control_address ? strdup (conf->control_address) : NULL;
    pthread_mutex_unlock (&conf->lock);
    return port;
}

char *conf_state_dir (struct conf *conf, bool *sync)
{
    pthread_mutex_lock (&conf->lock);
    char *dir = conf->state_dir ? strdup (conf->state_dir) : NULL;
    *sync = conf->state_sync;
    pthread_mutex_unlock (&conf->lock);
    return dir;
}

void conf_clear (struct conf *conf)
{
    pthread_mutex_lock (&conf->lock);
    free (conf->state_dir);
    conf->state_dir = NULL;
    free (conf->control_socket);
    conf->control_socket = NULL;
    free (conf->control_address);
    conf->control_address = NULL;
    pthread_mutex_unlock (&conf->lock);
}
