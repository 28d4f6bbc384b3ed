/* A small set of array records to look at again (array_dirty.h): an
 * array's tasks change together, so it stays a few entries long. */
#include <stdlib.h>

#include "array_dirty.h"

int array_dirty_mark (struct array_dirty *d, uint32_t id)
{
    for (size_t i = 0; i < d->n; i++)
        if (d->ids[i] == id)
            return 0;
    if (d->n == d->size) {
        size_t size = d->size ? d->size * 2 : 16;
        uint32_t *ids = realloc (d->ids, size * sizeof (*ids));
        if (!ids)
            return -1;
        d->ids = ids;
        d->size = size;
    }
    d->ids[d->n++] = id;
    return 0;
}

struct array_dirty array_dirty_take (struct array_dirty *d)
{
    struct array_dirty taken = *d;
    *d = (struct array_dirty){0};
    return taken;
}

void array_dirty_free (struct array_dirty *d)
{
    free (d->ids);
    *d = (struct array_dirty){0};
}
