/* conf: the adapter's own settings, the [slurm-jobtap] table of
 * jobtap.conf (docs/admin.md). Loaded by the entry points at init and
 * reconfigure, read by every module from any thread.
 *
 * Locks: conf->lock is a leaf: nothing else is taken while it is held, and
 * it may be taken under slurmctld locks and the runtime's mutex.  The
 * flags every submission reads are atomics, read without it: each is
 * one value, and a reconfigure that lands during a submission may be
 * seen by one read and not the next, as with the lock. */
#ifndef SLURM_JOBTAP_ADAPTER_CONF_H
#define SLURM_JOBTAP_ADAPTER_CONF_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

enum priority_mode { PRIORITY_SITE_FACTOR, PRIORITY_AUTHORITATIVE };

struct conf {
    pthread_mutex_t lock;
    _Atomic int priority_mode; /* enum priority_mode */
    int reprioritize_period;   /* seconds; 0 = off */
    atomic_bool log_jobspec;   /* log the jobspec built for each job */
    char *control_socket;    /* the control socket's path (control.h) */
    int control_port;        /* the control port (TCP); 0: closed */
    char *control_address;   /* where it listens; NULL: every address */
    char *state_dir;         /* the jobs' kept state; NULL: not kept */
    bool state_sync;         /* fdatasync it after each agent pass */
    atomic_bool policy_defaults; /* Flux's [policy] sets jobspec defaults */
};

#define CONF_INIT                                                              \
    {                                                                          \
        .lock = PTHREAD_MUTEX_INITIALIZER, .reprioritize_period = 30,          \
        .state_sync = true,                                                    \
    }

/* Read the settings from the runtime's loaded config; a value of the wrong
 * type or an unknown mode keeps the default and is logged. Calls into the
 * runtime, so not under conf->lock or inside a runtime callback. */
void conf_load (struct conf *conf);

bool conf_log_jobspec (struct conf *conf);
/* Whether the loaded jobtap.conf sets Flux's jobspec defaults (a default
 * queue or duration): else a submission need not ask for them. */
bool conf_policy_defaults (struct conf *conf);
enum priority_mode conf_priority_mode (struct conf *conf);
int conf_reprioritize_period (struct conf *conf);

/* The control socket's path: control-socket, default
 * "<StateSaveLocation>/jobtap.sock". A new string (caller frees), NULL
 * when out of memory. */
char *conf_control_socket (struct conf *conf);

/* The control port (0: closed) and in *address where it listens (a new
 * string, or NULL for every address). */
int conf_control_port (struct conf *conf, char **address);

/* Where the jobs' state is kept (state-dir, default
 * "<StateSaveLocation>/jobtap-state"; "" keeps none): a new string, or
 * NULL. *sync: whether it is synced to disk (state-sync, default true). */
char *conf_state_dir (struct conf *conf, bool *sync);
/* Free what conf_load allocated (the adapter's fini). */
void conf_clear (struct conf *conf);

#endif
