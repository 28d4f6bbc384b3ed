/* Logging bridge (ctld_log.h). */
#include <config.h>

#include <string.h>
#include <syslog.h>

#include "src/common/slurm_xlator.h"
#include "src/common/log.h"

#include "ctld_log.h"

/* Every line from the runtime or a plugin starts with "jobtap" so admins
 * can grep slurmctld's log for the shim's decisions. */
void ctld_log (int level, const char *msg, void *arg)
{
    const char *prefix = strncmp (msg, "jobtap", 6) ? "jobtap: " : "";
    (void)arg;
    if (level <= LOG_ERR)
        error ("%s%s", prefix, msg);
    else if (level <= LOG_INFO)
        info ("%s%s", prefix, msg);
    else
        debug ("%s%s", prefix, msg);
}
