/* A dependency string split between Slurm and jobtap
 * (jobspec_dependency.h). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobspec_dependency.h"

static const char *const slurm_schemes[] = {
    "after",     "afterany",  "afterburstbuffer", "aftercorr",
    "afternotok", "afterok",  "singleton",        "expand",
    NULL,
};

static bool slurm_scheme (const char *tok, size_t len)
{
    if (len > 0 && isdigit ((unsigned char)tok[0]))
        return true; /* a bare job id */
    for (int i = 0; slurm_schemes[i]; i++)
        if (strlen (slurm_schemes[i]) == len
            && !strncmp (tok, slurm_schemes[i], len))
            return true;
    return false;
}

int jobspec_dependency_split (const char *dep,
                              jobspec_scheme_handled_f handled,
                              void *arg,
                              char **slurm_rest,
                              json_t **entries,
                              jobtap_host_error_t *err)
{
    char *rest = NULL, *scheme = NULL;
    size_t restlen = 0;
    FILE *f = NULL;
    json_t *a = json_array ();
    bool any_of = dep && strchr (dep, '?');
    char sep = ',';
    size_t kept = 0;

    *slurm_rest = NULL;
    *entries = NULL;
    if (!a || !(f = open_memstream (&rest, &restlen)))
        goto nomem;
    for (const char *p = dep; p && *p;) {
        size_t len = strcspn (p, ",?");
        size_t slen = strcspn (p, ":,?");
        bool jobtap = false;
        if (slen < len && !slurm_scheme (p, slen)) {
            if (!(scheme = strndup (p, slen)))
                goto nomem;
            jobtap = handled (scheme, arg);
        }
        if (jobtap && any_of) {
            errprintf (err,
                       "the jobtap dependency scheme %s cannot be in a '?' "
                       "(any of) list",
                       scheme);
            goto fail;
        }
        if (jobtap) {
            json_t *e = json_pack ("{s:s s:s%}", "scheme", scheme, "value",
                                   p + slen + 1, len - slen - 1);
            if (!e || json_array_append_new (a, e) < 0)
                goto nomem;
        }
        else {
            /* (with a jobtap entry taken out, every separator is ',') */
            if (kept++ > 0)
                fputc (sep, f);
            fwrite (p, 1, len, f);
        }
        free (scheme);
        scheme = NULL;
        if (!p[len])
            break;
        sep = p[len];
        p += len + 1;
    }
    if (fclose (f) != 0) {
        f = NULL;
        goto nomem;
    }
    f = NULL;
    if (restlen == 0) {
        free (rest);
        rest = NULL;
    }
    *slurm_rest = rest;
    *entries = a;
    return 0;
nomem:
    errprintf (err, "%s", strerror (ENOMEM));
fail:
    if (f)
        fclose (f);
    free (rest);
    free (scheme);
    json_decref (a);
    return -1;
}
