/* superseded: which keys of a plugin's queued post-submit update are
 * still to be made in Slurm. The agent applies such an update later
 * (post_update.h); meanwhile a newer change (`scontrol update`, made in
 * jobtap and Slurm at once) may have set a key again, and applying the
 * older value would undo it in Slurm alone. Pure: no slurmctld. */
#ifndef SLURM_JOBTAP_ADAPTER_SUPERSEDED_H
#define SLURM_JOBTAP_ADAPTER_SUPERSEDED_H

#include <jansson.h>

/* The value at a dotted key ("attributes.system.duration") in a jobspec
 * (borrowed), or NULL. */
json_t *spec_dotted_get (json_t *spec, const char *key);

/* Remove from 'updates' (dotted key -> value) each key whose value in
 * 'spec', jobtap's jobspec now, is not the update's value: jobtap has
 * changed it since. A key absent from 'spec' counts as null. Returns the
 * number of keys removed; their names, comma separated, in *dropped
 * when not NULL (malloc'd, NULL if none). */
int updates_drop_superseded (json_t *updates, json_t *spec, char **dropped);

#endif
