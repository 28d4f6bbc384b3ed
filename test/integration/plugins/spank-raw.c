/* A SPANK plugin for t0920: --raw-setattr=TEXT puts TEXT in the job's
 * SLURM_JOBTAP_SETATTR as it is, past spank_jobtap.so's checks (listed
 * after it in plugstack.conf, it has the last word), as a hand-made
 * request could: what slurmctld makes of a set that is not what
 * spank_jobtap.so writes. */
#include <stddef.h>
#include <slurm/spank.h>

SPANK_PLUGIN (jobtap_test_raw, 1);

static const char *raw;

static int raw_option (int val, const char *optarg, int remote)
{
    (void)val;
    if (!remote)
        raw = optarg;
    return 0;
}

static struct spank_option raw_opt = {
    "raw-setattr", "TEXT", "SLURM_JOBTAP_SETATTR=TEXT, unchecked (tests)", 1, 0,
    raw_option,
};

int slurm_spank_init (spank_t sp, int ac, char **av)
{
    spank_context_t ctx = spank_context ();
    (void)ac;
    (void)av;
    if (ctx != S_CTX_LOCAL && ctx != S_CTX_ALLOCATOR && ctx != S_CTX_REMOTE)
        return 0;
    return spank_option_register (sp, &raw_opt) == ESPANK_SUCCESS ? 0 : -1;
}

int slurm_spank_init_post_opt (spank_t sp, int ac, char **av)
{
    (void)ac;
    (void)av;
    if (!raw || (spank_context () != S_CTX_LOCAL &&
                 spank_context () != S_CTX_ALLOCATOR))
        return 0;
    return spank_job_control_setenv (sp, "SLURM_JOBTAP_SETATTR", raw, 1) ==
                   ESPANK_SUCCESS
               ? 0
               : -1;
}
