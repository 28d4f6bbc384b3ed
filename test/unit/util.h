/* Helpers shared by the runtime's unit tests. */
#ifndef JOBTAP_TEST_UTIL_H
#define JOBTAP_TEST_UTIL_H

#include <stdint.h>
#include <jansson.h>

#include "host.h"

/* ops that record everything into the arrays below */
extern const struct jobtap_host_ops test_ops;
extern json_t *test_log;      /* strings */
extern json_t *test_actions;  /* "hold 5 jobtap: x", "release 5", ... */

void test_reset (void);                 /* clear both arrays */
int log_count (const char *regex);      /* lines matching */
const char *log_find (const char *regex);
char *actions_str (void);               /* joined with "; " (free) */

/* Write 'text' to a fresh config file in a private temp dir; returns the
 * path (static buffer per call slot). */
const char *write_config (const char *name, const char *text);
/* Path of a test plugin in the build tree. */
const char *plugin_path (const char *name);

json_t *jobspec_make (const char *fmt, ...);

#endif
