/* The Slurm side of slurm-jobtap, shared by job_submit/jobtap,
 * site_factor/jobtap and prep/jobtap (one copy per slurmctld: libslurm-jobtap-adapter.so).
 *
 * Lock order: slurmctld locks, then the runtime's mutex, then the
 * adapter's action queue. Nothing here takes a slurmctld lock while
 * holding either of ours, and no hook takes a slurmctld lock. */
#ifndef SLURM_JOBTAP_ADAPTER_H
#define SLURM_JOBTAP_ADAPTER_H

#include "src/slurmctld/slurmctld.h"

/* init()/fini() of either plugin. The first init loads jobtap.conf (from
 * beside slurm.conf) and starts the agent thread; returns SLURM_ERROR with
 * the reason logged if the config cannot be loaded. */
int jobtap_slurm_init (const char *plugin_type);
void jobtap_slurm_fini (const char *plugin_type);

/* job_submit/jobtap */
int jobtap_slurm_job_submit (job_desc_msg_t *desc,
                             uint32_t submit_uid,
                             char **err_msg);
/* err_msg: where the release lets a rejection's text reach the user of
 * scontrol update (NULL where it does not: slurm_compat.h). */
int jobtap_slurm_job_modify (job_desc_msg_t *desc,
                             job_record_t *job,
                             uint32_t submit_uid,
                             char **err_msg);

/* prep/jobtap (job write lock held) */
int jobtap_slurm_prep_prolog (job_record_t *job, bool *async);
int jobtap_slurm_prep_epilog (job_record_t *job, bool *async);

/* site_factor/jobtap */
void jobtap_slurm_site_factor_set (job_record_t *job);
void jobtap_slurm_site_factor_update (void);
void jobtap_slurm_reconfig (void);
/* site_factor/jobtap's fini, before jobtap_slurm_fini: slurmctld is
 * shutting down (or, 24.11 on, restarting to reconfigure), and unloads
 * priority/multifactor and this plugin next while the others hold the
 * runtime a while yet. The agent, whose passes call into both
 * (set_job_prio), stops first, after the pass it may be in. */
void jobtap_slurm_priority_fini (void);

#endif
