/* src/slurm_adapter/superseded.c: a queued post-submit update keeps only
 * the keys jobtap has not changed since. */
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "superseded.h"
#include "tap.h"

static json_t *spec_with_duration (double d)
{
    return json_pack ("{s:{s:{s:f s:s}}}", "attributes", "system",
                      "duration", d, "job_name", "a");
}

int main (void)
{
    json_t *spec = spec_with_duration (180.0);
    char *dropped = NULL;

    ok (json_real_value (spec_dotted_get (spec, "attributes.system.duration"))
            == 180.0,
        "spec_dotted_get finds a nested value");
    ok (spec_dotted_get (spec, "attributes.system.nope") == NULL
            && spec_dotted_get (spec, "attributes.system.duration.x") == NULL,
        "and NULL for a missing key");

    /* the plugin set 120; an operator's scontrol update set 180 since */
    json_t *u = json_pack ("{s:f s:s}", "attributes.system.duration", 120.0,
                           "attributes.system.job_name", "a");
    isint (updates_drop_superseded (u, spec, &dropped), 1,
           "one key superseded");
    is (dropped ? dropped : "", "attributes.system.duration",
        "the duration, which jobtap changed since");
    ok (json_object_size (u) == 1
            && json_object_get (u, "attributes.system.job_name"),
        "the name, unchanged since, is still made");
    free (dropped);
    json_decref (u);

    u = json_pack ("{s:i}", "attributes.system.duration", 180);
    isint (updates_drop_superseded (u, spec, &dropped), 0,
           "an update jobtap still has is kept (180 is 180.0)");
    ok (dropped == NULL && json_object_size (u) == 1, "whole");
    json_decref (u);

    u = json_pack ("{s:n s:i}", "attributes.system.gone",
                   "attributes.system.new", 3);
    isint (updates_drop_superseded (u, spec, &dropped), 1,
           "a key set since removed: superseded; a removal still absent: "
           "kept");
    is (dropped ? dropped : "", "attributes.system.new", "(the one set)");
    free (dropped);
    json_decref (u);
    json_decref (spec);
    done_testing ();
}
