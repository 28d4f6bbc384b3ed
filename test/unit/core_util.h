/* Helpers of the unit tests that call the runtime's modules directly
 * (linked with libjobtap_core, see test/unit/meson.build). */
#ifndef JOBTAP_TEST_CORE_UTIL_H
#define JOBTAP_TEST_CORE_UTIL_H

struct runtime;

/* An in-process jobtap plugin named 'name', appended to rt's plugins as
 * the loader would (no DSO, which would bring a second runtime).  Bails
 * out on failure. */
struct jt_plugin *core_plugin_make (struct runtime *rt, const char *name);

#endif
