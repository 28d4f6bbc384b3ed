/* The interface between a scheduler adapter and the jobtap runtime.
 *
 * The runtime (libslurm-jobtap) knows nothing of Slurm.  An adapter feeds
 * jobs and state changes in through the jobtap_host_* calls and receives
 * actions out through struct jobtap_host_ops.
 *
 * Threading: every call takes the runtime's one recursive mutex.  The ops
 * callbacks run with that mutex held, possibly from inside a jobtap plugin
 * callback: they must not block on scheduler locks (queue the work) and
 * must not assume which thread calls them.  Calls back into jobtap_host_*
 * from an ops callback are allowed (the mutex is recursive).
 *
 * Ids: a job's id is the scheduler's job id.  Before the scheduler assigns
 * it (at submit), the runtime gives the provisional job an id with bit 63
 * set (JOBTAP_PROVISIONAL_ID_BIT); job_new() rebinds it to the real id.
 */
#ifndef SLURM_JOBTAP_HOST_H
#define SLURM_JOBTAP_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>

#include "host_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Version of the runtime library, for the adapters' load log line. */
const char *jobtap_runtime_version (void);

#define JOBTAP_PROVISIONAL_ID_BIT (1ULL << 63)

/* Job states, same bit values as flux_job_state_t (RFC 21). */
enum {
    JOBTAP_STATE_NEW = 1,
    JOBTAP_STATE_DEPEND = 2,
    JOBTAP_STATE_PRIORITY = 4,
    JOBTAP_STATE_SCHED = 8,
    JOBTAP_STATE_RUN = 16,
    JOBTAP_STATE_CLEANUP = 32,
    JOBTAP_STATE_INACTIVE = 64,
};

/* Job results, same values as flux_job_result_t. */
enum {
    JOBTAP_RESULT_COMPLETED = 1,
    JOBTAP_RESULT_FAILED = 2,
    JOBTAP_RESULT_CANCELED = 4,
    JOBTAP_RESULT_TIMEOUT = 8,
};

/* Priority sentinels returned by jobtap_host_job_priority(). */
#define JOBTAP_PRIORITY_UNSET (-1)
#define JOBTAP_PRIORITY_UNAVAIL (-2)

/* Roles for credentials (same bits as FLUX_ROLE_*). */
#define JOBTAP_ROLE_OWNER 1
#define JOBTAP_ROLE_USER 2


/* Callbacks out to the scheduler.  Every member may be NULL.  'arg' is
 * the pointer given to jobtap_host_init().  All run with the runtime
 * mutex held (see above). */
/* A scalar ops.jobspec_find tells without making a JSON value: a
 * string is the source's own bytes (NUL-terminated, valid UTF-8), read
 * while the source is the job's, that is during the callback whose
 * unpack asked (the runtime replaces a job's source only between
 * callbacks). */
struct jobtap_spec_scalar {
    json_type type; /* JSON_STRING, JSON_INTEGER or JSON_REAL */
    const char *string;
    json_int_t integer;
    double real;
};

struct jobtap_host_ops {
    /* Every flux_log() line and every runtime message (syslog levels).
     * Default when NULL: "slurm-jobtap: <msg>" on stderr. */
    void (*log) (int level, const char *msg, void *arg);

    /* Keep the job from being scheduled, showing 'reason' to users, e.g.
     * "jobtap: <dependency description>" or "jobtap: priority
     * unavailable".  May be called again with a new reason while held. */
    void (*hold) (uint64_t id, const char *reason, void *arg);

    /* Undo hold(): the job may be scheduled again. */
    void (*release) (uint64_t id, void *arg);

    /* The job's jobtap priority (0..4294967295) was assigned or changed
     * while the job is eligible (SCHED). */
    void (*set_priority) (uint64_t id, int64_t priority, void *arg);

    /* A plugin raised a fatal exception: cancel the job.  'type' is the
     * exception type, 'note' the text (may be ""). */
    void (*cancel) (uint64_t id, const char *type, const char *note, void *arg);

