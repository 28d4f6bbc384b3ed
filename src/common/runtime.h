/* The runtime's context: everything the jobtap runtime knows, in one
 * struct that each module is handed (or reaches through a job, job->rt,
 * or a plugin, jt_runtime).  There is one per process: host.c makes it at
 * jobtap_host_init and is the only place that keeps it, because the host
 * API (host.h) is process-wide as Slurm's plugin API is.  Fields belong
 * to the module named beside them; others only read them.  The modules'
 * own state is behind pointers to their types (job.h, dispatch.h, ...),
 * so this header includes none of theirs. */
#ifndef JOBTAP_RUNTIME_H
#define JOBTAP_RUNTIME_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <jansson.h>
#include <flux/core.h>

struct compact_memo;
struct dispatch;
struct job_table;
struct jobtap_host_ops;
struct jt_plugin;
struct policy;
struct store;
struct update_memo;

struct runtime {
    int refcount;                  /* host.c: jobtap_host_init/fini pairs */
    const struct jobtap_host_ops *ops; /* host.c: the scheduler's actions */
    void *ops_arg;

    flux_t *h;                     /* host.c: what plugins get as flux_t */
    struct jt_plugin *plugins;     /* loader.c: loaded, in load order */
    struct jt_plugin *retired;     /* jtplugin.c: unloaded mid-callback */
    int calls_active;              /* jtplugin.c */
    struct jt_plugin *calling;     /* jtplugin.c: whose code runs now */
    flux_reactor_t *reactor;       /* reactor.c: made on first use */

    struct job_table *jobs;        /* job.c: the table, FIFOs, hot ring */
    struct dispatch *dispatch;     /* dispatch.c: job stack, topic cache */
    struct compact_memo *compact_memo; /* compact.c: shared subtrees */
    struct update_memo *update_memo; /* update_memo.c: updates packed lately */
    /* spec.c: how the updates object it holds bears on the dependencies'
     * path, as job_dependencies last asked it (enum key_place) */
    json_t *deps_updates;
    int deps_place;
    uint64_t next_token;           /* submit.c: provisional ids */
    json_t *inactive_order;        /* host.c: inactive ids, oldest first */

    char *config_path;             /* jobtap_conf.c */
    json_t *config;                /* whole instance config */
    bool keep_eventlog;            /* jobtap_conf.c: ops' or keep-eventlog */
    json_t *plugins_conf;          /* [job-manager] plugins as loaded */
    struct policy *policy;         /* jobtap_conf.c: [policy] and [queues] */
    bool configured;
    double config_loaded_at;       /* jobtap_conf.c: when config took effect */
    double reload_at;              /* jobtap_conf.c: the last reload, 0 if none */
    char *reload_error;            /* jobtap_conf.c: why it was refused, or NULL */
    struct store *store;           /* store.c: NULL unless the host opened it */
    bool in_pass;                  /* priority.c: reprioritize_all runs */
    json_t *pass_in, *pass_out;    /* priority_args.c: a pass's reused args */
};

/* The process's runtime.  Only the host API's entry points (host.c,
 * jobtap_conf.c, submit.c, restore.c, update.c) call this; everything below
 * them is handed the runtime. */
struct runtime *host_runtime (void);

static inline double now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

#endif
