/* jobspec_mail: Slurm's mail types as text, both ways.
 *
 * Owns the names sbatch --mail-type takes and scontrol shows, with
 * Slurm's bit values (the adapter checks them against slurm.h), so the
 * builder, the update check and jobtap-run agree without Slurm.  Callers:
 * src/jobspec, src/slurm_adapter/jobspec_apply.c, src/jobtap-run. */
#ifndef SLURM_JOBTAP_JOBSPEC_MAIL_H
#define SLURM_JOBTAP_JOBSPEC_MAIL_H

#include <stddef.h>
#include <stdint.h>

/* Slurm's MAIL_* bits (the same in 22.05 and 24.11). */
#define JOBSPEC_MAIL_BEGIN 0x0001
#define JOBSPEC_MAIL_END 0x0002
#define JOBSPEC_MAIL_FAIL 0x0004
#define JOBSPEC_MAIL_REQUEUE 0x0008
#define JOBSPEC_MAIL_TIME100 0x0010
#define JOBSPEC_MAIL_TIME90 0x0020
#define JOBSPEC_MAIL_TIME80 0x0040
#define JOBSPEC_MAIL_TIME50 0x0080
#define JOBSPEC_MAIL_STAGE_OUT 0x0100
#define JOBSPEC_MAIL_ARRAY_TASKS 0x0200
#define JOBSPEC_MAIL_INVALID_DEPEND 0x0400

/* The bits as scontrol shows them ("BEGIN,END"; "NONE" for 0), in buf. */
const char *jobspec_mail_type_text (uint16_t bits, char *buf, size_t size);

/* A --mail-type list ("begin,end", "ALL", "NONE"; any case) as bits.
 * 0, or -1 for an empty list or an unknown name (sbatch would refuse
 * or ignore it). */
int jobspec_mail_type_parse (const char *text, uint16_t *bits);

#endif
