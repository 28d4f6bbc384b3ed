/* The Slurm side of slurm-jobtap: feeds slurmctld's jobs into the jobtap
 * runtime and carries the runtime's decisions (holds, releases,
 * priorities, cancellations) back into the Slurm job records.
 *
 * Why jobs are created held: the job id is unknown in job_submit, and the
 * first hook with a job record (site_factor_p_set) runs just before
 * slurmctld recomputes the priority, so a hold set there would be lost and
 * the job could start before jobtap has decided. Instead job_submit makes
 * every accepted job start held, and the agent thread below runs job.new
 * for it (with the real id), then holds it for jobtap's reasons or
 * releases it into normal scheduling.
 *
 * Actions from the runtime are applied at once when the calling thread is
 * one of ours holding the slurmctld job write lock, and otherwise queued
 * for the agent, which takes the locks itself. */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "src/common/slurm_xlator.h"
#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/read_config.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/locks.h"
#include "src/slurmctld/slurmctld.h"

#include "adapter.h"
#include "host.h"
#include "jobspec.h"

/* Marks, in job_desc->spank_job_env (kept with the job record and its
 * saved state), the submission a job came from:
 * SLURM_JOBTAP_SUBMIT=<boot>:<token>:<urgency>:<operator priority or 0>
 * where <boot> tells this slurmctld's tokens from a previous one's. */
#define SUBMIT_ENV "SLURM_JOBTAP_SUBMIT="
/* Every hold the shim owns shows this prefix in the job's reason. */
#define HOLD_PREFIX "jobtap: "

enum priority_mode { PRIORITY_SITE_FACTOR, PRIORITY_AUTHORITATIVE };

static struct {
    pthread_mutex_t lock; /* init/fini and settings */
    int refcount;
    enum priority_mode priority_mode;
    int reprioritize_period; /* seconds */
    bool log_jobspec;        /* log the jobspec built for each job */

    pthread_t agent;
    bool agent_started;
    bool agent_stop;
    bool discover; /* a job was accepted since the last pass */
    bool reprioritize; /* reprioritize_all requested */
    bool polling;  /* the agent waits 5 ms between quick passes */
    int unbound;   /* accepted submissions the agent has not bound yet */
    pthread_mutex_t queue_lock; /* leaf lock: the queue and flags above */
    pthread_cond_t queue_cond;
    struct action *queue;
    size_t queue_len, queue_size;

    uint32_t scan_next; /* first job id not yet looked at; 0 = full scan */
    uint64_t boot;      /* identifies this process's submission tokens */
} ad = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .queue_lock = PTHREAD_MUTEX_INITIALIZER,
    .queue_cond = PTHREAD_COND_INITIALIZER,
    .reprioritize_period = 30,
};

/* True while this thread holds the slurmctld job write lock in one of our
 * hooks or in the agent, so actions can touch job records directly. */
static __thread bool have_job_write;
/* True inside site_factor_p_set: slurmctld computes the priority itself
 * right after, so set_priority must not call set_job_prio(). */
static __thread bool in_site_factor_set;
/* Actions this thread applied to job records: the agent asks for a
 * scheduler pass after any, or a job released by a plugin during the
 * sweep would wait for Slurm's next periodic pass (up to a minute). */
static __thread unsigned applied_here;

enum action_kind { A_HOLD, A_RELEASE, A_PRIORITY, A_CANCEL };
struct action {
    enum action_kind kind;
    uint32_t id;
    int64_t priority;
    char *text; /* malloc'd */
};

static void queue_action (enum action_kind kind, uint64_t id,
                          int64_t priority, const char *text, size_t len);

/* --- Logging ------------------------------------------------------------ */

/* Every line from the runtime or a plugin starts with "jobtap" so admins
 * can grep slurmctld's log for the shim's decisions. */
static void log_cb (int level, const char *msg, void *arg)
{
    const char *prefix = strncmp (msg, "jobtap", 6) ? "jobtap: " : "";
    (void)arg;
    if (level <= LOG_ERR)
        error ("%s%s", prefix, msg);
    else if (level <= LOG_INFO)
        info ("%s%s", prefix, msg);
    else
        debug ("%s%s", prefix, msg);
}

/* --- Acting on Slurm jobs (job write lock held) ------------------------ */

static bool held_by_shim (const job_record_t *job)
{
    return job->priority == 0 && job->state_desc &&
           !strncmp (job->state_desc, HOLD_PREFIX, strlen (HOLD_PREFIX));
}

/* The mark is written once and read twice per job under slurmctld's
 * locks, so its numbers are formatted and parsed by hand: printf and
 * strtoull cost ~2.5k and ~200 instructions a number there. */
static char *put_decimal (char *p, uint64_t v)
{
    char digits[20];
    int n = 0;
    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n > 0)
        *p++ = digits[--n];
    return p;
}

/* The number at s, ending at the separator sep; NULL if there is none or
 * it does not fit. */
