/* slurm-jobtap: the subset of Flux's <flux/core.h> that jobtap plugins use.
 *
 * Written for slurm-jobtap; API-compatible with flux-core so that jobtap
 * plugins compile unchanged.  See docs/api.md for what is supported and
 * what fails with ENOSYS because there is no Flux broker here.
 */
#ifndef SLURM_JOBTAP_FLUX_CORE_H
#define SLURM_JOBTAP_FLUX_CORE_H

/* Flux's core.h pulls these in and plugins rely on it. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <stdbool.h>
#include <stdarg.h>
#include <sys/types.h>
#include <jansson.h>

#include "plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifndef FLUX_JOBTAP_PRINTF
#define FLUX_JOBTAP_PRINTF(a, b) __attribute__ ((format (printf, a, b)))
#endif

/* Marks this header set, so plugins can tell it from a real flux-core. */
#define SLURM_JOBTAP 1

typedef struct flux_handle flux_t;
typedef struct flux_msg flux_msg_t;
typedef struct flux_msg_handler flux_msg_handler_t;
typedef struct flux_reactor flux_reactor_t;
typedef struct flux_watcher flux_watcher_t;
typedef struct flux_future flux_future_t;

typedef void (*flux_free_f) (void *arg);

typedef struct {
    char text[160];
} flux_error_t;

/* Roles and user ids (RFC 12). */
#define FLUX_USERID_UNKNOWN 0xFFFFFFFF
enum {
    FLUX_ROLE_NONE = 0,
    FLUX_ROLE_OWNER = 1,
    FLUX_ROLE_USER = 2,
    FLUX_ROLE_LOCAL = 4,
    FLUX_ROLE_ADMIN = 8,
};
/* a macro, not an enumerator: 0xFFFFFFFF does not fit an int (pedantic) */
#define FLUX_ROLE_ALL 0xFFFFFFFFU
#define FLUX_ROLE_PRIVILEGED (FLUX_ROLE_OWNER | FLUX_ROLE_ADMIN)

#define FLUX_NODEID_ANY 0xFFFFFFFF
#define FLUX_NODEID_UPSTREAM 0xFFFFFFFE

/* Jobs (RFC 21). */
typedef uint64_t flux_jobid_t;
#define FLUX_JOBID_ANY 0xFFFFFFFFFFFFFFFFULL

typedef enum {
    FLUX_JOB_STATE_NEW = 1,
    FLUX_JOB_STATE_DEPEND = 2,
    FLUX_JOB_STATE_PRIORITY = 4,
    FLUX_JOB_STATE_SCHED = 8,
    FLUX_JOB_STATE_RUN = 16,
    FLUX_JOB_STATE_CLEANUP = 32,
    FLUX_JOB_STATE_INACTIVE = 64,
} flux_job_state_t;

enum {
    FLUX_JOB_STATE_PENDING = 14,
    FLUX_JOB_STATE_RUNNING = 48,
    FLUX_JOB_STATE_ACTIVE = 62,
};

typedef enum {
    FLUX_JOB_RESULT_COMPLETED = 1,
    FLUX_JOB_RESULT_FAILED = 2,
    FLUX_JOB_RESULT_CANCELED = 4,
    FLUX_JOB_RESULT_TIMEOUT = 8,
} flux_job_result_t;

enum job_urgency {
    FLUX_JOB_URGENCY_MIN = 0,
    FLUX_JOB_URGENCY_HOLD = FLUX_JOB_URGENCY_MIN,
    FLUX_JOB_URGENCY_DEFAULT = 16,
    FLUX_JOB_URGENCY_MAX = 31,
    FLUX_JOB_URGENCY_EXPEDITE = FLUX_JOB_URGENCY_MAX,
};

/* PRIORITY_MAX does not fit an int: plain macros avoid a C enum overflow. */
#define FLUX_JOB_PRIORITY_MIN 0
#define FLUX_JOB_PRIORITY_MAX 4294967295U

/* fmt: "S" (default) upper long, "s" lower long, "C"/"c" one letter. */
const char *flux_job_statetostr (flux_job_state_t state, const char *fmt);
int flux_job_strtostate (const char *s, flux_job_state_t *state);
const char *flux_job_resulttostr (flux_job_result_t result, const char *fmt);
int flux_job_strtoresult (const char *s, flux_job_result_t *result);

/* Job ids as text. type: "dec" (NULL), "hex", "dothex", "kvs", "f58" or
 * "f58plain"; Flux's "words" and "emoji" fail with EPROTO here.  Parse
 * takes any of the others. */
int flux_job_id_parse (const char *s, flux_jobid_t *id);
int flux_job_id_encode (flux_jobid_t id,
                        const char *type,
                        char *buf,
                        size_t bufsz);

/* Metrics: accepted and dropped, as by a Flux broker without
 * FLUX_FRIPP_STATSD (docs/api.md). */
