/* rsummary.c: R's one-line summary, as Flux's schedulers annotate an
 * allocation (annotations.sched.resource_summary). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "rsummary.h"
#include "tap.h"

static const char *summary_of (const char *R_text)
{
    static char out[256];
    json_t *R = json_loads (R_text, 0, NULL);
    char *s = R ? rsummary (R) : NULL;
    snprintf (out, sizeof (out), "%s", s ? s : "(null)");
    free (s);
    json_decref (R);
    return out;
}

int main (void)
{
    is (summary_of ("{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"0\","
                    "\"children\":{\"core\":\"0-1\"}}]}}"),
        "rank0/core[0-1]", "one rank, two cores");
    is (summary_of ("{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"0\","
                    "\"children\":{\"core\":\"3\"}}]}}"),
        "rank0/core3", "one core: no brackets");
    is (summary_of ("{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"0-1\","
                    "\"children\":{\"gpu\":\"0\",\"core\":\"0-3\"}},"
                    "{\"rank\":\"2\",\"children\":{\"core\":\"0,2\"}}]}}"),
        "rank[0-1]/core[0-3],gpu0 rank2/core[0,2]",
        "core first, then the GPUs; entries space-separated");
    is (summary_of ("{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"0\","
                    "\"children\":{\"gpu\":\"1\",\"core\":\"0\",\"fpga\":\"2-3\"}}]}}"),
        "rank0/core0,fpga[2-3],gpu1", "children after core by name");
    /* longer than the buffer's first size */
    char R[2048] = "{\"version\":1,\"execution\":{\"R_lite\":[";
    char want[1024] = "";
    for (int i = 0; i < 12; i++) {
        snprintf (R + strlen (R), sizeof (R) - strlen (R),
                  "%s{\"rank\":\"%d\",\"children\":{\"core\":\"0-%d\"}}",
                  i ? "," : "", 100 + i, 10 + i);
        snprintf (want + strlen (want), sizeof (want) - strlen (want),
                  "%srank%d/core[0-%d]", i ? " " : "", 100 + i, 10 + i);
    }
    strcat (R, "]}}");
    is (summary_of (R), want, "12 entries (%zu bytes)", strlen (want));
    is (summary_of ("{\"version\":1,\"execution\":{\"R_lite\":[]}}"), "(null)",
        "no R_lite entries: none");
    is (summary_of ("{\"version\":1}"), "(null)", "no execution: none");
    done_testing ();
}