    /* Optional: a plugin changed the jobspec of a known job outside of
     * submit/update (jobspec_update_id_pack, or updates posted from
     * state callbacks).  'updates' maps dotted keys to new values
     * (borrowed; incref to keep); 'plugin' is the name of the plugin
     * that made them, or NULL if not known. */
    void (*jobspec_update) (uint64_t id,
                            json_t *updates,
                            const char *plugin,
                            void *arg);

    /* Optional: every event appended to a known job's eventlog
     * ({"timestamp":f, "name":s, "context"?:o}, borrowed). */
    void (*event) (uint64_t id, json_t *entry, void *arg);

    /* Optional: the job is held by its urgency (0, FLUX_JOB_URGENCY_HOLD,
     * as Flux's submit-hold sets it) while eligible (SCHED), or no longer
     * (held false). A hold its owner may lift by raising the urgency. */
    void (*urgency_hold) (uint64_t id, bool held, void *arg);

    /* Optional: the prologs (epilog false) or epilogs of a job the host
     * waits for (jobtap_host_job_perilog_wait) are done. status is 0, or
     * the first failing prolog-finish status (or 1: the job left RUN, a
     * fatal exception) with 'note' saying why; the host then fails the
     * job. */
    void (*perilog_done) (uint64_t id,
                          bool epilog,
                          int status,
                          const char *note,
                          void *arg);

    /* Keep each job's eventlog in memory for jobtap_host_job_info (about
     * 0.3 KiB an event).  Off, job_info's "eventlog" is empty. */
    bool keep_eventlog;

    /* The host calls jobtap_host_compact() outside its own locks, so the
     * jobspecs of jobs past job.new are compacted there rather than at
     * once inside jobtap_host_job_new. */
    bool compact_later;

    /* Optional: the jobspec the host makes from 'source' (given with
     * jobtap_host_submit_from_source or jobtap_host_job_source), a new
     * reference or NULL.  Called with the runtime lock held, on any
     * thread, inside a JSON pool scope (jobtap_host_json_pool_begin): it
     * must read nothing but the source and only build the tree. */
    json_t *(*jobspec_rebuild) (const void *source, size_t len, void *arg);

    /* Optional, with jobspec_rebuild: what the jobspec made from 'source'
     * has at 'path' (depth keys from its root), told without making it,
     * so that a plugin reading a few members of a jobspec nobody changed
     * costs no tree.  A scalar's value in *value (a new reference) with
     * JOBTAP_SPEC_VALUE, or in *scalar with JOBTAP_SPEC_SCALAR (no JSON
     * value made at all), or JOBTAP_SPEC_OBJECT, JOBTAP_SPEC_ABSENT, or
     * JOBTAP_SPEC_UNKNOWN when only the tree tells (the runtime then
     * builds it).  Called as jobspec_rebuild is, outside a pool scope. */
    int (*jobspec_find) (const void *source,
                         size_t len,
                         const char *const *path,
                         int depth,
                         json_t **value,
                         struct jobtap_spec_scalar *scalar,
                         void *arg);
};

/* ops.jobspec_find's answers. */
enum {
    JOBTAP_SPEC_UNKNOWN = 0,
    JOBTAP_SPEC_ABSENT,
    JOBTAP_SPEC_OBJECT,
    JOBTAP_SPEC_VALUE,
    JOBTAP_SPEC_SCALAR,
};

/* --- Lifecycle --------------------------------------------------------- */

/* Take a reference on the process-wide runtime, creating it on first use.
 * The first call with non-NULL ops installs them; later calls only take a
 * reference (two Slurm plugins in one slurmctld share one runtime).
 * Returns 0, or -1 with errno set. */
int jobtap_host_init (const struct jobtap_host_ops *ops, void *arg);