static const char *get_decimal (const char *s, char sep, uint64_t *v)
{
    uint64_t x = 0;
    const char *p = s;
    for (; *p >= '0' && *p <= '9'; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (x > (UINT64_MAX - d) / 10)
            return NULL;
        x = x * 10 + d;
    }
    if (p == s || *p != sep)
        return NULL;
    *v = x;
    return p + 1;
}

/* Parse SLURM_JOBTAP_SUBMIT from a job's spank environment. A token from
 * an earlier slurmctld process reads as 0 (no provisional job). */
static bool submit_mark (const job_record_t *job,
                         uint64_t *token,
                         int *urgency,
                         uint32_t *op_priority)
{
    for (uint32_t i = 0; job->spank_job_env && i < job->spank_job_env_size;
         i++) {
        const char *e = job->spank_job_env[i];
        uint64_t f[4];
        if (!e || strncmp (e, SUBMIT_ENV, strlen (SUBMIT_ENV)))
            continue;
        e += strlen (SUBMIT_ENV);
        if (!(e = get_decimal (e, ':', &f[0]))
            || !(e = get_decimal (e, ':', &f[1]))
            || !(e = get_decimal (e, ':', &f[2]))
            || !get_decimal (e, '\0', &f[3]) || f[2] > INT_MAX
            || f[3] > UINT32_MAX)
            continue;
        *token = f[0] == ad.boot ? f[1] : 0;
        *urgency = (int)f[2];
        *op_priority = (uint32_t)f[3];
        return true;
    }
    return false;
}

static void hold_job (job_record_t *job, const char *reason)
{
    time_t now = time (NULL);

    if (!IS_JOB_PENDING (job))
        return;
    job->priority = 0;
    job->direct_set_prio = 1;
    job->state_reason = WAIT_HELD;
    xfree (job->state_desc);
    job->state_desc = xstrdup (reason);
    if (job->details && job->details->begin_time < now)
        job->details->begin_time = 0;
    last_job_update = now;
}

/* A job the user asked to hold (-H, urgency 0) stays held the Slurm way,
 * so the user can release it. */
static void user_hold_job (job_record_t *job)
{
    job->priority = 0;
    job->direct_set_prio = 1;
    job->state_reason = WAIT_HELD_USER;
    xfree (job->state_desc);
    last_job_update = time (NULL);
}

static void release_job (job_record_t *job)
{
    time_t now = time (NULL);
    uint64_t token;
    int urgency = 16;
    uint32_t op_priority = 0;

    if (!IS_JOB_PENDING (job))
        return;
    (void)submit_mark (job, &token, &urgency, &op_priority);
    xfree (job->state_desc);
    job->state_reason = WAIT_NO_REASON;
    if (job->details && job->details->begin_time < now)
        job->details->begin_time = 0;
    if (op_priority) {
        job->priority = op_priority;
        job->direct_set_prio = 1;
    } else {
        job->direct_set_prio = 0;
        set_job_prio (job); /* calls site_factor_p_set: our priority */
    }
    last_job_update = now;
}

