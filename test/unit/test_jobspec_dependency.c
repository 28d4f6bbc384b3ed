/* src/jobspec/jobspec_dependency.c: a -d string split between Slurm's
 * own schemes and the schemes jobtap plugins handle. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "jobspec_dependency.h"
#include "tap.h"

/* the plugins here handle "test" and "after-finish" */
static bool handled (const char *scheme, void *arg)
{
    (void)arg;
    return !strcmp (scheme, "test") || !strcmp (scheme, "after-finish");
}

/* "slurm=<rest> jobtap=<entries>" or "error: <why>" */
static const char *split (const char *dep)
{
    static char out[1024];
    jobtap_host_error_t err;
    char *rest;
    json_t *entries;
    if (jobspec_dependency_split (dep, handled, NULL, &rest, &entries, &err)
        < 0) {
        snprintf (out, sizeof (out), "error: %s", err.text);
        return out;
    }
    char *e = json_dumps (entries, JSON_COMPACT);
    snprintf (out, sizeof (out), "slurm=%s jobtap=%s", rest ? rest : "(none)",
              e ? e : "?");
    free (e);
    free (rest);
    json_decref (entries);
    return out;
}

int main (void)
{
    is (split (NULL), "slurm=(none) jobtap=[]", "no dependency");
    is (split ("afterok:12:13,singleton"),
        "slurm=afterok:12:13,singleton jobtap=[]",
        "Slurm's own schemes stay Slurm's, as given");
    is (split ("12?afterany:14"), "slurm=12?afterany:14 jobtap=[]",
        "a '?' list of Slurm's own stays whole");
    is (split ("test:foo"),
        "slurm=(none) jobtap=[{\"scheme\":\"test\",\"value\":\"foo\"}]",
        "a scheme a plugin handles: a jobtap entry, nothing left to Slurm");
    is (split ("afterok:12,test:foo,singleton"),
        "slurm=afterok:12,singleton jobtap=[{\"scheme\":\"test\",\"value\":\"foo\"}]",
        "beside Slurm's: each goes its way");
    is (split ("test:a,after-finish:b:c"),
        "slurm=(none) jobtap=[{\"scheme\":\"test\",\"value\":\"a\"},"
        "{\"scheme\":\"after-finish\",\"value\":\"b:c\"}]",
        "two jobtap entries; the value is all after the first ':'");
    is (split ("nosuch:1"), "slurm=nosuch:1 jobtap=[]",
        "a scheme nobody handles stays for Slurm to refuse");
    is (split ("afterok:12?test:foo"),
        "error: the jobtap dependency scheme test cannot be in a '?' (any of) list",
        "a jobtap scheme in a '?' list: refused");
    is (split ("test"), "slurm=test jobtap=[]",
        "a word without ':' is Slurm's (as singleton is)");
    done_testing ();
}