/* Drop a reference.  The last one unloads every plugin (job aux
 * destructors run), frees all jobs, and stops the reactor's thread if
 * timers started it: it waits for the thread, so it is not to be called
 * from an ops or plugin callback. */
void jobtap_host_fini (void);

/* Load jobtap.conf (TOML): [job-manager] plugins and [slurm-jobtap]
 * settings.  Builtins (.priority-default, .dependency-slurm) load first,
 * then each entry in order (remove before load).  Relative plugin names
 * are searched in the config file's directory, then in the install
 * search dir.  If the runtime is already configured from the same path
 * this is a no-op returning 0 (the second Slurm plugin).  On error
 * nothing stays loaded and err reads e.g.
 *   "/etc/slurm/jobtap.conf:4: [job-manager.plugins][1]: load: foo.so: No
 *    such plugin found".
 * A NULL path loads only the builtins (no config file). */
int jobtap_host_load_config (const char *path, jobtap_host_error_t *err);

/* Re-read the config file (scontrol reconfigure).  An unchanged plugin
 * list only calls conf.update on every plugin; a changed one unloads and
 * reloads the plugin set (load-time replay rebuilds per-job state).  On
 * any failure the previous good configuration stays in effect and -1 is
 * returned with err set. */
int jobtap_host_reload (jobtap_host_error_t *err);

/* The config in use and how the last reload went, as a new object:
 *   {"configured": bool, "path": s|null (builtins only),
 *    "loaded_at": epoch seconds (when the config in use took effect),
 *    "reload": null (none since the load) |
 *              {"at": epoch seconds, "ok": bool, "error"?: s}}
 * "error" is jobtap_host_reload's text (file and line where it has them).
 * NULL only when out of memory. */
json_t *jobtap_host_config_status (void);

/* The [slurm-jobtap] table of the current config as a new reference
 * (an empty object if absent).  Caller json_decref()s. */
json_t *jobtap_host_settings (void);

/* Flux's jobspec defaults ([policy.jobspec.defaults.system] and each
 * queue's) for a job being submitted.  The queue a job that names none
 * gets instead of the scheduler's default: malloc'd, NULL if the config
 * sets none. */
char *jobtap_host_policy_default_queue (void);
/* The duration a job of 'queue' (the one it named or gets) that asks for
 * none gets: its queue's, else the general one; seconds, 0 for
 * unlimited, -1 when no default applies. */
double jobtap_host_policy_default_duration (const char *queue);

/* Whether the config sets any of those defaults. */
bool jobtap_host_policy_has_defaults (void);

/* The names of the config's [queues] as a JSON array (new reference). */
json_t *jobtap_host_policy_queues (void);

/* Plugins at run time (the future command-line transport uses these). */
int jobtap_host_plugin_load (const char *name,
                             json_t *conf,
                             jobtap_host_error_t *err);
int jobtap_host_plugin_remove (const char *name, jobtap_host_error_t *err);
/* New array of list names in call order; 'all' includes ".builtins". */
json_t *jobtap_host_plugin_list (bool all);
/* plugin.query: new object (at least name and path), NULL + err. */
json_t *jobtap_host_plugin_query (const char *name, jobtap_host_error_t *err);

/* Call a service registered with flux_jobtap_service_register(), e.g.
 * topic "job-manager.test.reprioritize" (or the short "test.reprioritize").
 * 'request' is a JSON object (may be NULL; kept by reference, do not
 * change it), 'userid'/'rolemask' the caller's credentials (rolemask
 * JOBTAP_ROLE_OWNER for the instance owner).
 *
 * Returns 0 if the handler ran; done(response, errnum, errstr, arg) then
 * runs exactly once, when the handler responds: maybe before this
 * returns, maybe later from another thread (a handler may keep the
 * request), always with the runtime mutex held (do not block in it).
 * On success 'response' is the payload (borrowed; JSON null if none)
 * and errnum 0; on an error response 'response' is NULL and errstr its
 * text.  A handler that drops the request unanswered gives EPROTO.
 * Returns -1 with errno and err set, done never called: ENOSYS "No
 * service matching <topic> is registered", EPERM "Request requires owner
 * credentials" (services registered with rolemask 0 are owner only). */
