/* A tiny TAP producer for the unit tests. */
#ifndef JOBTAP_TEST_TAP_H
#define JOBTAP_TEST_TAP_H

#include <stdbool.h>

void plan (int n);
void done_testing (void);
int ok_at (bool cond, const char *file, int line, const char *fmt, ...)
    __attribute__ ((format (printf, 4, 5)));
int is_at (const char *got,
           const char *want,
           const char *file,
           int line,
           const char *fmt,
           ...) __attribute__ ((format (printf, 5, 6)));
int isint_at (long long got,
              long long want,
              const char *file,
              int line,
              const char *fmt,
              ...) __attribute__ ((format (printf, 5, 6)));
int like_at (const char *got,
             const char *regex,
             const char *file,
             int line,
             const char *fmt,
             ...) __attribute__ ((format (printf, 5, 6)));
void diag (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));
void bail_out (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

#define ok(cond, ...) ok_at ((cond), __FILE__, __LINE__, __VA_ARGS__)
#define is(got, want, ...) is_at ((got), (want), __FILE__, __LINE__, __VA_ARGS__)
#define isint(got, want, ...) \
    isint_at ((got), (want), __FILE__, __LINE__, __VA_ARGS__)
#define like(got, re, ...) like_at ((got), (re), __FILE__, __LINE__, __VA_ARGS__)

#endif