void flux_stats_count (flux_t *h, const char *name, ssize_t count);
void flux_stats_gauge_set (flux_t *h, const char *name, ssize_t value);
void flux_stats_gauge_inc (flux_t *h, const char *name, ssize_t inc);
void flux_stats_timing (flux_t *h, const char *name, double ms);
void flux_stats_set_period (flux_t *h, double period);
void flux_stats_set_prefix (flux_t *h, const char *fmt, ...);
bool flux_stats_enabled (flux_t *h, const char *metric);

/* Logging: routed to the scheduler's log.  A NULL handle logs too. */
int flux_vlog (flux_t *h, int level, const char *fmt, va_list ap);
int flux_log (flux_t *h, int level, const char *fmt, ...)
    FLUX_JOBTAP_PRINTF (3, 4);
void flux_log_verror (flux_t *h, const char *fmt, va_list ap);
void flux_log_error (flux_t *h, const char *fmt, ...)
    FLUX_JOBTAP_PRINTF (2, 3);
#define FLUX_LOG_ERROR(h) \
    (void)flux_log_error ((h), "%s::%d[%s]", __FILE__, __LINE__, __func__)
const char *flux_strerror (int errnum);

/* Handle aux storage (no broker behind it, but plugins use it). */
int flux_aux_set (flux_t *h, const char *name, void *aux, flux_free_f destroy);
void *flux_aux_get (flux_t *h, const char *name);

/* Messages (flux-core message.h, request.h, response.h).  Requests come
 * from the host's service transport (jobtap_host_service_call*) or from
 * flux_rpc in another plugin, never from a broker.  A handler may keep a
 * request with flux_msg_incref and respond later, from another callback
 * or thread, then flux_msg_decref it. */
enum {
    FLUX_MSGTYPE_REQUEST = 0x01,
    FLUX_MSGTYPE_RESPONSE = 0x02,
    FLUX_MSGTYPE_EVENT = 0x04,
    FLUX_MSGTYPE_CONTROL = 0x08,
    FLUX_MSGTYPE_ANY = 0x0f,
    FLUX_MSGTYPE_MASK = 0x0f,
};

struct flux_msg_cred {
    uint32_t userid;
    uint32_t rolemask;
};

typedef void (*flux_msg_handler_f) (flux_t *h,
                                    flux_msg_handler_t *mh,
                                    const flux_msg_t *msg,
                                    void *arg);

const flux_msg_t *flux_msg_incref (const flux_msg_t *msg);
void flux_msg_decref (const flux_msg_t *msg);
int flux_msg_get_type (const flux_msg_t *msg, int *type);
int flux_msg_get_topic (const flux_msg_t *msg, const char **topic);
bool flux_msg_has_payload (const flux_msg_t *msg);
bool flux_msg_is_noresponse (const flux_msg_t *msg);
int flux_msg_get_string (const flux_msg_t *msg, const char **s);
int flux_msg_unpack (const flux_msg_t *msg, const char *fmt, ...);
int flux_msg_vunpack (const flux_msg_t *msg, const char *fmt, va_list ap);
const char *flux_msg_last_error (const flux_msg_t *msg);
int flux_msg_get_userid (const flux_msg_t *msg, uint32_t *userid);
int flux_msg_get_rolemask (const flux_msg_t *msg, uint32_t *rolemask);
int flux_msg_get_cred (const flux_msg_t *msg, struct flux_msg_cred *cred);
/* The owner always; others need FLUX_ROLE_USER and cred.userid ==
 * userid (not FLUX_USERID_UNKNOWN).  Else -1, EPERM. */
int flux_msg_cred_authorize (struct flux_msg_cred cred, uint32_t userid);
int flux_msg_authorize (const flux_msg_t *msg, uint32_t userid);
int flux_msg_get_errnum (const flux_msg_t *msg, int *errnum);

int flux_request_decode (const flux_msg_t *msg,
                         const char **topic,
                         const char **s);
int flux_request_unpack (const flux_msg_t *msg,
                         const char **topic,
                         const char *fmt,
                         ...);
int flux_response_decode (const flux_msg_t *msg,
                          const char **topic,
                          const char **s);
int flux_response_decode_error (const flux_msg_t *msg, const char **errstr);
int flux_respond (flux_t *h, const flux_msg_t *request, const char *s);
int flux_respond_pack (flux_t *h,
                       const flux_msg_t *request,
                       const char *fmt,
                       ...);
int flux_respond_error (flux_t *h,
                        const flux_msg_t *request,
                        int errnum,
                        const char *errstr);

/* RPCs and futures (flux-core rpc.h, future.h) to the services plugins
 * registered here: "job-manager.<plugin>.<method>" or "<plugin>.<method>".
 * Any other topic fails through the future with ENOSYS.  A continuation
 * runs when the response arrives, or at once if it has; with a timeout
 * >= 0 and no response by then, on the reactor's thread with ETIMEDOUT.
 * A future not yet fulfilled cannot be waited for (EDEADLK). */
