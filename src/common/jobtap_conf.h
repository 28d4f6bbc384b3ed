/* The instance config (jobtap.conf).  Its entry points are the host API's
 * jobtap_host_load_config, _reload and _settings (host.h); this header
 * gives the other modules the [slurm-jobtap] settings.  Calls loader.c,
 * toml.cpp and log.c. */
#ifndef JOBTAP_JOBTAP_CONF_H
#define JOBTAP_JOBTAP_CONF_H

#include <jansson.h>

struct runtime;

/* The settings the runtime reads on every job, from the host's ops and the
 * loaded config (keep_eventlog): at init and at each (re)load. */
void conf_settings_apply (struct runtime *rt);

/* Let go of the config and what was read from it (the runtime's end). */
void conf_release (struct runtime *rt);

/* [slurm-jobtap] key as an integer, or dflt if unset or not an integer. */
json_int_t setting_int (struct runtime *rt, const char *key, json_int_t dflt);

#endif
