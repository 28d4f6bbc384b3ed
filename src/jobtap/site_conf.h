/* site_conf: what the `jobtap` command reads of the site's slurm.conf
 * ($SLURM_CONF or /etc/slurm/slurm.conf) and of the jobtap.conf beside
 * it, to find slurmctld's control endpoint as the adapter
 * (src/slurm_adapter/conf.c, control.c) sets it up.
 *
 * jobtap.conf is read as slurmctld reads it (toml.h); slurm.conf's
 * reader is minimal (its Include lines are not followed). Called by
 * jobtap.c. */
#ifndef SLURM_JOBTAP_CLI_SITE_CONF_H
#define SLURM_JOBTAP_CLI_SITE_CONF_H

/* The control socket, in this order: 'option' (the --socket option; may
 * be NULL), $JOBTAP_CONTROL_SOCKET, control-socket in jobtap.conf, else
 * StateSaveLocation (default /var/spool/slurmctld) + "/jobtap.sock". A
 * new string (caller frees); NULL only when out of memory. */
char *site_conf_socket_path (const char *option);

/* control-port in jobtap.conf, or 0 if it is absent or no port number. */
int site_conf_control_port (void);

/* The munged Slurm uses: socket= in slurm.conf's AuthInfo (a new string),
 * or NULL for munge's default socket. */
char *site_conf_munge_socket (void);

/* The value of 'key' in the [slurm-jobtap] table of the jobtap.conf at
 * 'path' (a string, or an integer as text): a new string, or NULL if the
 * file, its TOML or the key is not there. */
char *site_conf_jobtap_value (const char *path, const char *key);

/* The value of 'key' (case-insensitive, the last one counts) in the
 * slurm.conf at 'path': a new string, or NULL. */
char *site_conf_slurm_value (const char *path, const char *key);

#endif
