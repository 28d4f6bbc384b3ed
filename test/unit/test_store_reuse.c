/* store.c: a job the scheduler lost across a restart, whose id a new job
 * takes before the restore has dropped the lost job's kept history (on
 * Slurm 24.11 a reconfigure restarts slurmctld in place, and a submission
 * can be bound first). The new job's history is its own, and survives
 * the drop of the lost job's and the next restart. And when the restart
 * was cut short before the lost job's history was dropped, a later job
 * of that id (submitted over 2 s after it) does not take it; and the
 * next process forgets a lost job's history before it takes a job
 * (drop_missing), so a job in the same second cannot take it either. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <flux/core.h>
#include <flux/jobtap.h>

#include "host.h"
#include "core_util.h"
#include "tap.h"

static char base[64];
static void start (void)
{
    jobtap_host_error_t err;
    core_host_setup (&core_kept_ops, NULL, NULL);
    if (jobtap_host_store_open (base, &err) < 0)
        bail_out ("store_open: %s", err.text);
}

static void submit_bind (uint64_t id, uint32_t userid, double t)
{
    jobtap_host_error_t err;
    uint64_t token = 0;
    json_t *spec = json_pack ("{s:i s:{s:{}}}", "version", 1, "attributes",
                              "system");
    if (jobtap_host_submit (spec, userid, 16, t, JOBTAP_SUBMIT_TAKE_JOBSPEC,
                            NULL, &token, &err) < 0
        || jobtap_host_job_new (token, id, userid, 16, t, NULL, &err) < 0)
        bail_out ("submit/job_new %ju: %s", (uintmax_t)id, err.text);
}

/* The userid of job id's first eventlog entry and its entries' names. */
static void history (uint64_t id, json_int_t *userid, char *names, size_t len)
{
    json_t *info = jobtap_host_job_info (id);
    json_t *log = json_object_get (info, "eventlog"), *e;
    const char *name;
    size_t i;

    *userid = -1;
    names[0] = '\0';
    json_unpack (json_array_get (log, 0), "{s:{s:I}}", "context", "userid",
                 userid);
    json_array_foreach (log, i, e)
    {
        if (json_unpack (e, "{s:s}", "name", &name) == 0)
            snprintf (names + strlen (names), len - strlen (names), "%s%s",
                      i ? "," : "", name);
    }
    json_decref (info);
}

/* Restore the jobs of one scheduler listing (which the call does not
 * take), then free it. */
static int restore_once (json_t *jobs)
{
    jobtap_host_error_t err;
    int n = jobtap_host_jobs_restore (jobs, &err);
    json_decref (jobs);
    return n;
}

static bool slurm_has_7_8 (uint64_t id, void *arg)
{
    (void)arg;
    return id == 7 || id == 8;
}

