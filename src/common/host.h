/* The interface between a scheduler adapter and the jobtap runtime. */
#ifndef SLURM_JOBTAP_HOST_H
#define SLURM_JOBTAP_HOST_H

#ifdef __cplusplus
extern "C" {
#endif

/* Version of the runtime library, for the adapters' load log line. */
const char *jobtap_runtime_version (void);

#ifdef __cplusplus
}
#endif

#endif
