/* Flux Standard Duration: see fsd.h. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsd.h"

static int invalid (double d)
{
    if (isnan (d) || d < 0.) {
        errno = EINVAL;
        return -1;
    }
    return 0;
}

int fsd_parse (const char *s, double *d)
{
    static const struct {
        const char *suffix;
        double seconds;
    } units[] = {{"ms", .001}, {"s", 1.}, {"m", 60.}, {"h", 3600.},
                 {"d", 86400.}};
    char *end;
    double v;

    if (!s || !d || !*s) {
        errno = EINVAL;
        return -1;
    }
    errno = 0;
    v = strtod (s, &end);
    if (end == s || invalid (v) < 0)
        goto inval;
    if (*end) {
        size_t i, n = sizeof (units) / sizeof (units[0]);
        if (isinf (v))
            goto inval;
        for (i = 0; i < n && strcmp (end, units[i].suffix); i++)
            ;
        if (i == n)
            goto inval;
        v *= units[i].seconds;
    }
    *d = v;
    return 0;
inval:
    errno = EINVAL;
    return -1;
}

int fsd_format (char *buf, size_t len, double d, int precision)
{
    if (!buf || len == 0) {
        errno = EINVAL;
        return -1;
    }
    if (isinf (d) && d > 0.)
        return snprintf (buf, len, "infinity");
    if (invalid (d) < 0)
        return -1;
    if (d != 0. && d < 0.1)
        return snprintf (buf, len, "%.*gms", precision, d * 1000.);
    if (d < 60.)
        return snprintf (buf, len, "%.*gs", precision, d);
    if (d < 3600.)
        return snprintf (buf, len, "%.*gm", precision, d / 60.);
    if (d < 86400.)
        return snprintf (buf, len, "%.*gh", precision, d / 3600.);
    return snprintf (buf, len, "%.*gd", precision, d / 86400.);
}
