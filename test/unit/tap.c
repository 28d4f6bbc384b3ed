#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>

#include "tap.h"

static int count;
static int failed;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

void plan (int n)
{
    printf ("1..%d\n", n);
}

void done_testing (void)
{
    printf ("1..%d\n", count);
    fflush (stdout);
    exit (failed ? 1 : 0);
}

/* TAP is line based: a newline inside a description or a diagnostic would
 * start a line the harness cannot parse. Descriptions show it as "\n";
 * diagnostics continue with "# " on every line. */
static void print_escaped (const char *s)
{
    for (; *s; s++) {
        if (*s == '\n')
            fputs ("\\n", stdout);
        else
            putchar (*s);
    }
}

static void print_comment (const char *label, const char *s)
{
    printf ("# %s", label);
    for (; *s; s++) {
        putchar (*s);
        if (*s == '\n')
            printf ("# %*s", (int)strlen (label), "");
    }
    putchar ('\n');
}

static int report (bool cond, const char *file, int line, const char *fmt,
                   va_list ap)
{
    char desc[1024];
    vsnprintf (desc, sizeof (desc), fmt, ap);
    pthread_mutex_lock (&lock);
    count++;
    printf ("%sok %d - ", cond ? "" : "not ", count);
    print_escaped (desc);
    printf ("\n");
    if (!cond) {
        failed++;
        printf ("#   Failed test at %s line %d\n", file, line);
    }
    fflush (stdout);
    pthread_mutex_unlock (&lock);
    return cond;
}

int ok_at (bool cond, const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    report (cond, file, line, fmt, ap);
    va_end (ap);
    return cond;
}

int is_at (const char *got, const char *want, const char *file, int line,
           const char *fmt, ...)
{
    bool cond = (got && want && !strcmp (got, want)) || (!got && !want);
    va_list ap;
    va_start (ap, fmt);
    report (cond, file, line, fmt, ap);
    va_end (ap);
    if (!cond) {
        print_comment ("         got: ", got ? got : "(null)");
        print_comment ("    expected: ", want ? want : "(null)");
    }
    return cond;
}

int isint_at (long long got, long long want, const char *file, int line,
              const char *fmt, ...)
{
    bool cond = got == want;
    va_list ap;
    va_start (ap, fmt);
    report (cond, file, line, fmt, ap);
    va_end (ap);
    if (!cond)
        printf ("#          got: %lld\n#     expected: %lld\n", got, want);
    return cond;
}

int like_at (const char *got, const char *re, const char *file, int line,
             const char *fmt, ...)
{
    regex_t r;
    bool cond = false;
    va_list ap;
    if (got && regcomp (&r, re, REG_EXTENDED | REG_NOSUB) == 0) {
        cond = regexec (&r, got, 0, NULL, 0) == 0;
        regfree (&r);
    }
    va_start (ap, fmt);
    report (cond, file, line, fmt, ap);
    va_end (ap);
    if (!cond) {
        print_comment ("                 ", got ? got : "(null)");
        print_comment ("    doesn't match ", re);
    }
    return cond;
}

void diag (const char *fmt, ...)
{
    char msg[4096];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (msg, sizeof (msg), fmt, ap);
    va_end (ap);
    print_comment ("", msg);
}

void bail_out (const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    printf ("Bail out! ");
    vprintf (fmt, ap);
    printf ("\n");
    va_end (ap);
    exit (255);
}