static uint32_t site_factor_for (int64_t priority)
{
    int64_t v = (int64_t)NICE_OFFSET + priority;
    return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

static bool log_jobspec (void)
{
    pthread_mutex_lock (&ad.lock);
    bool on = ad.log_jobspec;
    pthread_mutex_unlock (&ad.lock);
    return on;
}

static int priority_mode (void)
{
    pthread_mutex_lock (&ad.lock);
    int mode = ad.priority_mode;
    pthread_mutex_unlock (&ad.lock);
    return mode;
}

/* Put the jobtap priority into the job record. Inside site_factor_p_set
 * slurmctld is computing the priority (possibly while releasing a hold:
 * it resets the reason only afterwards), so the value is always set there;
 * elsewhere a held job is left alone. */
static void apply_priority (job_record_t *job, int64_t priority)
{
    if (!IS_JOB_PENDING (job) || priority < 0)
        return;
    if (!in_site_factor_set && job->priority == 0)
        return;
    if (priority_mode () == PRIORITY_AUTHORITATIVE) {
        if (priority == 0) {
            /* slurmctld overwrites a hold made in site_factor_p_set:
             * let the agent make it. */
            if (in_site_factor_set)
                queue_action (A_HOLD, job->job_id, 0,
                              HOLD_PREFIX "priority 0",
                              sizeof (HOLD_PREFIX "priority 0"));
            else
                hold_job (job, HOLD_PREFIX "priority 0");
            return;
        }
        job->priority = priority > UINT32_MAX ? UINT32_MAX : priority;
        job->direct_set_prio = 1;
    } else {
        job->site_factor = site_factor_for (priority);
        if (!in_site_factor_set)
            set_job_prio (job);
    }
    last_job_update = time (NULL);
}

static void cancel_job (job_record_t *job, const char *type, const char *note)
{
    char *desc = xstrdup_printf (HOLD_PREFIX "exception %s%s%s", type,
                                 note && note[0] ? ": " : "", note ? note : "");
    info ("jobtap: cancelling %pJ: %s", job, desc);
    if (IS_JOB_FINISHED (job))
        goto out;
    job_signal (job, SIGKILL, 0, slurm_conf.slurm_user_id, false);
    xfree (job->state_desc);
    job->state_desc = desc;
    desc = NULL;
out:
    xfree (desc);
}

static void apply (const struct action *a)
{
    job_record_t *job = find_job_record (a->id);
    if (!job)
        return;
    applied_here++;
    switch (a->kind) {
    case A_HOLD:
        hold_job (job, a->text);
        break;
    case A_RELEASE:
        if (held_by_shim (job))
            release_job (job);
        break;
    case A_PRIORITY:
        apply_priority (job, a->priority);
        break;
    case A_CANCEL:
        cancel_job (job, a->text, a->text + strlen (a->text) + 1);
        break;
    }
}

/* --- The action queue ---------------------------------------------------- */

static void wake_agent_locked (void)
{
    pthread_cond_signal (&ad.queue_cond);
}

static void queue_action (enum action_kind kind, uint64_t id,
                          int64_t priority, const char *text, size_t len)
{
    struct action a = {.kind = kind, .id = (uint32_t)id, .priority = priority};

    if (text) {
        a.text = malloc (len);
        if (!a.text) {
            error ("jobtap: out of memory queueing an action for job %u",
                   a.id);
            return;
        }
        memcpy (a.text, text, len);
    }
    pthread_mutex_lock (&ad.queue_lock);
    if (ad.queue_len == ad.queue_size) {
        size_t n = ad.queue_size ? ad.queue_size * 2 : 64;
        struct action *q = realloc (ad.queue, n * sizeof (*q));
        if (!q) {
            pthread_mutex_unlock (&ad.queue_lock);
            error ("jobtap: out of memory queueing an action for job %u",
                   a.id);
            free (a.text);
            return;
        }
        ad.queue = q;
        ad.queue_size = n;
    }
    ad.queue[ad.queue_len++] = a;
    wake_agent_locked ();
    pthread_mutex_unlock (&ad.queue_lock);
}

/* An action from the runtime: applied now if this thread may touch job
 * records, else queued for the agent. */
static void submit_action (enum action_kind kind, uint64_t id,
                           int64_t priority, const char *text, size_t len)
{
    /* Provisional (not yet created) jobs have no Slurm record. */
    if (id > UINT32_MAX)
        return;
    if (have_job_write) {
        struct action a = {.kind = kind,
                           .id = (uint32_t)id,
                           .priority = priority,
                           .text = (char *)text};
        apply (&a);
        return;
    }
    queue_action (kind, id, priority, text, len);
}

static void hold_cb (uint64_t id, const char *reason, void *arg)
{
    (void)arg;
    submit_action (A_HOLD, id, 0, reason, strlen (reason) + 1);
}

static void release_cb (uint64_t id, void *arg)
{
    (void)arg;
    submit_action (A_RELEASE, id, 0, NULL, 0);
}

static void set_priority_cb (uint64_t id, int64_t priority, void *arg)
{
    (void)arg;
    submit_action (A_PRIORITY, id, priority, NULL, 0);
}

static void cancel_cb (uint64_t id, const char *type, const char *note,
                       void *arg)
{
    (void)arg;
    /* type and note travel as two strings in one buffer */
    size_t tl = strlen (type) + 1, nl = strlen (note ? note : "") + 1;
    char buf[tl + nl];
    memcpy (buf, type, tl);
    memcpy (buf + tl, note ? note : "", nl);
    submit_action (A_CANCEL, id, 0, buf, tl + nl);
}

static const struct jobtap_host_ops ops = {
    .log = log_cb,
    .hold = hold_cb,
    .release = release_cb,
    .set_priority = set_priority_cb,
    .cancel = cancel_cb,
    .compact_later = true, /* the agent compacts outside slurmctld's locks */
};

/* --- Bringing Slurm jobs into the runtime (job write lock held) ------- */

static bool known (uint32_t id)
{
    int64_t p;
    return jobtap_host_job_priority (id, &p) == 0;
}

static void log_record_jobspec (job_record_t *job, json_t *spec)
{
    char *s = json_dumps (spec, JSON_COMPACT | JSON_SORT_KEYS);
    info ("jobtap: %pJ jobspec from record %s", job, s ? s : "?");
    free (s);
}

/* The job ended in Slurm (or is gone: job NULL): CLEANUP with its
 * result, then INACTIVE. */
static void finish_job (uint64_t id, const job_record_t *job)
{
    int result = JOBTAP_RESULT_COMPLETED;
    if (job && IS_JOB_CANCELLED (job))
        result = JOBTAP_RESULT_CANCELED;
    else if (job && IS_JOB_TIMEOUT (job))
        result = JOBTAP_RESULT_TIMEOUT;
    else if (job && (IS_JOB_FAILED (job) || job->exit_code))
        result = JOBTAP_RESULT_FAILED;
    jobtap_host_job_finish (id, result, job ? job->exit_code : 0, NULL);
    jobtap_host_job_inactive (id);
}

/* After job.new: make the Slurm job agree with the runtime's decision:
 * held (jobtap's reason) while in DEPEND or PRIORITY, else released, or
 * held by its user at urgency 0. After a restart this also lifts holds the
 * plugins no longer want. */
static void settle_job (job_record_t *job, bool creation_hold, int urgency)
{
    if (IS_JOB_FINISHED (job) || IS_JOB_COMPLETING (job)) {
        /* Started and ended between two passes (array tasks split off
         * and run by the scheduler): it still gets its whole lifecycle. */
        jobtap_host_job_run (job->job_id, NULL);
        finish_job (job->job_id, job);
        return;
    }
    if (IS_JOB_RUNNING (job) || IS_JOB_SUSPENDED (job)) {
        jobtap_host_job_run (job->job_id, NULL);
        return;
    }
    if (!IS_JOB_PENDING (job))
        return;
    int state = jobtap_host_job_state (job->job_id);
    if (state == JOBTAP_STATE_SCHED) {
        if (urgency == 0) {
            if (job->state_reason != WAIT_HELD_USER || held_by_shim (job))
                user_hold_job (job);
        } else if (creation_hold || held_by_shim (job))
            release_job (job);
    } else if (state == JOBTAP_STATE_DEPEND || state == JOBTAP_STATE_PRIORITY) {
        if (!held_by_shim (job)) /* the runtime's hold normally did this */
            hold_job (job, HOLD_PREFIX "waiting for a jobtap decision");
    }
}

/* job.new for a job the runtime has not seen (binding the provisional job
 * of its submission when there is one), then settle it. */
static void bind_job (job_record_t *job)
{
    uint64_t token = 0;
    int urgency = jobspec_urgency_from_record (job);
    int mark_urgency = urgency;
    uint32_t op_priority = 0;
    double t_submit = job->details ? (double)job->details->submit_time
                                   : (double)time (NULL);
    jobtap_host_error_t err = {{0}};
    json_t *spec = NULL;
    int rc;

    /* A job in this process's creation hold takes the urgency it was
     * submitted with; otherwise the record's hold state tells. */
    (void)submit_mark (job, &token, &mark_urgency, &op_priority);
    if (token) {
        pthread_mutex_lock (&ad.queue_lock);
        ad.unbound--;
        pthread_mutex_unlock (&ad.queue_lock);
    }
    bool creation_hold = token != 0 && job->priority == 0 && !held_by_shim (job);
    if (creation_hold)
        urgency = mark_urgency;
    if (log_jobspec () || token == 0)
        spec = jobspec_from_record (job);
    if (spec && log_jobspec ())
        log_record_jobspec (job, spec);
    rc = jobtap_host_job_new (token, job->job_id, job->user_id, urgency,
                              t_submit, token ? NULL : spec, &err);
    if (rc < 0 && token != 0 && errno == ENOENT) {
        /* No provisional job (restart, or a job from before jobtap): the
         * runtime replays job.create and job.new from the record. */
        if (!spec)
            spec = jobspec_from_record (job);
        rc = jobtap_host_job_new (0, job->job_id, job->user_id, urgency,
                                  t_submit, spec, &err);
    }
    json_decref (spec);
    if (rc < 0) {
        error ("jobtap: %pJ: job.new failed: %s; leaving it to Slurm", job,
               err.text);
        if (creation_hold || held_by_shim (job))
            release_job (job);
        return;
    }
    settle_job (job, creation_hold, urgency);
}

struct job_vec {
    job_record_t **jobs;
    size_t n, size;
};

static int collect_unknown (void *x, void *arg)
{
    job_record_t *job = x;
    struct job_vec *v = arg;
    if (IS_JOB_FINISHED (job) || known (job->job_id))
        return 0;
    if (v->n == v->size) {
        size_t size = v->size ? v->size * 2 : 256;
        job_record_t **jobs = realloc (v->jobs, size * sizeof (*jobs));
        if (!jobs)
            return -1;
        v->jobs = jobs;
        v->size = size;
    }
    v->jobs[v->n++] = job;
    return 0;
}

/* Where a recovered job stands in the jobtap lifecycle, by what Slurm
 * kept: a jobtap hold is DEPEND or PRIORITY, other pending jobs SCHED. */
static int replay_rank (const job_record_t *job)
{
    if (IS_JOB_PENDING (job) && held_by_shim (job))
        return strstr (job->state_desc, "priority") ? JOBTAP_STATE_PRIORITY
                                                    : JOBTAP_STATE_DEPEND;
    if (IS_JOB_PENDING (job))
        return JOBTAP_STATE_SCHED;
    return JOBTAP_STATE_RUN;
}

static int by_state_then_id (const void *a, const void *b)
{
    const job_record_t *x = *(job_record_t *const *)a;
    const job_record_t *y = *(job_record_t *const *)b;
    int rx = replay_rank (x), ry = replay_rank (y);
    if (rx != ry)
        return rx < ry ? -1 : 1;
    return x->job_id < y->job_id ? -1 : x->job_id > y->job_id;
}

/* All jobs the runtime does not know: at start-up, everything slurmctld
 * recovered. Jobs from this process's own submissions bind to their
 * provisional jobs; the rest are restored in one batch, so each plugin
 * gets them in its own load sort order. */
static int bind_all_unknown (void)
{
    struct job_vec v = {0};
    json_t *batch = json_array ();
    jobtap_host_error_t err = {{0}};
    size_t restored = 0;

    list_for_each (job_list, collect_unknown, &v);
    qsort (v.jobs, v.n, sizeof (*v.jobs), by_state_then_id);
    for (size_t i = 0; i < v.n; i++) {
        job_record_t *job = v.jobs[i];
        uint64_t token = 0;
        int urgency;
        uint32_t op_priority;
        if (submit_mark (job, &token, &urgency, &op_priority) && token) {
            bind_job (job);
            v.jobs[i] = NULL;
            continue;
        }
        json_t *spec = jobspec_from_record (job);
        if (log_jobspec ())
            log_record_jobspec (job, spec);
        json_array_append_new (
            batch,
            json_pack ("{s:I s:I s:i s:f s:o s:i}", "id",
                       (json_int_t)job->job_id, "userid",
                       (json_int_t)job->user_id, "urgency",
                       jobspec_urgency_from_record (job), "t_submit",
                       job->details ? (double)job->details->submit_time
                                    : (double)time (NULL),
                       "jobspec", spec, "state", replay_rank (job)));
        restored++;
    }
    if (restored > 0) {
        if (jobtap_host_jobs_restore (batch, &err) < 0)
            error ("jobtap: restoring %zu jobs failed: %s", restored,
                   err.text);
        else
            info ("jobtap: restored %zu jobs", restored);
        for (size_t i = 0; i < v.n; i++)
            if (v.jobs[i])
                settle_job (v.jobs[i], false,
                            jobspec_urgency_from_record (v.jobs[i]));
    }
    json_decref (batch);
    free (v.jobs);
    return (int)v.n;
}

/* Jobs created since the last pass. Job ids come from one sequence, so
 * only the new range is looked at and the cost does not grow with the
 * number of jobs in the system. */
static int discover_jobs (void)
{
    uint32_t next;
    int found = 0;

    if (!job_list)
        return 0; /* slurmctld has not read its state yet */
    next = get_next_job_id (true);
    if (next == ad.scan_next)
        return 0;
    if (ad.scan_next == 0 || next < ad.scan_next ||
        next - ad.scan_next > 100000) {
        found = bind_all_unknown ();
    } else {
        for (uint32_t id = ad.scan_next; id < next; id++) {
            job_record_t *job = find_job_record (id);
            if (job && !known (id)) {
                bind_job (job);
                found++;
            }
        }
    }
    ad.scan_next = next;
    return found;
}

/* Tell the runtime about jobs that started or left Slurm, so it follows
 * the lifecycle and forgets finished jobs. */
static void sweep_jobs (void)
{
    json_t *ids = jobtap_host_job_list ();
    size_t i;
    json_t *v;

    json_array_foreach (ids, i, v)
    {
        uint64_t id = json_integer_value (v);
        job_record_t *job = find_job_record ((uint32_t)id);
        if (!job || IS_JOB_FINISHED (job) || IS_JOB_COMPLETING (job)) {
            finish_job (id, job);
        } else if ((IS_JOB_RUNNING (job) || IS_JOB_SUSPENDED (job)) &&
                   jobtap_host_job_state (id) < JOBTAP_STATE_RUN) {
            jobtap_host_job_run (id, NULL);
        }
    }
    json_decref (ids);
}

/* --- The agent thread ---------------------------------------------------- */

/* slurmctld has finished starting: the RPC thread is created after the
 * priority plugin's init().  Before that the agent must not act: setting
 * a priority (set_job_prio) would load priority/multifactor, whose init()
 * takes the job write lock the agent holds, and slurmctld dies with
 * "lock_slurmctld: pthread_rwlock_wrlock(): Resource deadlock avoided".
 * No submission can arrive before then either. */
static bool slurmctld_ready (void)
{
    return slurmctld_config.thread_id_rpc != 0;
}

static void *agent_main (void *arg)
{
    slurmctld_lock_t locks = {READ_LOCK, WRITE_LOCK, WRITE_LOCK, READ_LOCK,
                              READ_LOCK};
    time_t last_sweep = time (NULL);
    /* slurmctld creates a job after job_submit returns, in the same RPC,
     * so after a submission look again every 5 ms until it shows up. */
    int quick_passes = 0;
    (void)arg;

    for (;;) {
        struct action *q;
        size_t n;
        bool discover, reprioritize;
        time_t now;

        if (!slurmctld_ready ()) {
            struct timespec pause = {0, 50 * 1000 * 1000};
            bool stop;
            nanosleep (&pause, NULL);
            pthread_mutex_lock (&ad.queue_lock);
            stop = ad.agent_stop;
            pthread_mutex_unlock (&ad.queue_lock);
            if (stop)
                break;
            continue;
        }
        pthread_mutex_lock (&ad.queue_lock);
        if (!ad.agent_stop && ad.queue_len == 0 && !ad.discover &&
            !ad.reprioritize) {
            struct timespec until;
            clock_gettime (CLOCK_REALTIME, &until);
            if (quick_passes > 0) {
                quick_passes--;
                until.tv_nsec += 5 * 1000 * 1000;
                if (until.tv_nsec >= 1000000000) {
                    until.tv_sec++;
                    until.tv_nsec -= 1000000000;
                }
            } else
                until.tv_sec += 1;
            ad.polling = quick_passes > 0;
            pthread_cond_timedwait (&ad.queue_cond, &ad.queue_lock, &until);
            ad.polling = false;
        }
        if (ad.agent_stop) {
            pthread_mutex_unlock (&ad.queue_lock);
            break;
        }
        q = ad.queue;
        n = ad.queue_len;
        ad.queue = NULL;
        ad.queue_len = ad.queue_size = 0;
        discover = ad.discover;
        reprioritize = ad.reprioritize;
        ad.discover = ad.reprioritize = false;
        pthread_mutex_unlock (&ad.queue_lock);

        /* slurmctld is going down: leave its jobs alone from now on. */
        if (slurmctld_config.shutdown_time) {
            for (size_t i = 0; i < n; i++)
                free (q[i].text);
            free (q);
            continue;
        }
        now = time (NULL);
        pthread_mutex_lock (&ad.lock);
        int period = ad.reprioritize_period;
        pthread_mutex_unlock (&ad.lock);
        /* The lifecycle sweep runs even with reprioritizing turned off,
         * or the runtime would never forget finished jobs. */
        bool periodic = now - last_sweep >= (period > 0 ? period : 30);

        lock_slurmctld (locks);
        have_job_write = true;
        applied_here = 0;
        int found = discover_jobs ();
        for (size_t i = 0; i < n; i++)
            apply (&q[i]);
        if (periodic) {
            sweep_jobs ();
            last_sweep = now;
        }
        if ((periodic && period > 0) || reprioritize)
            jobtap_host_reprioritize_all ();
        have_job_write = false;
        unlock_slurmctld (locks);
        jobtap_host_compact ();

        /* Quick passes while accepted submissions wait to be bound (each
         * pass takes the write locks); at most 0.5 s after the last one,
         * in case slurmctld dropped a job after job_submit accepted it. */
        pthread_mutex_lock (&ad.queue_lock);
        if (ad.unbound <= 0) {
            ad.unbound = 0;
            quick_passes = 0;
        }
        else if (discover)
            quick_passes = 100;
        else if (quick_passes == 0)
            ad.unbound = 0;
        pthread_mutex_unlock (&ad.queue_lock);
        if (n > 0 || found > 0 || applied_here > 0)
            queue_job_scheduler ();
        for (size_t i = 0; i < n; i++)
            free (q[i].text);
        free (q);
    }
    return NULL;
}

static void wake_agent (bool discover, bool reprioritize)
{
    pthread_mutex_lock (&ad.queue_lock);
    ad.discover |= discover;
    ad.reprioritize |= reprioritize;
    wake_agent_locked ();
    pthread_mutex_unlock (&ad.queue_lock);
}

/* --- Configuration ------------------------------------------------------- */

/* Read our [slurm-jobtap] settings; unknown values keep the defaults and
 * are logged. */
static void load_settings (void)
{
    json_t *s = jobtap_host_settings ();
    const char *mode = NULL;
    int period = -1;
    int log_spec = 0;

    if (s && json_unpack (s, "{s?s s?i s?b}", "priority-mode", &mode,
                          "reprioritize-period", &period, "log-jobspec",
                          &log_spec) < 0)
        error ("jobtap: [slurm-jobtap] priority-mode must be a string, "
               "reprioritize-period an integer and log-jobspec a boolean; "
               "using defaults");
    pthread_mutex_lock (&ad.lock);
    ad.priority_mode = PRIORITY_SITE_FACTOR;
    if (mode && !strcmp (mode, "authoritative"))
        ad.priority_mode = PRIORITY_AUTHORITATIVE;
    else if (mode && strcmp (mode, "site-factor"))
        error ("jobtap: [slurm-jobtap] priority-mode \"%s\" is not "
               "\"site-factor\" or \"authoritative\"; using site-factor",
               mode);
    ad.reprioritize_period = period >= 0 ? period : 30;
    ad.log_jobspec = log_spec;
    pthread_mutex_unlock (&ad.lock);
    json_decref (s);
}

int jobtap_slurm_init (const char *plugin_type)
{
    jobtap_host_error_t err = {{0}};
    char *path = NULL;
    int rc = SLURM_ERROR;

    pthread_mutex_lock (&ad.lock);
    if (ad.refcount++ > 0) {
        pthread_mutex_unlock (&ad.lock);
        info ("jobtap: %s shares the runtime already loaded", plugin_type);
        return SLURM_SUCCESS;
    }
    pthread_mutex_unlock (&ad.lock);

    ad.boot = ((uint64_t)time (NULL) << 20) ^ (uint64_t)getpid ();
    if (jobtap_host_init (&ops, NULL) < 0) {
        error ("jobtap: cannot start the jobtap runtime: %m");
        goto fail;
    }
    path = get_extra_conf_path ("jobtap.conf");
    if (access (path, F_OK) < 0) {
        info ("jobtap: no %s; only the builtin plugins are loaded", path);
        xfree (path);
    }
    if (jobtap_host_load_config (path, &err) < 0) {
        error ("jobtap: %s", err.text);
        jobtap_host_fini ();
        goto fail;
    }
    load_settings ();
    json_t *names = jobtap_host_plugin_list (false);
    char *list = json_dumps (names, JSON_COMPACT);
    info ("jobtap: loaded %s: plugins %s", path ? path : "(no config)",
          list ? list : "[]");
    free (list);
    json_decref (names);

    ad.agent_stop = false;
    if (pthread_create (&ad.agent, NULL, agent_main, NULL) != 0) {
        error ("jobtap: cannot start the agent thread: %m");
        jobtap_host_fini ();
        goto fail;
    }
    ad.agent_started = true;
    rc = SLURM_SUCCESS;
    goto out;
fail:
    pthread_mutex_lock (&ad.lock);
    ad.refcount--;
    pthread_mutex_unlock (&ad.lock);
out:
    xfree (path);
    return rc;
}

void jobtap_slurm_fini (const char *plugin_type)
{
    (void)plugin_type;
    pthread_mutex_lock (&ad.lock);
    if (--ad.refcount > 0) {
        pthread_mutex_unlock (&ad.lock);
        return;
    }
    pthread_mutex_unlock (&ad.lock);
    if (ad.agent_started) {
        pthread_mutex_lock (&ad.queue_lock);
        ad.agent_stop = true;
        wake_agent_locked ();
        pthread_mutex_unlock (&ad.queue_lock);
        pthread_join (ad.agent, NULL);
        ad.agent_started = false;
    }
    jobtap_host_fini ();
}

void jobtap_slurm_reconfig (void)
{
    jobtap_host_error_t err = {{0}};

    if (jobtap_host_reload (&err) < 0)
        error ("jobtap: reconfigure failed, keeping the previous "
               "configuration: %s",
               err.text);
    else
        info ("jobtap: configuration reloaded");
    load_settings ();
    wake_agent (false, true);
}

/* --- job_submit/jobtap --------------------------------------------------- */

static void mark_submission (job_desc_msg_t *desc, uint64_t token,
                             int urgency, uint32_t op_priority)
{
    /* the prefix, four numbers of at most 20 digits, separators, NUL */
    char *mark = xmalloc (strlen (SUBMIT_ENV) + 4 * 21);
    char *p = mark + strlen (SUBMIT_ENV);

    memcpy (mark, SUBMIT_ENV, strlen (SUBMIT_ENV));
    p = put_decimal (p, ad.boot);
    *p++ = ':';
    p = put_decimal (p, token);
    *p++ = ':';
    p = put_decimal (p, urgency > 0 ? (uint64_t)urgency : 0);
    *p++ = ':';
    p = put_decimal (p, op_priority);
    *p = '\0';
    desc->spank_job_env =
        xrealloc (desc->spank_job_env,
                  sizeof (char *) * (desc->spank_job_env_size + 2));
    desc->spank_job_env[desc->spank_job_env_size++] = mark;
    desc->spank_job_env[desc->spank_job_env_size] = NULL;
}

int jobtap_slurm_job_submit (job_desc_msg_t *desc,
                             uint32_t submit_uid,
                             char **err_msg)
{
    jobtap_host_error_t err = {{0}};
    json_t *spec = jobspec_from_desc (desc);
    json_t *updates = NULL;
    uint64_t token = 0;
    int urgency = jobspec_urgency_from_desc (desc);
    char *msg = NULL;
    (void)submit_uid;

    if (!spec) {
        *err_msg = xstrdup ("jobtap: out of memory");
        return SLURM_ERROR;
    }
    if (log_jobspec ()) {
        char *s = json_dumps (spec, JSON_COMPACT | JSON_SORT_KEYS);
        info ("jobtap: jobspec of a submission by uid %u: %s", desc->user_id,
              s ? s : "?");
        free (s);
    }
    /* the runtime takes spec: a policy's update then edits it in place */
    if (jobtap_host_submit (spec, desc->user_id, urgency,
                            (double)time (NULL), JOBTAP_SUBMIT_TAKE_JOBSPEC,
                            &updates, &token, &err) < 0) {
        info ("jobtap: rejected a job of user %u: %s", desc->user_id,
              err.text);
        *err_msg = xstrdup (err.text);
        return SLURM_ERROR;
    }
    if (updates && json_object_size (updates) > 0 &&
        jobspec_apply_updates (desc, updates, &msg) < 0) {
        json_decref (updates);
        jobtap_host_submit_abort (token);
        info ("jobtap: rejected a job of user %u: %s", desc->user_id, msg);
        *err_msg = msg;
        return SLURM_ERROR;
    }
    json_decref (updates);
    mark_submission (desc, token, urgency,
                     desc->priority != 0 && desc->priority != NO_VAL
                         ? desc->priority
                         : 0);
    /* Created held; the agent releases it once jobtap has decided. */
    desc->priority = 0;
    /* Between quick passes the agent finds the job within 5 ms anyway;
     * waking it now would only have it wait for our write lock, a pass
     * (and a lock round) per job. */
    pthread_mutex_lock (&ad.queue_lock);
    ad.discover = true;
    ad.unbound++;
    if (!ad.polling)
        wake_agent_locked ();
    pthread_mutex_unlock (&ad.queue_lock);
    return SLURM_SUCCESS;
}

/* Urgency follows Slurm's user holds: `scontrol hold` is urgency 0 and
 * `scontrol release` the default 16 (job write lock held). */
static void follow_user_hold (job_desc_msg_t *desc, job_record_t *job)
{
    int urgency;
    bool had = have_job_write;

    if (desc->priority == 0)
        urgency = 0;
    else if (desc->priority == INFINITE && job->priority == 0 &&
             !held_by_shim (job))
        urgency = 16;
    else
        return;
    have_job_write = true;
    if (jobtap_host_job_urgency (job->job_id, urgency) < 0 && errno != ENOENT)
        error ("jobtap: %pJ: cannot set urgency %d: %m", job, urgency);
    have_job_write = had;
}

/* The values in 'final' that the request did not already carry: what
 * job.update.<key> handlers added. New reference. */
static json_t *added_updates (json_t *request, json_t *final)
{
    json_t *added = json_object ();
    const char *key;
    json_t *v;

    json_object_foreach (final, key, v)
    {
        if (!json_equal (json_object_get (request, key), v))
            json_object_set (added, key, v);
    }
    return added;
}

/* scontrol update: job.update.<key> for each changed field, then
 * job.validate on the updated jobspec (unless a handler validated it),
 * then job.update. Keys no plugin handles follow Slurm's own rules. */
static int update_from_modify (job_desc_msg_t *desc, job_record_t *job,
                       uint32_t submit_uid)
{
    json_t *request = jobspec_updates_from_desc (desc);
    json_t *final = NULL, *added = NULL;
    jobtap_host_error_t err = {{0}};
    uint32_t role = validate_operator (submit_uid) ? JOBTAP_ROLE_OWNER
                                                   : JOBTAP_ROLE_USER;
    bool had = have_job_write;
    char *msg = NULL;
    int rc = SLURM_SUCCESS;

    if (!request || json_object_size (request) == 0 || !known (job->job_id))
        goto out;
    have_job_write = true;
    if (jobtap_host_job_update_ex (job->job_id, request, submit_uid, role,
                                   JOBTAP_UPDATE_UNHANDLED_OK, &final,
                                   &err) < 0) {
        info ("jobtap: update of %pJ by uid %u rejected: %s", job, submit_uid,
              err.text);
        rc = ESLURM_ACCESS_DENIED;
        goto out_restore;
    }
    added = added_updates (request, final);
    if (json_object_size (added) > 0 &&
        jobspec_apply_updates (desc, added, &msg) < 0) {
        info ("jobtap: update of %pJ by uid %u rejected: %s", job, submit_uid,
              msg);
        xfree (msg);
        rc = ESLURM_ACCESS_DENIED;
    }
out_restore:
    have_job_write = had;
out:
    json_decref (request);
    json_decref (final);
    json_decref (added);
    return rc;
}

int jobtap_slurm_job_modify (job_desc_msg_t *desc,
                             job_record_t *job,
                             uint32_t submit_uid)
{
    /* Only the shim may lift its own holds (operators may override). */
    if (desc->priority != NO_VAL && desc->priority != 0 &&
        held_by_shim (job) && !validate_operator (submit_uid)) {
        info ("jobtap: refusing to release %pJ for uid %u: %s", job,
              submit_uid, job->state_desc);
        return ESLURM_ACCESS_DENIED;
    }
    if (desc->priority != NO_VAL && IS_JOB_PENDING (job))
        follow_user_hold (desc, job);
    return update_from_modify (desc, job, submit_uid);
}

/* --- site_factor/jobtap -------------------------------------------------- */

void jobtap_slurm_site_factor_set (job_record_t *job)
{
    int64_t priority;
    bool had = have_job_write;

    if (jobtap_host_job_priority (job->job_id, &priority) < 0) {
        wake_agent (true, false);
        return;
    }
    have_job_write = true; /* set_job_prio's callers hold it */
    in_site_factor_set = true;
    if (priority >= 0)
        apply_priority (job, priority);
    in_site_factor_set = false;
    have_job_write = had;
}

void jobtap_slurm_site_factor_update (void)
{
    bool had = have_job_write;
    have_job_write = true; /* the decay thread holds the job write lock */
    jobtap_host_reprioritize_all ();
    have_job_write = had;
}
