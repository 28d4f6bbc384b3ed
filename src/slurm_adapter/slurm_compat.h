/* What differs between the Slurm releases the adapter builds against, in
 * one place. Everything else in the adapter is written once for all of
 * them. Supported and tested: 22.05 (Debian 12) and 24.11 (Debian 13).
 * A threshold below is the first release known to have the change; where
 * it was only checked on 24.11, releases between the two may need it
 * moved (docs/admin.md, "Other Slurm releases").
 *
 * Include after src/slurmctld/slurmctld.h. */
#ifndef SLURM_JOBTAP_SLURM_COMPAT_H
#define SLURM_JOBTAP_SLURM_COMPAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "slurm/slurm.h"

#define JOBTAP_SLURM_AT_LEAST(major, minor, micro) \
    (SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM (major, minor, micro))

/* job_modify() gained an err_msg, shown to the user of scontrol update, in
 * 23.02. Before, a rejection only reaches the user as its error code. */
#define JOBTAP_JOB_MODIFY_HAS_ERR_MSG JOBTAP_SLURM_AT_LEAST (23, 2, 0)

/* The type of job_record_t's details: "struct job_details" in 22.05, an
 * anonymous struct's typedef (job_details_t) in 24.11. Taken from the
 * record itself, so it is right for either. */
typedef __typeof__ (*((job_record_t *)NULL)->details) jobtap_job_details_t;

/* slurmctld has finished starting up (its plugins' init() are done, so
 * the priority plugin is loaded). 22.05 starts an RPC thread last of all;
 * 24.11 serves RPCs from its connection manager instead, and the state
 * save thread is the last thread it starts before it serves them. */
#if JOBTAP_SLURM_AT_LEAST(24, 11, 0)
#define JOBTAP_SLURMCTLD_STARTED() (slurmctld_config.thread_id_save != 0)
#else
#define JOBTAP_SLURMCTLD_STARTED() (slurmctld_config.thread_id_rpc != 0)
#endif

/* scontrol reconfigure: 22.05 calls site_factor_p_reconfig() in the running
 * slurmctld. 24.11 starts slurmctld anew instead (exec, and under -D in
 * place), so init() loads the new configuration; it marks that start with
 * SLURMCTLD_RECONF in the environment. If init() fails there, a daemonized
 * slurmctld carries on with the old process and configuration, and one
 * under -D exits. */
#if JOBTAP_SLURM_AT_LEAST(24, 11, 0)
#define JOBTAP_RECONFIGURING() (getenv ("SLURMCTLD_RECONF") != NULL)
#else
#define JOBTAP_RECONFIGURING() false
#endif

/* The PrEp and GRES interfaces' headers moved from src/common to
 * src/interfaces in 23.02. */
#if JOBTAP_SLURM_AT_LEAST(23, 2, 0)
#define JOBTAP_PREP_H "src/interfaces/prep.h"
#define JOBTAP_GRES_H "src/interfaces/gres.h"
#else
#define JOBTAP_PREP_H "src/common/prep.h"
#define JOBTAP_GRES_H "src/common/gres.h"
#endif

/* Since 24.11 (checked there) sbatch -c N also sends "cpu=N" as the first
 * entry of tres_per_task. The jobspec carries cpus_per_task already, so
 * the jobspec's tres_per_task leaves it out: a policy sees the same
 * jobspec on either release. Returns a pointer into tpt, or NULL. */
static inline const char *jobtap_compat_tres_per_task (const char *tpt)
{
#if JOBTAP_SLURM_AT_LEAST(24, 11, 0)
    if (tpt && strncmp (tpt, "cpu=", 4) == 0) {
        const char *rest = strchr (tpt, ',');
        return rest ? rest + 1 : NULL;
    }
#endif
    return tpt;
}

#endif