typedef void (*jobtap_host_service_done_f) (json_t *response,
                                            int errnum,
                                            const char *errstr,
                                            void *arg);
int jobtap_host_service_call_async (const char *topic,
                                    json_t *request,
                                    uint32_t userid,
                                    uint32_t rolemask,
                                    jobtap_host_service_done_f done,
                                    void *arg,
                                    jobtap_host_error_t *err);

/* The same, for callers that need the answer now: returns 0 with
 * *response a new reference (JSON null if the response had no payload),
 * or -1 with errno and err set, also for an error response (its errnum
 * and text).  A handler that keeps the request to respond later gives
 * -1, EINPROGRESS, and its response is dropped: use the async call. */
int jobtap_host_service_call (const char *topic,
                              json_t *request,
                              uint32_t userid,
                              uint32_t rolemask,
                              json_t **response,
                              jobtap_host_error_t *err);

/* --- Jobs -------------------------------------------------------------- */

enum {
    JOBTAP_SUBMIT_TEST_ONLY = 1, /* --test-only: will be aborted, not new'd */
    /* The runtime takes the caller's reference to 'jobspec' (also when it
     * fails): held by nobody else, a plugin's jobspec update changes it in
     * place instead of copying the objects on the updated path. */
    JOBTAP_SUBMIT_TAKE_JOBSPEC = 2,
};

/* A job is being submitted (no id yet).  Runs job.create, job.validate and
 * job.dependency.<scheme> for each attributes.system.dependencies entry on
 * a provisional NEW job.  The runtime keeps a reference to 'jobspec' (no
 * copy, for speed): do not modify it afterwards.  Jobspecs given to
 * job_new and jobs_restore are kept the same way.
 *
 * Returns 0 if accepted: *token names the provisional job (for job_new or
 * submit_abort) and *updates (if non-NULL) is a reference to the jobspec
 * updates plugins requested (dotted keys -> values), to apply to the
 * scheduler's job, or NULL when none did; read it, don't change it (it
 * is shared, not copied).
 * Returns -1 if rejected, with the user-facing message in err (e.g.
 * "rejected by job-manager plugin 'x.so'") and errno set. */
int jobtap_host_submit (json_t *jobspec,
                        uint32_t userid,
                        int urgency,
                        double t_submit,
                        int flags,
                        json_t **updates,
                        uint64_t *token,
                        jobtap_host_error_t *err);

/* jobtap_host_submit of the jobspec the host makes from 'source' (opaque
 * to the runtime; malloc'd, taken also when it fails, freed with free()),
 * for hosts with ops.jobspec_rebuild.  The jobspec is made only when a
 * reader needs it as a tree (ops.jobspec_rebuild, plus the updates applied
 * since, in order); members ops.jobspec_find tells are read without it.
 * A job at rest keeps the source, not the jobspec's text.  EINVAL without
 * ops.jobspec_rebuild. */
int jobtap_host_submit_from_source (void *source,
                                    size_t len,
                                    uint32_t userid,
                                    int urgency,
                                    double t_submit,
                                    int flags,
                                    json_t **updates,
                                    uint64_t *token,
                                    jobtap_host_error_t *err);
/* How the host made the jobspec last given whole for job 'id' (to
 * jobtap_host_job_new or jobtap_host_jobs_restore, called right after),
 * taken as jobtap_host_submit_from_source takes it: at rest the job keeps
 * it instead of the jobspec's text.  Ignored (and freed) for an unknown
 * id, without ops.jobspec_rebuild, or once the job's jobspec was updated
 * with no record of the update. */
void jobtap_host_job_source (uint64_t id, void *source, size_t len);

