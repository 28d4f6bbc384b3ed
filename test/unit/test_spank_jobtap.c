/* spank_jobtap.so without Slurm: the plugin is loaded as sbatch, srun,
 * salloc and slurmstepd load it, but against stubs of the SPANK functions
 * it calls (exported by this program), so the test sees what it
 * registers, what it says to the user and what it puts in the job-control
 * environment in each context. */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <slurm/slurm_version.h>
#include <slurm/spank.h>

#include "tap.h"

static spank_context_t context;
static struct spank_option *registered;
static char last_error[512];
static char set_name[64], set_value[1024], unset_name[64];
static int setenv_calls, unsetenv_calls;

spank_context_t spank_context (void)
{
    return context;
}

spank_err_t spank_option_register (spank_t sp, struct spank_option *opt)
{
    (void)sp;
    registered = opt;
    return ESPANK_SUCCESS;
}

spank_err_t spank_job_control_setenv (spank_t sp,
                                      const char *name,
                                      const char *value,
                                      int overwrite)
{
    (void)sp;
    setenv_calls++;
    snprintf (set_name, sizeof (set_name), "%s", name);
    snprintf (set_value, sizeof (set_value), "%s", value);
    return overwrite == 1 ? ESPANK_SUCCESS : ESPANK_BAD_ARG;
}

spank_err_t spank_job_control_unsetenv (spank_t sp, const char *name)
{
    (void)sp;
    unsetenv_calls++;
    snprintf (unset_name, sizeof (unset_name), "%s", name);
    return ESPANK_SUCCESS;
}

const char *spank_strerror (spank_err_t err)
{
    (void)err;
    return "stub error";
}

void slurm_error (const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (last_error, sizeof (last_error), fmt, ap);
    va_end (ap);
}

static spank_f *init, *post_opt;
static int handle; /* any address will do for spank_t */
#define SP ((spank_t)&handle)

/* The option as Slurm calls it for one --setattr. */
static int option (const char *arg, int remote)
{
    last_error[0] = '\0';
    return registered->cb (registered->val, arg, remote);
}

static void reset (void)
{
    setenv_calls = unsetenv_calls = 0;
    set_name[0] = set_value[0] = unset_name[0] = '\0';
}

static void test_symbols (void *dso)
{
    const char *name = dlsym (dso, "plugin_name");
    const char *type = dlsym (dso, "plugin_type");
    const unsigned *version = dlsym (dso, "plugin_version");

    is (name, "jobtap",
        "plugin_name is jobtap (Slurm names the option env "
        "after it)");
    is (type, "spank", "plugin_type is spank");
    ok (version && *version == SLURM_VERSION_NUMBER,
        "plugin_version is the Slurm it was built for");
    ok (dlsym (dso, "spank_options") == NULL,
        "no static spank_options table (sbatch and salloc ignore one)");
}

static void test_contexts (void)
{
    context = S_CTX_SLURMD;
    ok (init (SP, 0, NULL) == 0 && !registered, "slurmd: nothing registered");
    context = S_CTX_JOB_SCRIPT;
    ok (init (SP, 0, NULL) == 0 && !registered, "prolog/epilog: nothing");
    context = S_CTX_REMOTE;
    ok (init (SP, 0, NULL) == 0 && registered,
        "slurmstepd: --setattr registered (srun forwards it)");
    registered = NULL;
    context = S_CTX_ALLOCATOR;
    ok (init (SP, 0, NULL) == 0 && registered,
        "sbatch/salloc: --setattr registered");
    is (registered->name, "setattr", "the option is --setattr");
    ok (registered->has_arg == 1, "... with an argument");
    is (registered->arginfo, "KEY[=VALUE]", "... shown as KEY[=VALUE]");
}

static void test_options (void)
{
    reset ();
    context = S_CTX_ALLOCATOR;
    ok (post_opt (SP, 0, NULL) == 0, "no option: post-option succeeds");
    ok (setenv_calls == 0, "... and sets nothing");
    is (unset_name, "_SLURM_SPANK_OPTION_jobtap_setattr",
        "Slurm's copy of the option's last value is taken out of the "
        "job-control environment (a child sbatch would inherit it)");

    ok (option ("bank-check=ok", 0) == 0, "--setattr=bank-check=ok");
    ok (option ("system.limit=5", 0) == 0, "--setattr=system.limit=5");
    ok (option ("^nosuch=/nonexistent/file.json", 1) == 0,
        "slurmstepd's call (remote) is ignored");
    ok (option ("user.x=1", 0) != 0, "--setattr=user.x=1 is refused");
    is (last_error,
        "--setattr=user.x=1: only system attributes (system.KEY, or KEY) "
        "reach the jobspec of a Slurm job",
        "... with a message naming the option");
    ok (option ("duration=60", 0) != 0, "--setattr=duration=60 is refused");
    is (last_error,
        "--setattr=duration=60: attributes.system.duration is the Slurm "
        "job's own: set it with --time",
        "... naming the Slurm option to use");
    ok (option (NULL, 0) != 0, "no argument at all is refused");

    reset ();
    ok (post_opt (SP, 0, NULL) == 0, "post-option succeeds");
    ok (setenv_calls == 1, "one variable is set");
    is (set_name, "SLURM_JOBTAP_SETATTR", "SLURM_JOBTAP_SETATTR");
    is (set_value, "{\"bank-check\":\"ok\",\"limit\":5}",
        "a JSON object of the accepted options");

    reset ();
    context = S_CTX_LOCAL;
    ok (option ("bank-check=deny", 0) == 0, "srun: a later option ...");
    ok (post_opt (SP, 0, NULL) == 0 && setenv_calls == 1,
        "... the set goes to the job-control environment ...");
    is (set_value, "{\"bank-check\":\"deny\",\"limit\":5}",
        "... replaces the key's value");

    reset ();
    context = S_CTX_REMOTE;
    ok (post_opt (SP, 0, NULL) == 0 && setenv_calls == 0 && unsetenv_calls == 0,
        "slurmstepd: the job exists, nothing is set");
}

int main (void)
{
    void *dso = dlopen (SPANK_JOBTAP, RTLD_NOW | RTLD_LOCAL);

    if (!dso)
        bail_out ("dlopen %s: %s", SPANK_JOBTAP, dlerror ());
    init = (spank_f *)dlsym (dso, "slurm_spank_init");
    post_opt = (spank_f *)dlsym (dso, "slurm_spank_init_post_opt");
    if (!init || !post_opt)
        bail_out ("slurm_spank_init or slurm_spank_init_post_opt missing");
    test_symbols (dso);
    test_contexts ();
    test_options ();
    done_testing ();
    return 0;
}
