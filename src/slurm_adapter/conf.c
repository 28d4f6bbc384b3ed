/* The adapter's settings (conf.h). */
#include <config.h>

#include <string.h>

#include "src/common/slurm_xlator.h"
#include "src/common/log.h"

#include "conf.h"
#include "host.h"

void conf_load (struct conf *conf)
{
    json_t *s = jobtap_host_settings ();
    const char *mode = NULL;
    int period = -1;
    int log_spec = 0;

    if (s && json_unpack (s, "{s?s s?i s?b}", "priority-mode", &mode,
                          "reprioritize-period", &period, "log-jobspec",
                          &log_spec) < 0)
        error ("jobtap: [slurm-jobtap] priority-mode must be a string, "
               "reprioritize-period an integer and log-jobspec a boolean; "
               "using defaults");
    pthread_mutex_lock (&conf->lock);
    conf->priority_mode = PRIORITY_SITE_FACTOR;
    if (mode && !strcmp (mode, "authoritative"))
        conf->priority_mode = PRIORITY_AUTHORITATIVE;
    else if (mode && strcmp (mode, "site-factor"))
        error ("jobtap: [slurm-jobtap] priority-mode \"%s\" is not "
               "\"site-factor\" or \"authoritative\"; using site-factor",
               mode);
    conf->reprioritize_period = period >= 0 ? period : 30;
    conf->log_jobspec = log_spec;
    pthread_mutex_unlock (&conf->lock);
    json_decref (s);
}

bool conf_log_jobspec (struct conf *conf)
{
    pthread_mutex_lock (&conf->lock);
    bool on = conf->log_jobspec;
    pthread_mutex_unlock (&conf->lock);
    return on;
}

enum priority_mode conf_priority_mode (struct conf *conf)
{
    pthread_mutex_lock (&conf->lock);
    enum priority_mode mode = conf->priority_mode;
    pthread_mutex_unlock (&conf->lock);
    return mode;
}

int conf_reprioritize_period (struct conf *conf)
{
    pthread_mutex_lock (&conf->lock);
    int period = conf->reprioritize_period;
    pthread_mutex_unlock (&conf->lock);
    return period;
}
