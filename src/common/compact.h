/* compact.c: compact JSON text, written straight into a buffer. */
#ifndef JOBTAP_COMPACT_H
#define JOBTAP_COMPACT_H

#include <stddef.h>
#include <jansson.h>

/* The compact JSON text of o (malloc'd), NULL on failure.  Not
 * thread-safe (it remembers shared subtrees' text): under the runtime
 * lock.  compact_memo_clear lets go of what it remembers. */
char *compact_dumps (json_t *o);
/* The same text appended to a growing malloc'd buffer (*data may be
 * NULL), NUL-terminated. -1 (the buffer as it was) on allocation failure. */
int compact_append (json_t *o, char **data, size_t *len, size_t *cap);
void compact_memo_clear (void);

#endif
