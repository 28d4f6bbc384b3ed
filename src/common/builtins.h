/* The builtin plugins' init functions, for loader.c's table: builtins.c
 * (.priority-default, .dependency-slurm, .update-duration) and
 * builtin_limits.c (.limit-job-size, .limit-duration). */
#ifndef JOBTAP_BUILTINS_H
#define JOBTAP_BUILTINS_H

#include <flux/core.h>

int builtin_priority_default_init (flux_plugin_t *p);
int builtin_dependency_slurm_init (flux_plugin_t *p);
int builtin_limit_job_size_init (flux_plugin_t *p);
int builtin_limit_duration_init (flux_plugin_t *p);
int builtin_update_duration_init (flux_plugin_t *p);

#endif
