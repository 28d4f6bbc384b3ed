/* Flux Standard Duration (RFC 23): "90", "1.5h", "30m", "2d", "100ms",
 * "inf".  Parse to seconds and format as Flux prints durations in its
 * messages.  A leaf: no runtime, no lock. */
#ifndef JOBTAP_FSD_H
#define JOBTAP_FSD_H

#include <stddef.h>

/* Seconds in *d (infinity for "inf"/"infinity"); -1 with EINVAL for a
 * negative number, NaN, an unknown unit or a unit after "inf". */
int fsd_parse (const char *s, double *d);

/* 'd' seconds in the largest unit that keeps it at least 1 (ms under
 * 0.1 s, then s, m, h, d), with 'precision' significant digits:
 * 7200 at 2 is "2h", 5400 is "1.5h", infinity "infinity".  Returns
 * snprintf's count, -1 with EINVAL for a negative or NaN duration. */
int fsd_format (char *buf, size_t len, double d, int precision);

#endif
