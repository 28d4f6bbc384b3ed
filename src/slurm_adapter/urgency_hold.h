/* urgency_hold: what Flux's hold (urgency 0) being set or lifted does to a
 * pending Slurm job, given how the job is held now. Urgency 0 is the
 * user's hold (JobHeldUser); an operator's hold (JobHeldAdmin: scontrol
 * hold by root or SlurmUser) already holds the job and stays the
 * operator's, which its user cannot lift, also when a restarted or
 * taking-over slurmctld tells the runtime's urgency 0 again.
 *
 * Pure: no Slurm types or locks (actions.c maps the job record). */
#ifndef SLURM_JOBTAP_ADAPTER_URGENCY_HOLD_H
#define SLURM_JOBTAP_ADAPTER_URGENCY_HOLD_H

#include <stdbool.h>

enum held_by {
    HELD_BY_NOBODY,   /* not held (or by something not listed here) */
    HELD_BY_USER,     /* Slurm's user hold */
    HELD_BY_OPERATOR, /* Slurm's admin hold */
    HELD_BY_JOBTAP,   /* the adapter's hold for a dependency or priority */
};

enum urgency_step {
    URGENCY_KEEP,      /* leave the job as it is */
    URGENCY_USER_HOLD, /* hold it as its user's hold */
    URGENCY_RELEASE,   /* lift its user's hold */
};

/* 'held': urgency is 0 (Flux's hold) in SCHED; false: it no longer is. */
enum urgency_step urgency_hold_step (enum held_by now, bool held);

#endif
