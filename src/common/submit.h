/* What submission shares with restore and update: stack calls of
 * submit-time topics with the rejection message, the dependency scheme
 * check.  The host API's submit entry
 * points are in host.h. */
#ifndef JOBTAP_SUBMIT_H
#define JOBTAP_SUBMIT_H

#include <stdint.h>
#include <jansson.h>

#include "host.h"

struct job;

/* Stack-call a submit-time topic with extra IN fields 'in' (may be
 * NULL); on rejection (-1) err has the plugin's message or 'dflt'.
 * Returns how many plugins handled it. */
int submit_call (struct job *job,
                 const char *topic,
                 json_t *in,
                 const char *dflt,
                 jobtap_host_error_t *err);
/* job.dependency.<scheme> for each of attributes.system.dependencies;
 * -1 with the reason if one is unsupported or rejected. */
int check_dependencies (struct job *job, jobtap_host_error_t *err);

#endif
