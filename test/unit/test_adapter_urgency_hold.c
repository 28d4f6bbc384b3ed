/* Flux's hold and Slurm's holds (src/slurm_adapter/urgency_hold.c): urgency
 * 0 holds a job as its user's hold unless it is held by its user or an
 * operator already; lifting it releases only the user's hold. */
#include <stdbool.h>

#include "tap.h"
#include "urgency_hold.h"

int main (void)
{
    ok (urgency_hold_step (HELD_BY_NOBODY, true) == URGENCY_USER_HOLD,
        "urgency 0 holds a job nobody holds as its user's hold");
    ok (urgency_hold_step (HELD_BY_USER, true) == URGENCY_KEEP,
        "a job its user holds stays so");
    ok (urgency_hold_step (HELD_BY_OPERATOR, true) == URGENCY_KEEP,
        "an operator's hold stays the operator's (not turned into the "
        "user's, which the user could lift)");
    ok (urgency_hold_step (HELD_BY_JOBTAP, true) == URGENCY_USER_HOLD,
        "a job the adapter holds for a dependency becomes the user's hold");
    ok (urgency_hold_step (HELD_BY_USER, false) == URGENCY_RELEASE,
        "urgency raised: the user's hold is lifted");
    ok (urgency_hold_step (HELD_BY_OPERATOR, false) == URGENCY_KEEP,
        "but not an operator's");
    ok (urgency_hold_step (HELD_BY_JOBTAP, false) == URGENCY_KEEP,
        "nor the adapter's");
    ok (urgency_hold_step (HELD_BY_NOBODY, false) == URGENCY_KEEP,
        "and a job nobody holds is left alone");
    done_testing ();
    return 0;
}
