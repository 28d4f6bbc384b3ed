/* Helpers of the unit tests that call the runtime's modules directly
 * (linked with libjobtap_core, see test/unit/meson.build). */
#ifndef JOBTAP_TEST_CORE_UTIL_H
#define JOBTAP_TEST_CORE_UTIL_H

#include <stdint.h>
#include <flux/jobtap.h>

struct runtime;
struct job;

/* A runtime of the test's own (not the process's, host_runtime), one per
 * test program: the modules' state as host.c gives it (static, empty),
 * and the host's actions those of 'ops' (held: the test may change them
 * as it goes; NULL: none).  core_runtime_fini frees its jobs and what
 * that state holds. */
struct jobtap_host_ops;
void core_runtime_init (struct runtime *rt, struct jobtap_host_ops *ops);
void core_runtime_fini (struct runtime *rt);

/* An in-process jobtap plugin named 'name', appended to rt's plugins as
 * the loader would (no DSO, which would bring a second runtime).  Bails
 * out on failure. */
struct jt_plugin *core_plugin_make (struct runtime *rt, const char *name);

/* A job of rt with this id and state, urgency 16, in the table (the
 * table holds the reference).  Bails out on failure. */
struct job *core_job_in_table (struct runtime *rt, flux_jobid_t id, int state);

/* The process's runtime (host_runtime), as the host API's entry points
 * use it: jobtap_host_init (ops, arg), then jobtap_host_load_config of
 * a jobtap.conf holding 'toml' written to a temporary directory, or of
 * no file (builtins only) if toml is NULL.  Bails out on failure.
 * core_host_teardown drops the runtime (plugins and jobs) and the file. */
void core_host_setup (const struct jobtap_host_ops *ops,
                      void *arg,
                      const char *toml);
void core_host_teardown (void);

/* A trace of what happened, "; "-separated, for exact comparisons. */
void core_trace (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));
const char *core_trace_text (void);
void core_trace_reset (void);
/* How many times 'what' occurs in the trace. */
int core_trace_count (const char *what);

/* Host actions (struct jobtap_host_ops) that record themselves in the
 * trace: "hold ID REASON", "release ID", "priority ID N",
 * "cancel ID TYPE NOTE". */
void core_trace_hold (uint64_t id, const char *reason, void *arg);
void core_trace_release (uint64_t id, void *arg);
void core_trace_set_priority (uint64_t id, int64_t priority, void *arg);
void core_trace_cancel (uint64_t id,
                        const char *type,
                        const char *note,
                        void *arg);

/* The host ops of the store's tests: the host's log collected (below),
 * the traced actions above, eventlogs kept. */
extern const struct jobtap_host_ops core_kept_ops;

/* The host's log lines (a jobtap_host_ops.log), each ending in "\n",
 * collected until core_log_reset. */
void core_log (int level, const char *msg, void *arg);
const char *core_log_text (void);
void core_log_reset (void);

/* The text of file 'path' (malloc'd: "" when empty), or NULL. */
char *core_slurp (const char *path);

/* Removes the directory tree 'path'. */
void core_rm_tree (const char *path);

#endif