/* Drop a provisional job the scheduler refused or that was --test-only.
 * job.destroy runs, job.new never does.  Unknown tokens are ignored.
 * Provisional jobs never bound are also expired by the runtime (the
 * [slurm-jobtap] settings provisional-max, default 1024 jobs, and
 * provisional-timeout, default 600 s, bound them). */
void jobtap_host_submit_abort (uint64_t token);

/* The job exists with a real id.  token != 0: bind the provisional job
 * (plugins' job aux survives), replacing its jobspec with 'jobspec' if
 * non-NULL.  token == 0: a job the runtime has not seen (restart or
 * discovery): job.create then job.new, with no rejection.  Then job.new
 * runs and the job moves through DEPEND, PRIORITY and SCHED, calling
 * hold/release/set_priority as needed.  EEXIST if the id is known,
 * ENOENT for an unknown or expired token. */
int jobtap_host_job_new (uint64_t token,
                         uint64_t id,
                         uint32_t userid,
                         int urgency,
                         double t_submit,
                         json_t *jobspec,
                         jobtap_host_error_t *err);

/* After a scheduler restart: the jobs it recovered, none known to the
 * runtime. 'jobs' is an array of {"id":I, "userid":I, "urgency":i,
 * "t_submit":f, "jobspec":o, "state"?:i}, state being where the scheduler
 * says the job stands (JOBTAP_STATE_DEPEND, _PRIORITY, _SCHED or _RUN;
 * default SCHED). Dependency schemes are checked first (a missing one is a
 * nonfatal "dependency" exception). Then each plugin in load order gets
 * job.create and job.new for every job in its own load sort order (by
 * 'state', then id, for "state" and "-state"), and finally each job goes
 * through DEPEND, PRIORITY and SCHED with the whole stack, calling
 * hold/release/set_priority. Entries that are invalid or already known are
 * logged and skipped. Returns the number of jobs restored, or -1. */
int jobtap_host_jobs_restore (json_t *jobs, jobtap_host_error_t *err);

/* --- The state store: restarts that lose nothing ------------------------ */

/* Keep every job's events in 'dir' (created 0700; for Slurm a directory
 * under StateSaveLocation), and read what an earlier process kept there:
 * jobtap_host_jobs_restore then rebuilds each job the scheduler still has
 * from its history.  Call once, before restoring.  0, or -1 with err. */
int jobtap_host_store_open (const char *dir, jobtap_host_error_t *err);
/* Write the events recorded since the last flush (one write), synced to
 * disk if 'sync' (the sync is not waited for by other flushes; only the
 * thread that calls jobtap_host_store_maintain may sync).  Called by the
 * host before anything the events decided can reach the scheduler's own
 * saved state (for Slurm: before the agent lets go of the job write
 * lock).  Never with the runtime mutex held (from an ops callback).  Returns bytes written (0: nothing to write, or
 * no store), or -1 (logged; kept for the next flush). */
ssize_t jobtap_host_store_flush (bool sync);
/* Merge the journal into a new snapshot once it has grown past its
 * bound; files only, outside the runtime mutex.  0 or -1 (logged). */
int jobtap_host_store_maintain (void);
/* Before the restore: whether the store keeps a history of job id (the
 * restore would rebuild it from there). */
bool jobtap_host_store_kept (uint64_t id);
/* After the restore: forget the kept histories of jobs the scheduler no
 * longer has (it lost them, or they ended meanwhile).  Returns how many. */
int jobtap_host_store_drop_kept (void);
/* Before the restore, as soon as the scheduler has read its own state
 * and before it takes a new job: forget the kept histories of the ids
 * for which exists() is false (jobs it lost). A new job it then gives
 * such an id cannot be taken for the lost one, even if the process ends
 * before its restore. Returns how many. */
int jobtap_host_store_drop_missing (bool (*exists) (uint64_t id, void *arg),
                                    void *arg);

