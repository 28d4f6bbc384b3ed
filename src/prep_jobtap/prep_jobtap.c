/* prep/jobtap: the job lifecycle in real time. slurmctld calls
 * prolog_slurmctld when it has allocated a job and epilog_slurmctld when
 * the job ends; the shared adapter gives jobtap's job.state.run (with R)
 * and job.state.cleanup there, and holds the job's start or end while a
 * plugin's prolog or epilog runs (Slurm's asynchronous PrEp).
 *
 * slurmd loads PrEp plugins too, where the adapter (which refers to
 * slurmctld's own data) cannot be loaded: so this plugin does not link
 * it, and in slurmctld opens it at init. In slurmd it does nothing. */
#include <config.h>

#include <dlfcn.h>
#include <stdbool.h>

#include "src/common/slurm_xlator.h"
#include "src/common/log.h"
#include "src/common/run_in_daemon.h"
#include "src/slurmctld/slurmctld.h"

#include "slurm_compat.h"
#include JOBTAP_PREP_H

const char plugin_name[] = "jobtap PrEp plugin";
const char plugin_type[] = "prep/jobtap";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

#define ADAPTER_LIBRARY "libslurm-jobtap-adapter.so"

static void *adapter;
static int (*adapter_init) (const char *plugin_type);
static void (*adapter_fini) (const char *plugin_type);
static int (*adapter_prolog) (job_record_t *job, bool *async);
static int (*adapter_epilog) (job_record_t *job, bool *async);

static void *symbol (const char *name)
{
    void *sym = dlsym (adapter, name);
    if (!sym)
        error ("%s: %s", ADAPTER_LIBRARY, dlerror ());
    return sym;
}

extern int init (void)
{
    if (!running_in_slurmctld ())
        return SLURM_SUCCESS;
    /* found by this plugin's RUNPATH, or already loaded by the others */
    if (!(adapter = dlopen (ADAPTER_LIBRARY, RTLD_NOW | RTLD_GLOBAL))) {
        error ("jobtap: cannot load %s: %s", ADAPTER_LIBRARY, dlerror ());
        return SLURM_ERROR;
    }
    if (!(adapter_init = symbol ("jobtap_slurm_init"))
        || !(adapter_fini = symbol ("jobtap_slurm_fini"))
        || !(adapter_prolog = symbol ("jobtap_slurm_prep_prolog"))
        || !(adapter_epilog = symbol ("jobtap_slurm_prep_epilog"))
        || adapter_init (plugin_type) != SLURM_SUCCESS) {
        dlclose (adapter);
        adapter = NULL;
        return SLURM_ERROR;
    }
    info ("loaded: job.state.run and cleanup as Slurm starts and ends jobs");
    return SLURM_SUCCESS;
}

extern int fini (void)
{
    if (adapter) {
        adapter_fini (plugin_type);
        /* not dlclose: the adapter library stays, as its -z nodelete
         * runtime does (threads it started may still be joining) */
        adapter = NULL;
    }
    return SLURM_SUCCESS;
}

/* The callbacks slurmctld gives at start-up: the adapter calls Slurm's
 * exported prep_*_slurmctld_callback functions instead, which are the same
 * and exist also after a reconfigure that passes none. */
extern void prep_p_register_callbacks (prep_callbacks_t *callbacks)
{
    (void)callbacks;
}

/* slurmd's prolog and epilog: nothing to do there. */
extern int prep_p_prolog (job_env_t *job_env, slurm_cred_t *cred)
{
    (void)job_env;
    (void)cred;
    return SLURM_SUCCESS;
}

extern int prep_p_epilog (job_env_t *job_env, slurm_cred_t *cred)
{
    (void)job_env;
    (void)cred;
    return SLURM_SUCCESS;
}

/* In a thread of its own with the job write lock held, once the job is
 * allocated (it waits in CONFIGURING while *async). */
extern int prep_p_prolog_slurmctld (job_record_t *job_ptr, bool *async)
{
    return adapter ? adapter_prolog (job_ptr, async) : SLURM_SUCCESS;
}

/* With the job write lock held, as the job ends (its nodes are released;
 * it stays COMPLETING while *async). */
extern int prep_p_epilog_slurmctld (job_record_t *job_ptr, bool *async)
{
    return adapter ? adapter_epilog (job_ptr, async) : SLURM_SUCCESS;
}

/* Asked once at init: only slurmctld's hooks are wanted. */
extern void prep_p_required (prep_call_type_t type, bool *required)
{
    *required = running_in_slurmctld ()
                && (type == PREP_PROLOG_SLURMCTLD
                    || type == PREP_EPILOG_SLURMCTLD);
}
