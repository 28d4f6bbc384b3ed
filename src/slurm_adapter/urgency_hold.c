/* The user's hold that urgency 0 stands for (urgency_hold.h). */
#include "urgency_hold.h"

enum urgency_step urgency_hold_step (enum held_by now, bool held)
{
    if (held)
        return now == HELD_BY_USER || now == HELD_BY_OPERATOR
                   ? URGENCY_KEEP
                   : URGENCY_USER_HOLD;
    return now == HELD_BY_USER ? URGENCY_RELEASE : URGENCY_KEEP;
}