/* The job's jobtap priority: 0..4294967295, JOBTAP_PRIORITY_UNSET (-1)
 * before one was assigned, JOBTAP_PRIORITY_UNAVAIL (-2) while a plugin
 * withholds it.  Returns 0, or -1 with ENOENT for an unknown job. */
int jobtap_host_job_priority (uint64_t id, int64_t *priority);

/* Set jobspec values of a known job without asking the plugins or telling
 * the host (ops.jobspec_update): the scheduler's own values, where it
 * refused a plugin's update, so that both agree again. 0, or -1 with
 * errno set. */
int jobtap_host_job_jobspec_sync (uint64_t id, json_t *values);

/* The job's urgency as the plugins left it (0..31), or -1 with errno
 * ENOENT for an unknown job. */
int jobtap_host_job_urgency_get (uint64_t id);

/* What the runtime last told the host of a bound job (the ops hold,
 * urgency_hold and set_priority): a hold's reason ("" when not held),
 * whether its user's urgency hold is on, its priority (in SCHED; else
 * JOBTAP_PRIORITY_UNAVAIL) and its state. ENOENT if unknown. */
struct jobtap_host_decision {
    char hold_reason[256];
    bool urgency_hold;
    int64_t priority;
    int state;
};
int jobtap_host_job_decision (uint64_t id, struct jobtap_host_decision *d);
bool jobtap_host_decision_equal (const struct jobtap_host_decision *a,
                                 const struct jobtap_host_decision *b);

/* Tell the host the job's decision again, all of it (hold or release,
 * urgency hold or its lifting, priority), through the ops: for a job the
 * host has just given a record of its own. ENOENT if unknown. */
int jobtap_host_job_resync (uint64_t id);

/* Whether a loaded plugin other than the builtin .priority-default
 * (priority = urgency) handles job.state.priority or job.priority.get:
 * without one, no plugin has set any job's priority. */
bool jobtap_host_priority_from_plugins (void);

/* 1 if an event of this name was ever posted to the job (kept across a
 * restart), 0 if not, -1 with errno ENOENT for an unknown job. */
int jobtap_host_job_event_posted (uint64_t id, const char *name);
/* The scheduler started the job (SCHED -> RUN).  'R' may be NULL. */
int jobtap_host_job_run (uint64_t id, json_t *R);

/* The job ended (-> CLEANUP): result is a JOBTAP_RESULT_* value, status
 * the wait status for COMPLETED/FAILED, 'note' text for the exception
 * that CANCELED/TIMEOUT post (may be NULL). */
int jobtap_host_job_finish (uint64_t id,
                            int result,
                            int status,
                            const char *note);

/* The job is gone from the scheduler (-> INACTIVE).  A job not yet in
 * CLEANUP is first finished as CANCELED.  job.state.inactive,
 * job.inactive-add and job.destroy run, then job aux is destroyed.  The
 * runtime keeps a bounded number of inactive jobs (setting
 * inactive-max, default 1000), purging the oldest with
 * job.inactive-remove. */
int jobtap_host_job_inactive (uint64_t id);

/* The user or admin changed the job's urgency (0..31). */
int jobtap_host_job_urgency (uint64_t id, int urgency);

/* A job update request: 'updates' maps dotted jobspec keys to values
 * (e.g. {"attributes.system.duration": 3600}).  Runs job.update.<key>
 * for each key with cred {userid, rolemask}, then job.validate on the
 * updated jobspec unless a handler set 'validated', then applies the
 * update (job.update runs).  Returns 0 with *final (if non-NULL) the
 * updates to apply (a new object; handlers may add keys), or -1 with the
 * rejection message in err. */
int jobtap_host_job_update (uint64_t id,
                            json_t *updates,
                            uint32_t userid,
                            uint32_t rolemask,
                            json_t **final,
                            jobtap_host_error_t *err);

