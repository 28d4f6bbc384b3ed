/* ctld_log: the runtime's and the jobtap plugins' log lines, into
 * slurmctld's log. Installed as the host log op (lifecycle.c); runs on any
 * thread, under the runtime's mutex, and takes no lock of its own. */
#ifndef SLURM_JOBTAP_ADAPTER_CTLD_LOG_H
#define SLURM_JOBTAP_ADAPTER_CTLD_LOG_H

/* level is a syslog level; arg is unused. */
void ctld_log (int level, const char *msg, void *arg);

#endif
