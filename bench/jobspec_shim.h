/* bench/micro's view of the shim's jobspec build (jobspec_shim.c). */
#ifndef BENCH_JOBSPEC_SHIM_H
#define BENCH_JOBSPEC_SHIM_H
#include <jansson.h>

void bench_desc_init (void);
json_t *bench_jobspec_build (void); /* new reference */
int bench_urgency (void);
int bench_apply_updates (json_t *updates); /* 0 or -1 */

#endif
