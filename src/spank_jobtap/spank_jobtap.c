/* spank_jobtap.so: `--setattr=KEY[=VALUE]` for sbatch, srun and salloc,
 * Flux's `flux submit --setattr`: the job's jobspec gets
 * attributes.system.KEY, for jobtap plugins to read (docs/jobspec.md).
 *
 * A SPANK plugin (plugstack.conf, docs/admin.md), loaded by the client
 * commands on the submit host.  Each option is read as flux reads it
 * (src/jobspec/jobspec_setattr.c), so a bad one stops the command before
 * anything is submitted; after option processing the set goes, as one
 * JSON object, into the job's SPANK job-control environment:
 *
 *   SLURM_JOBTAP_SETATTR={"bank-check":"ok","limit":5}
 *
 * which the request carries to slurmctld (job_desc's spank_job_env) and
 * the job record keeps, where the adapter merges it into the jobspec.
 *
 * Slurm-free but for <slurm/spank.h>: it needs none of the jobtap
 * runtime, only jansson. */
#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>
#include <slurm/spank.h>

#include "jobspec_setattr.h"

SPANK_PLUGIN (jobtap, 1);

/* Slurm also forwards each option's last argument in the job-control
 * environment under this name (SPANK_OPTION_ENV_PREFIX, plugin, option),
 * and a batch job's environment then carries it as SLURM_SPANK_<name>,
 * which an sbatch inside the job would read as that option: a child job
 * would inherit one of its parent's attributes. */
#define OPTION_ENV "_SLURM_SPANK_OPTION_jobtap_setattr"

/* The options so far, as one object: a later one for a key wins.  Per
 * process, like the options. */
static json_t *attrs;

static int setattr_option (int val, const char *optarg, int remote)
{
    jobtap_host_error_t err;
    (void)val;

    /* slurmstepd gets srun's options again: the job exists by then */
    if (remote)
        return 0;
    if (!optarg) {
        slurm_error ("--setattr needs KEY[=VALUE]");
        return -1;
    }
    if (!attrs && !(attrs = json_object ())) {
        slurm_error ("--setattr: out of memory");
        return -1;
    }
    if (jobspec_setattr_add (attrs, optarg, &err) < 0) {
        slurm_error ("--setattr=%s: %s", optarg, err.text);
        return -1;
    }
    return 0;
}

static struct spank_option setattr_opt = {
    "setattr",
    "KEY[=VALUE]",
    "Set jobspec attribute attributes.system.KEY for jobtap plugins, as "
    "flux submit --setattr: KEY or system.KEY; VALUE is JSON if it parses "
    "as JSON, else a string (1 if omitted); ^KEY=FILE reads JSON from FILE. "
    "Repeatable.",
    1,
    0,
    setattr_option,
};

/* Options have to be registered here: a static spank_options table is
 * not read in the allocator context (sbatch, salloc).  slurmstepd needs
 * the option too, to take srun's forwarded copy. */
int slurm_spank_init (spank_t sp, int ac, char **av)
{
    spank_context_t ctx = spank_context ();
    spank_err_t rc;
    (void)ac;
    (void)av;

    if (ctx != S_CTX_LOCAL && ctx != S_CTX_ALLOCATOR && ctx != S_CTX_REMOTE)
        return 0;
    if ((rc = spank_option_register (sp, &setattr_opt)) != ESPANK_SUCCESS) {
        slurm_error ("jobtap: cannot register --setattr: %s",
                     spank_strerror (rc));
        return -1;
    }
    return 0;
}

/* Called once the command has read every option (per component of a
 * heterogeneous job), before it builds the request. */
int slurm_spank_init_post_opt (spank_t sp, int ac, char **av)
{
    spank_context_t ctx = spank_context ();
    jobtap_host_error_t err;
    spank_err_t rc;
    char *text;
    (void)ac;
    (void)av;

    if (ctx != S_CTX_LOCAL && ctx != S_CTX_ALLOCATOR)
        return 0;
    (void)spank_job_control_unsetenv (sp, OPTION_ENV);
    if (!attrs || json_object_size (attrs) == 0)
        return 0;
    if (!(text = jobspec_setattr_encode (attrs, &err))) {
        slurm_error ("--setattr: %s", err.text);
        return -1;
    }
    rc = spank_job_control_setenv (sp, JOBSPEC_SETATTR_ENV, text, 1);
    free (text);
    if (rc != ESPANK_SUCCESS) {
        slurm_error ("--setattr: cannot pass the attributes to the job: %s",
                     spank_strerror (rc));
        return -1;
    }
    return 0;
}
