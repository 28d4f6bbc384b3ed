/* src/jobtap/site_conf.c: how the jobtap command finds slurmctld's control
 * endpoint from $SLURM_CONF and the jobtap.conf beside it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "site_conf.h"
#include "tap.h"

static char dir[80], slurm_conf[120], jobtap_conf[120];

static void write_file (const char *path, const char *text)
{
    FILE *f = fopen (path, "w");
    if (!f || fputs (text, f) < 0 || fclose (f) != 0)
        bail_out ("cannot write %s", path);
}

/* is() on a new string, which it frees. */
static void is_new (char *got, const char *want, const char *what)
{
    is (got ? got : "(null)", want, "%s", what);
    free (got);
}

int main (void)
{
    const char *tmp = getenv ("TMPDIR");

    snprintf (dir, sizeof (dir), "%s/test_site_conf.XXXXXX",
              tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp (dir))
        bail_out ("mkdtemp");
    snprintf (slurm_conf, sizeof (slurm_conf), "%s/slurm.conf", dir);
    snprintf (jobtap_conf, sizeof (jobtap_conf), "%s/jobtap.conf", dir);
    setenv ("SLURM_CONF", slurm_conf, 1);
    unsetenv ("JOBTAP_CONTROL_SOCKET");

    is_new (site_conf_socket_path (NULL), "/var/spool/slurmctld/jobtap.sock",
            "no slurm.conf: the default StateSaveLocation");
    write_file (slurm_conf, "ClusterName=c\n"
                            "statesavelocation = /first\n"
                            "StateSaveLocation=/state # the last one counts\n"
                            "#StateSaveLocation=/commented\n"
                            "AuthType=auth/munge\n"
                            "AuthInfo=ttl=60,socket=/run/m/munge.sock\n");
    is_new (site_conf_slurm_value (slurm_conf, "StateSaveLocation"), "/state",
            "slurm.conf: case-insensitive, the last one counts, # comments");
    is_new (site_conf_socket_path (NULL), "/state/jobtap.sock",
            "the socket in StateSaveLocation");
    is_new (site_conf_munge_socket (), "/run/m/munge.sock",
            "munged's socket from AuthInfo");
    isint (site_conf_control_port (), 0, "no jobtap.conf: no control port");

    write_file (jobtap_conf,
                "[job-manager]\n"
                "control-socket = \"/not/this/table\"\n"
                "[slurm-jobtap]\n"
                "control-socket = \"/run/jt \\\"q\\\".sock\"\n"
                "control-port = 6825 # the admin hosts' port\n"
                "control-address = '127.0.0.1'\n");
    is_new (site_conf_socket_path (NULL), "/run/jt \"q\".sock",
            "control-socket of [slurm-jobtap] only, with escapes");
    isint (site_conf_control_port (), 6825, "control-port, comment after it");
    is_new (site_conf_jobtap_value (jobtap_conf, "control-address"),
            "127.0.0.1", "a literal string");
    is_new (site_conf_jobtap_value (jobtap_conf, "nosuch"), "(null)",
            "an absent key");
    setenv ("JOBTAP_CONTROL_SOCKET", "/env.sock", 1);
    is_new (site_conf_socket_path (NULL), "/env.sock",
            "$JOBTAP_CONTROL_SOCKET comes before jobtap.conf");
    is_new (site_conf_socket_path ("/opt.sock"), "/opt.sock",
            "--socket comes before all");

    write_file (jobtap_conf, "[slurm-jobtap]\ncontrol-port = 99999\n");
    isint (site_conf_control_port (), 0, "a control-port out of range: none");
    write_file (jobtap_conf, "[slurm-jobtap]\ncontrol-port = \"6825\"\n");
    isint (site_conf_control_port (), 0,
           "a quoted port is no port, as slurmctld reads it");
    write_file (jobtap_conf, "[slurm-jobtap]\ncontrol-socket = \"/a.sock\"\n"
                             "[slurm-jobtap.nested]\nx = 1\n"
                             "[other]\ncontrol-socket = \"/b.sock\"\n");
    is_new (site_conf_jobtap_value (jobtap_conf, "control-socket"), "/a.sock",
            "a table after [slurm-jobtap] does not take its keys");
    write_file (jobtap_conf, "[slurm-jobtap]\ncontrol-socket = \"/a.sock\n");
    is_new (site_conf_jobtap_value (jobtap_conf, "control-socket"), "(null)",
            "a jobtap.conf that is no TOML has no setting (slurmctld refuses "
            "it too)");
    write_file (jobtap_conf, "slurm-jobtap.control-port = 7000\n");
    isint (site_conf_control_port (), 7000, "a dotted key is read as TOML");
    write_file (slurm_conf, "AuthInfo=ttl=60\n");
    is_new (site_conf_munge_socket (), "(null)",
            "AuthInfo without socket=: munge's default");

    unlink (slurm_conf);
    unlink (jobtap_conf);
    rmdir (dir);
    done_testing ();
}
