/* What differs between the Slurm releases the adapter builds against, in
 * one place. Everything else in the adapter is written once for all of
 * them. Supported and tested: 22.05 (Debian 12), 24.11 (Debian 13), 25.11
 * and 26.05 (SchedMD's source). A threshold below is the first supported
 * release known to have the change; releases between two supported ones
 * may need it moved (docs/admin.md, "Other Slurm releases").
 *
 * Include after src/slurmctld/slurmctld.h, and after jobspec_build.h for
 * the jobspec mapping's part. */
#ifndef SLURM_JOBTAP_SLURM_COMPAT_H
#define SLURM_JOBTAP_SLURM_COMPAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "slurm/slurm.h"
#include "src/common/xstring.h"

#define JOBTAP_SLURM_AT_LEAST(major, minor, micro) \
    (SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM (major, minor, micro))

/* Whether update_job's rc asks to try again later: 22.05 refuses every
 * update of a job while slurmdbd sets its database index
 * (ESLURM_JOB_SETTING_DB_INX); 24.11 has no such refusal (nor the error). */
#if JOBTAP_SLURM_AT_LEAST(24, 11, 0)
#define JOBTAP_UPDATE_TRY_LATER(rc) ((void)(rc), false)
#else
#define JOBTAP_UPDATE_TRY_LATER(rc) ((rc) == ESLURM_JOB_SETTING_DB_INX)
#endif

/* The job a job_desc_msg_t names: its step_id's job since 25.11 (checked
 * there and on 26.05). */
#if JOBTAP_SLURM_AT_LEAST(25, 11, 0)
#define JOBTAP_DESC_JOB_ID(desc) ((desc)->step_id.job_id)
#else
#define JOBTAP_DESC_JOB_ID(desc) ((desc)->job_id)
#endif

/* job_modify() gained an err_msg, shown to the user of scontrol update, in
 * 23.02. Before, a rejection only reaches the user as its error code. */
#define JOBTAP_JOB_MODIFY_HAS_ERR_MSG JOBTAP_SLURM_AT_LEAST (23, 2, 0)

/* The type of job_record_t's details: "struct job_details" in 22.05, an
 * anonymous struct's typedef (job_details_t) in 24.11. Taken from the
 * record itself, so it is right for either. */
typedef __typeof__ (*((job_record_t *)NULL)->details) jobtap_job_details_t;

/* slurmctld is in control and has finished starting up: it has read its
 * state and its plugins' init() are done (the priority plugin is loaded).
 * Both releases start the state save thread only then, and join and clear
 * it when they give up control. Not the RPC thread: a 22.05 backup in
 * standby has one (and keeps its id while taking over), so its agent
 * would bind jobs from a job list that is empty or half-read, and forget
 * the kept state of every job missing from it. */
#define JOBTAP_SLURMCTLD_STARTED() (slurmctld_config.thread_id_save != 0)

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

/* Whether uid coordinates the account (Slurm's own test, include
 * src/common/assoc_mgr.h): 24.11 asks whether the caller holds the
 * assoc_mgr locks already (it does not here). */
#if JOBTAP_SLURM_AT_LEAST(24, 11, 0)
#define JOBTAP_IS_ACCT_COORD(uid, acct) \
    assoc_mgr_is_user_acct_coord (acct_db_conn, (uid), (acct), false)
#else
#define JOBTAP_IS_ACCT_COORD(uid, acct) \
    assoc_mgr_is_user_acct_coord (acct_db_conn, (uid), (acct))
#endif

/* Splitting a task off its array's record (as scontrol does for one task):
 * 24.11 asks whether the new record joins the job list (it must here). */
#if JOBTAP_SLURM_AT_LEAST(24, 11, 0)
#define JOBTAP_JOB_ARRAY_SPLIT(job) job_array_split ((job), true)
#else
#define JOBTAP_JOB_ARRAY_SPLIT(job) job_array_split ((job))
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

/* The node count the user gave as a maximum, or 0. Since 26.05 (checked
 * there; 25.11 does not) slurmctld sets max_nodes to the task count where
 * the user gave none, and marks it JOB_IMPLICIT_MAX_NODES. */
static inline uint32_t jobtap_compat_record_max_nodes (const job_record_t *j)
{
#ifdef JOB_IMPLICIT_MAX_NODES
    if (j->bit_flags & JOB_IMPLICIT_MAX_NODES)
        return 0;
#endif
    return j->details ? j->details->max_nodes : 0;
}

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


