/* The one adapter context of the process. Slurm's plugin API calls the
 * entry points (adapter.h) with no context pointer, so they, and only
 * they, reach it here: lifecycle.c (init, fini, reconfigure) and the
 * hooks (hooks_submit.c, hooks_priority.c, hooks_prep.c). Every other
 * module gets the context as an argument. Defined, with its modules'
 * state, in lifecycle.c. */
#ifndef SLURM_JOBTAP_ADAPTER_INSTANCE_H
#define SLURM_JOBTAP_ADAPTER_INSTANCE_H

#include "ctx.h"

extern struct adapter_ctx adapter_instance;

#endif