/* jobtap_host_job_update() with flags. JOBTAP_UPDATE_UNHANDLED_OK: a key
 * no plugin handles is accepted as is (the scheduler's own rules apply)
 * instead of failing with "update of <key> not supported". job.validate
 * still runs on the updated jobspec unless a handler set 'validated'.
 * JOBTAP_UPDATE_CHECK_ONLY: the handlers and job.validate run and say
 * whether the update would be accepted, but the job is left as it was
 * (a host updating several jobs as one asks each before it changes any). */
enum {
    JOBTAP_UPDATE_UNHANDLED_OK = 1,
    JOBTAP_UPDATE_CHECK_ONLY = 2,
};
int jobtap_host_job_update_ex (uint64_t id,
                               json_t *updates,
                               uint32_t userid,
                               uint32_t rolemask,
                               int flags,
                               json_t **final,
                               jobtap_host_error_t *err);

/* Whether a loaded plugin has a handler for topic (job.dependency.test:
 * whether a plugin takes that dependency scheme). */
bool jobtap_host_topic_handled (const char *topic);

/* Ask every plugin again for the priority of every job in SCHED (a job
 * waiting in PRIORITY stays there until a plugin gives it a priority, as
 * in Flux, where only plugins reprioritize). Returns how many jobs were
 * asked, or -1. */
int jobtap_host_reprioritize_all (void);
/* The same, letting other threads (submissions) take the runtime lock
 * every few jobs: for the host's own periodic pass, run outside every
 * other runtime operation. */
int jobtap_host_reprioritize_all_yielding (void);

/* Let the jobspec trees of jobs past job.new go, keeping what gives them
 * back: the source and the updates since, or compact text (with
 * ops.compact_later; a no-op otherwise).  Takes the runtime lock one job
 * at a time, so submissions are not held up behind a batch. */
void jobtap_host_compact (void);

/* Jansson blocks allocated on this thread between begin and end come from
 * the runtime's pool (src/common/jsonpool.c); scopes nest.  Only around
 * code that builds or parses trees: a json_dumps() string made inside a
 * scope must not be given to free(), and plugin code must never run
 * inside one.  Frees need no scope. */
void jobtap_host_json_pool_begin (void);
void jobtap_host_json_pool_end (void);

/* Bytes in blocks the pool has handed out and not taken back; 0 when it
 * is off.  Other threads' blocks count as of their last visit to the
 * shared lists (once per batch, and when they exit); the calling thread's
 * are exact.  Memory that mallinfo() does not see, for benchmarks and
 * tests. */
size_t jobtap_host_json_pool_bytes (void);

/* The job's state (JOBTAP_STATE_*), or -1 with ENOENT for an unknown job.
 * Cheap: for the scheduler's hot paths, where job_info is too much. */
int jobtap_host_job_state (uint64_t id);

/* After jobtap_host_job_run (job.state.run) or jobtap_host_job_finish
 * (job.state.cleanup): 1 if a plugin started a prolog (or an epilog) that
 * has not finished, in which case the host is to hold the job's start (or
 * its end) until ops.perilog_done; 0 if none; -1 with errno ENOENT for an
 * unknown job. */
int jobtap_host_job_perilog_wait (uint64_t id);

/* A new object describing a job: id, userid, urgency, priority, state,
 * t_submit, jobspec, dependencies (array), annotations, flags (array),
 * eventlog (array of entries; empty unless ops.keep_eventlog).  NULL +
 * ENOENT if unknown. */
json_t *jobtap_host_job_info (uint64_t id);

/* The ids of all known jobs, the inactive ones the runtime still keeps
 * too (not provisional): a malloc'd array of *count ids (the caller frees
 * it), or NULL with ENOMEM. */
uint64_t *jobtap_host_job_ids (size_t *count);

/* Forget an inactive job now (job.inactive-remove).  ENOENT/EINVAL. */
int jobtap_host_job_purge (uint64_t id);

#ifdef __cplusplus
}
#endif

#endif