enum {
    FLUX_RPC_NORESPONSE = 1,
    FLUX_RPC_STREAMING = 2,
};
typedef void (*flux_continuation_f) (flux_future_t *f, void *arg);

flux_future_t *flux_rpc (flux_t *h,
                         const char *topic,
                         const char *s,
                         uint32_t nodeid,
                         int flags);
flux_future_t *flux_rpc_pack (flux_t *h,
                              const char *topic,
                              uint32_t nodeid,
                              int flags,
                              const char *fmt,
                              ...);
flux_future_t *flux_rpc_vpack (flux_t *h,
                               const char *topic,
                               uint32_t nodeid,
                               int flags,
                               const char *fmt,
                               va_list ap);
int flux_rpc_get (flux_future_t *f, const char **s);
int flux_rpc_get_unpack (flux_future_t *f, const char *fmt, ...);
int flux_rpc_get_vunpack (flux_future_t *f, const char *fmt, va_list ap);

int flux_future_then (flux_future_t *f,
                      double timeout,
                      flux_continuation_f cb,
                      void *arg);
int flux_future_wait_for (flux_future_t *f, double timeout);
bool flux_future_is_ready (flux_future_t *f);
int flux_future_get (flux_future_t *f, const void **result);
void flux_future_destroy (flux_future_t *f);
void flux_future_incref (flux_future_t *f);
void flux_future_decref (flux_future_t *f);
bool flux_future_has_error (flux_future_t *f);
const char *flux_future_error_string (flux_future_t *f);
#define future_strerror(__f, __errno)                                          \
    (flux_future_has_error ((__f)) ? flux_future_error_string ((__f))          \
                                   : flux_strerror ((__errno)))
flux_t *flux_future_get_flux (flux_future_t *f);
int flux_future_aux_set (flux_future_t *f,
                         const char *name,
                         void *aux,
                         flux_free_f destroy);
void *flux_future_aux_get (flux_future_t *f, const char *name);

/* The reactor and timers (flux-core reactor.h, watcher.h).  The runtime
 * runs one reactor on a thread of its own, started with the first timer.
 * Callbacks run there with the runtime's lock held, like any other
 * callback: no current job, and any flux_jobtap_* call allowed.  A
 * plugin's watchers stop for good when it is removed.  Timers only: no
 * fd, prepare, check, idle, signal, stat or periodic watchers. */
enum {
    FLUX_REACTOR_NOWAIT = 1,
    FLUX_REACTOR_ONCE = 2,
};
typedef void (*flux_watcher_f) (flux_reactor_t *r,
                                flux_watcher_t *w,
                                int revents,
                                void *arg);

flux_reactor_t *flux_get_reactor (flux_t *h);
/* Refused (-1, EINVAL, a log line): the runtime's thread runs the loop. */
int flux_reactor_run (flux_reactor_t *r, int flags);
/* Ignored, with a log line: the loop runs until the runtime ends. */
void flux_reactor_stop (flux_reactor_t *r);
void flux_reactor_stop_error (flux_reactor_t *r);
/* Wall-clock seconds: in a callback, when its loop turn began. */
double flux_reactor_now (flux_reactor_t *r);
void flux_reactor_now_update (flux_reactor_t *r);
double flux_reactor_time (void);

/* after, repeat: seconds (>= 0); repeat 0 fires once.  Created stopped. */
flux_watcher_t *flux_timer_watcher_create (flux_reactor_t *r,
                                           double after,
                                           double repeat,
                                           flux_watcher_f cb,
                                           void *arg);
/* On an active timer it takes effect now: due 'after' from now. */
void flux_timer_watcher_reset (flux_watcher_t *w, double after, double repeat);
void flux_timer_watcher_again (flux_watcher_t *w);

void flux_watcher_start (flux_watcher_t *w);
void flux_watcher_stop (flux_watcher_t *w);
/* Safe from the watcher's own callback. */
void flux_watcher_destroy (flux_watcher_t *w);
bool flux_watcher_is_active (flux_watcher_t *w);
/* Wall-clock time of the next expiry (flux_reactor_time's scale). */
double flux_watcher_next_wakeup (flux_watcher_t *w);
/* Recorded but without effect: the loop never runs out of watchers. */
void flux_watcher_ref (flux_watcher_t *w);
void flux_watcher_unref (flux_watcher_t *w);
bool flux_watcher_is_referenced (flux_watcher_t *w);
void flux_watcher_set_priority (flux_watcher_t *w, int priority);

/* Not available without a Flux broker: they log and fail with ENOSYS
 * (see docs/api.md). */
const char *flux_attr_get (flux_t *h, const char *name);
int flux_get_rank (flux_t *h, uint32_t *rank);
int flux_get_size (flux_t *h, uint32_t *size);

#ifdef __cplusplus
}
#endif

#endif /* !SLURM_JOBTAP_FLUX_CORE_H */
