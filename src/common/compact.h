/* compact.c: compact JSON text, written straight into a buffer. */
#ifndef JOBTAP_COMPACT_H
#define JOBTAP_COMPACT_H

#include <stddef.h>
#include <jansson.h>

/* Containers shared between jobspecs (the resources and task count that
 * jobs of one shape share: src/slurm_adapter/jobspec.c) are written once
 * and their text reused: a fifth of a jobspec's writing.  Each slot holds
 * a reference, so its address cannot come back as another tree while the
 * slot lives, and the tree stays as written: the runtime changes only
 * objects nobody else holds (spec.c, own_object).  Its holder serialises
 * its use (the runtime's, under the runtime lock). */
#define COMPACT_MEMO_SLOTS 4
struct compact_memo_slot {
    json_t *o;
    char *text;
    size_t len;
};
struct compact_memo {
    struct compact_memo_slot slot[COMPACT_MEMO_SLOTS];
    unsigned next;
};

/* The compact JSON text of o (malloc'd), NULL on failure; shared
 * subtrees through memo (NULL: none). */
char *compact_dumps (struct compact_memo *memo, json_t *o);
/* The same text appended to a growing malloc'd buffer (*data may be
 * NULL), NUL-terminated. -1 (the buffer as it was) on allocation failure. */
int compact_append (struct compact_memo *memo,
                    json_t *o,
                    char **data,
                    size_t *len,
                    size_t *cap);
/* Let go of what memo remembers (its references). */
void compact_memo_clear (struct compact_memo *memo);

#endif