#ifdef SLURM_JOBTAP_JOBSPEC_BUILD_H
/* The licenses a job asked for. 24.11 (checked there) keeps them in
 * lic_req: its licenses also counts those that TRES requests imply. */
static inline const char *jobtap_compat_record_licenses (const job_record_t *j)
{
#if JOBTAP_SLURM_AT_LEAST(24, 11, 0)
    return j->lic_req;
#else
    return j->licenses;
#endif
}

/* --exclusive[=user|mcs|topo] as job_desc's shared; =topo is new in
 * 24.11. */
static inline enum jobspec_exclusive jobtap_compat_exclusive_of (
    uint16_t shared)
{
    switch (shared) {
    case JOB_SHARED_NONE:
        return JOBSPEC_EXCLUSIVE_NODE;
    case JOB_SHARED_USER:
        return JOBSPEC_EXCLUSIVE_USER;
    case JOB_SHARED_MCS:
        return JOBSPEC_EXCLUSIVE_MCS;
#if JOBTAP_SLURM_AT_LEAST(24, 11, 0)
    case JOB_SHARED_TOPO:
        return JOBSPEC_EXCLUSIVE_TOPO;
#endif
    default:
        return JOBSPEC_SHARED;
    }
}

/* The job_desc shared value of an exclusive kind; NO_VAL16 for
 * JOBSPEC_SHARED (Slurm's default), and for =topo before 24.11, which
 * has none (the caller refuses it). */
static inline uint16_t jobtap_compat_shared_of (enum jobspec_exclusive e)
{
    switch (e) {
    case JOBSPEC_EXCLUSIVE_NODE:
        return JOB_SHARED_NONE;
    case JOBSPEC_EXCLUSIVE_USER:
        return JOB_SHARED_USER;
    case JOBSPEC_EXCLUSIVE_MCS:
        return JOB_SHARED_MCS;
#if JOBTAP_SLURM_AT_LEAST(24, 11, 0)
    case JOBSPEC_EXCLUSIVE_TOPO:
        return JOB_SHARED_TOPO;
#endif
    default:
        return NO_VAL16;
    }
}

/* The record's kind of exclusive. 22.05's whole_node is one value
 * (WHOLE_NODE_MCS is 3); 24.11's is bits (WHOLE_NODE_MCS 4, WHOLE_TOPO). */
static inline enum jobspec_exclusive jobtap_compat_record_exclusive (
    const jobtap_job_details_t *det)
{
#if JOBTAP_SLURM_AT_LEAST(24, 11, 0)
    if (det->whole_node & WHOLE_TOPO)
        return JOBSPEC_EXCLUSIVE_TOPO;
    if (det->whole_node & WHOLE_NODE_MCS)
        return JOBSPEC_EXCLUSIVE_MCS;
    if (det->whole_node & WHOLE_NODE_USER)
        return JOBSPEC_EXCLUSIVE_USER;
#else
    if (det->whole_node == WHOLE_NODE_MCS)
        return JOBSPEC_EXCLUSIVE_MCS;
    if (det->whole_node == WHOLE_NODE_USER)
        return JOBSPEC_EXCLUSIVE_USER;
#endif
    return det->share_res == 0 && (det->whole_node & WHOLE_NODE_REQUIRED)
               ? JOBSPEC_EXCLUSIVE_NODE
               : JOBSPEC_SHARED;
}
#endif /* SLURM_JOBTAP_JOBSPEC_BUILD_H */

/* update_job changes a job's stderr path since 24.11 (checked there);
 * 22.05 ignores it. */
#define JOBTAP_UPDATE_JOB_HAS_STD_ERR JOBTAP_SLURM_AT_LEAST (24, 11, 0)

/* tres_per_task as a policy writes it (without 24.11's "cpu=N", see
 * above), for a job whose tres_per_task is old: 24.11's leading "cpu=N"
 * is kept, with cpus_per_task's count when that is set (not NO_VAL16).
 * xmalloc'd. */
static inline char *jobtap_compat_tres_per_task_write (const char *old,
                                                       const char *value,
                                                       uint16_t cpus_per_task)
{
#if JOBTAP_SLURM_AT_LEAST(24, 11, 0)
    if (old && strncmp (old, "cpu=", 4) == 0) {
        char *s = NULL;
        if (cpus_per_task != NO_VAL16)
            xstrfmtcat (s, "cpu=%u", (unsigned)cpus_per_task);
        else
            xstrncat (s, old, strcspn (old, ","));
        if (value && value[0])
            xstrfmtcat (s, ",%s", value);
        return s;
    }
#endif
    (void)old;
    (void)cpus_per_task;
    return xstrdup (value);
}

#endif
