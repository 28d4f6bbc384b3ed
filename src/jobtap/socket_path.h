/* socket_path: where the `jobtap` command finds slurmctld's control
 * socket, in this order: the --socket option, $JOBTAP_CONTROL_SOCKET,
 * control-socket in the [slurm-jobtap] table of jobtap.conf beside
 * slurm.conf ($SLURM_CONF or /etc/slurm/slurm.conf), else
 * StateSaveLocation of slurm.conf (default /var/spool/slurmctld) +
 * "/jobtap.sock", as the adapter (src/slurm_adapter/conf.c) decides.
 *
 * The readers are minimal on purpose (no TOML library in the command):
 * jobtap.conf's control-socket must be a one-line basic string, and
 * slurm.conf's Include lines are not followed. Called by jobtap.c. */
#ifndef SLURM_JOBTAP_CLI_SOCKET_PATH_H
#define SLURM_JOBTAP_CLI_SOCKET_PATH_H

/* A new string (caller frees); 'option' may be NULL. NULL only when out
 * of memory. */
char *socket_path_find (const char *option);

/* The control-socket value of the jobtap.conf text in 'path': a new
 * string, or NULL if the file or the setting is absent. */
char *socket_path_from_jobtap_conf (const char *path);

/* StateSaveLocation in the slurm.conf at 'path': a new string, or NULL. */
char *socket_path_state_save_location (const char *path);

#endif
