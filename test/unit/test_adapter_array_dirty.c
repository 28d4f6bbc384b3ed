/* src/slurm_adapter/array_dirty.c: the set of array records to look at
 * again before the agent's pass ends. */
#include <stdint.h>
#include <stdlib.h>

#include "array_dirty.h"
#include "tap.h"

int main (void)
{
    struct array_dirty d = {0};

    ok (array_dirty_mark (&d, 7) == 0 && array_dirty_mark (&d, 9) == 0
            && array_dirty_mark (&d, 7) == 0,
        "marking records (one twice)");
    ok (d.n == 2 && d.ids[0] == 7 && d.ids[1] == 9,
        "each is in the set once, in the order marked");
    struct array_dirty taken = array_dirty_take (&d);
    ok (taken.n == 2 && d.n == 0 && d.ids == NULL,
        "taking the set leaves an empty one");
    ok (array_dirty_mark (&d, 7) == 0 && d.n == 1,
        "a record taken may be marked again");
    array_dirty_free (&taken);
    for (uint32_t i = 0; i < 100; i++)
        array_dirty_mark (&d, i);
    ok (d.n == 100, "the set grows (100 records)");
    array_dirty_free (&d);
    ok (d.n == 0 && d.ids == NULL, "and is freed");
    done_testing ();
    return 0;
}
