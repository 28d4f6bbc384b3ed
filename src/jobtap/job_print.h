/* job_print: `jobtap job ID` as text, from the job object the control
 * socket returns (jobtap_host_job_info: state, urgency, priority,
 * dependencies, flags, annotations, eventlog). Called by jobtap.c. */
#ifndef SLURM_JOBTAP_CLI_JOB_PRINT_H
#define SLURM_JOBTAP_CLI_JOB_PRINT_H

#include <stdio.h>
#include <jansson.h>

void job_print (FILE *out, json_t *job);

#endif
