/* jobopts: jobtap-run's command line, sbatch-like job options included.
 *
 * Owns the options and turns the job options into struct jobspec_fields,
 * as sbatch and slurmctld would fill a job_desc, so src/jobspec builds the
 * jobspec slurmctld would build.  Called by jobtap-run.c only. */
#ifndef JOBTAP_RUN_JOBOPTS_H
#define JOBTAP_RUN_JOBOPTS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "jobspec_build.h"

/* What applies to every job of a run (the command line; script lines may
 * change the defaults for the jobs after them). */
struct runopts {
    const char *config; /* -C */
    const char *script; /* -f */
    int verbose;        /* -v, repeatable */
    bool print_jobspec; /* print each job's jobspec before submitting it */
    /* What slurmctld fills in for a job that asked for none: */
    const char *default_queue; /* the default partition */
    uint32_t default_time;     /* its DefaultTime/MaxTime, minutes; 0 = none */
    /* [policy]'s default queue (malloc'd, read once the config is loaded),
     * which comes before the default partition, as in slurmctld */
    char *policy_queue;
};

/* One job. */
struct jobopts {
    struct jobspec_fields f;
    bool time_set; /* -t given (f.time_limit 0 then means unlimited) */
    long uid;
    int urgency;
    uint64_t id; /* 0: the next free id */
    /* strings f points to that were built here (malloc'd) */
    char *cwd, *tres_per_job, *tres_per_node, *tres_per_task;
    json_t *setattr; /* --setattr options, as spank_jobtap.so keeps them */
    char *tres_per_socket, *cpus_per_tres, *mem_per_tres;
    char *std_out, *std_err, *mail_user;
};

void runopts_init (struct runopts *r);

void jobopts_init (struct jobopts *o);
void jobopts_free (struct jobopts *o);

/* Parse argv (getopt state reset) into o and r.  Returns the index of the
 * first non-option, or -1 on error (said on stderr).  -h prints the usage
 * and exits. */
int jobopts_parse (int argc, char **argv, struct jobopts *o, struct runopts *r);

/* The fields of the job o describes, r's defaults filled in (strings
 * borrowed from o and r). */
void jobopts_fields (const struct jobopts *o,
                     const struct runopts *r,
                     struct jobspec_fields *f);

/* The jobspec of the job o describes, r's defaults filled in.  New
 * reference, or NULL when out of memory. */
json_t *jobopts_jobspec (const struct jobopts *o, const struct runopts *r);

void jobopts_usage (FILE *f);

#endif