int main (void)
{
    const char *tmp = getenv ("TMPDIR");
    json_int_t uid;
    char names[256];

    snprintf (base, sizeof (base), "%s/test_store_reuse.XXXXXX",
              tmp && *tmp && strlen (tmp) < 32 ? tmp : "/tmp");
    if (!mkdtemp (base))
        bail_out ("mkdtemp failed");

    /* before the kill: job 7 of user 1000 */
    start ();
    submit_bind (7, 1000, 100.0);
    ok (jobtap_host_store_flush (true) > 0, "job 7's history is written");
    core_host_teardown ();

    /* restarted: Slurm lost job 7 and gave its id to a new job of user
     * 2000, bound before the restore */
    start ();
    submit_bind (7, 2000, 200.0);
    isint (restore_once (json_array ()), 0,
           "the restore has no job 7 (the scheduler lost it)");
    isint (jobtap_host_store_drop_kept (), 0,
           "drop_kept has nothing left to forget: the new job 7 began "
           "its own history");
    ok (jobtap_host_store_flush (true) > 0, "the new job's history is written");
    core_host_teardown ();

    /* restarted again: the new job 7 comes back with its own history */
    start ();
    core_log_reset ();
    json_t *entry = json_pack ("{s:I s:I s:i s:f s:{s:i s:{s:{}}} s:i}", "id",
                               (json_int_t)7, "userid", (json_int_t)2000,
                               "urgency", 16, "t_submit", 200.0, "jobspec",
                               "version", 1, "attributes", "system", "state",
                               JOBTAP_STATE_SCHED);
    isint (restore_once (json_pack ("[o]", entry)), 1,
           "the new job 7 is restored");
    history (7, &uid, names, sizeof (names));
    isint (uid, 2000, "its eventlog begins with its own submit (user 2000)");
    is (names, "submit,validate,depend,priority,flux-restart,priority",
        "its history was kept (rebuilt from it: flux-restart)");
    ok (!strstr (core_log_text (), "not this job's"),
        "its kept history was not taken for another job's");
    core_host_teardown ();

    /* Job 8, kept; Slurm lost it and a later job took id 8, and the
     * process restarted before it could drop 8's history (no restore):
     * the next restore meets the old history with the new job. */
    start ();
    double t8 = 0;
    submit_bind (8, 2000, 300.0);
    {
        json_t *info = jobtap_host_job_info (8);
        json_unpack (json_array_get (json_object_get (info, "eventlog"), 0),
                     "{s:F}", "timestamp", &t8);
        json_decref (info);
    }
    ok (jobtap_host_store_flush (true) > 0, "job 8's history is written");
    core_host_teardown ();
    start ();
    core_log_reset ();
    entry = json_pack ("{s:I s:I s:i s:f s:{s:i s:{s:{}}} s:i}", "id",
                       (json_int_t)8, "userid", (json_int_t)2000, "urgency",
                       16, "t_submit", (double)(long)t8 + 10.0, "jobspec",
                       "version", 1, "attributes", "system", "state",
                       JOBTAP_STATE_SCHED);
    isint (restore_once (json_pack ("[o]", entry)), 1,
           "a job 8 submitted 10 s after the kept one is restored");
    history (8, &uid, names, sizeof (names));
    is (names, "submit,validate,depend,priority",
        "with a history of its own (not the lost job's)");
    ok (strstr (core_log_text (),
                "jobtap: job 8: the kept history is not this job's "
                "(submitted at ") != NULL,
        "logged: the kept history is not this job's");
    core_host_teardown ();

    /* Job 9 kept; Slurm lost it. The next process forgets it before it
     * takes a job (drop_missing), then takes job 9 anew and ends before
     * binding it; the one after restores job 9 from the record. */
    start ();
    submit_bind (9, 2000, 400.0);
    ok (jobtap_host_store_flush (true) > 0, "job 9's history is written");
    core_host_teardown ();
    start ();
    isint (jobtap_host_store_drop_missing (slurm_has_7_8, NULL), 1,
           "drop_missing forgets job 9, which the scheduler lost (not 7, 8)");
    ok (jobtap_host_store_flush (true) > 0, "its forget line is written");
    core_host_teardown ();
    start ();
    core_log_reset ();
    entry = json_pack ("{s:I s:I s:i s:f s:{s:i s:{s:{}}} s:i}", "id",
                       (json_int_t)9, "userid", (json_int_t)2000, "urgency",
                       16, "t_submit", 400.0, "jobspec", "version", 1,
                       "attributes", "system", "state", JOBTAP_STATE_SCHED);
    isint (restore_once (json_pack ("[o]", entry)), 1,
           "a new job 9, submitted in the same second, is restored");
    history (9, &uid, names, sizeof (names));
    ok (!strstr (names, "flux-restart"),
        "from its record, not the lost job's history (%s)", names);
    isint (jobtap_host_store_drop_kept (), 2,
           "jobs 7 and 8 kept theirs for their restore (dropped here)");
    core_host_teardown ();

    core_rm_tree (base);
    done_testing ();
}
