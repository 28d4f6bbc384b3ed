/* array_task: a job array's task as squeue names it (ARRAYID_TASKID)
 * turned into the id of the Slurm job record that holds the task (the
 * task's own once Slurm split it off, else the array's), by asking
 * squeue: Slurm's own answer, on every release. */
#ifndef JOBTAP_CLI_ARRAY_TASK_H
#define JOBTAP_CLI_ARRAY_TASK_H

#include <stdbool.h>
#include <stddef.h>

#include "host_error.h"

/* Whether text is ARRAYID_TASKID (two decimal numbers and an underscore). */
bool array_task_syntax (const char *text);

/* The record id of the task text names: 0 with *id set, or -1 with why
 * it could not in err (squeue's own error when it gave one). */
int array_task_record_id (const char *text,
                          unsigned long long *id,
                          jobtap_host_error_t *err);

#endif
