/* jobspec_mail: Slurm's mail type names and bits, as sbatch parses them
 * and scontrol prints them (Slurm's proc_args.c, 22.05 and 24.11). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "jobspec_mail.h"

/* In the order scontrol prints them. */
static const struct {
    const char *name;
    uint16_t bit;
} names[] = {
    {"ARRAY_TASKS", JOBSPEC_MAIL_ARRAY_TASKS},
    {"INVALID_DEPEND", JOBSPEC_MAIL_INVALID_DEPEND},
    {"BEGIN", JOBSPEC_MAIL_BEGIN},
    {"END", JOBSPEC_MAIL_END},
    {"FAIL", JOBSPEC_MAIL_FAIL},
    {"REQUEUE", JOBSPEC_MAIL_REQUEUE},
    {"STAGE_OUT", JOBSPEC_MAIL_STAGE_OUT},
    {"TIME_LIMIT_50", JOBSPEC_MAIL_TIME50},
    {"TIME_LIMIT_80", JOBSPEC_MAIL_TIME80},
    {"TIME_LIMIT_90", JOBSPEC_MAIL_TIME90},
    {"TIME_LIMIT", JOBSPEC_MAIL_TIME100},
};
#define NNAMES (sizeof (names) / sizeof (names[0]))

/* sbatch's ALL: not the time limits nor array tasks. */
#define MAIL_ALL                                                               \
    (JOBSPEC_MAIL_INVALID_DEPEND | JOBSPEC_MAIL_BEGIN | JOBSPEC_MAIL_END |     \
     JOBSPEC_MAIL_FAIL | JOBSPEC_MAIL_REQUEUE | JOBSPEC_MAIL_STAGE_OUT)

const char *jobspec_mail_type_text (uint16_t bits, char *buf, size_t size)
{
    size_t len = 0;

    if (size == 0)
        return "";
    buf[0] = '\0';
    if (bits == 0) {
        snprintf (buf, size, "NONE");
        return buf;
    }
    for (size_t i = 0; i < NNAMES && len < size; i++) {
        if (bits & names[i].bit)
            len += snprintf (buf + len, size - len, "%s%s", len ? "," : "",
                             names[i].name);
    }
    return buf;
}

int jobspec_mail_type_parse (const char *text, uint16_t *bits)
{
    char *copy, *save = NULL, *tok;
    uint16_t b = 0;
    int rc = 0, seen = 0;

    if (!text || !(copy = strdup (text)))
        return -1;
    for (tok = strtok_r (copy, ",", &save); tok && rc == 0;
         tok = strtok_r (NULL, ",", &save)) {
        size_t i;
        seen++;
        if (!strcasecmp (tok, "NONE")) {
            b = 0; /* as sbatch: NONE ends the list */
            break;
        }
        if (!strcasecmp (tok, "ALL")) {
            b |= MAIL_ALL;
            continue;
        }
        for (i = 0; i < NNAMES && strcasecmp (tok, names[i].name); i++)
            ;
        if (i == NNAMES)
            rc = -1;
        else
            b |= names[i].bit;
    }
    free (copy);
    if (rc < 0 || seen == 0)
        return -1;
    *bits = b;
    return 0;
}
