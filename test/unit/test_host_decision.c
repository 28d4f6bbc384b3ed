/* host_decision.c: what the runtime told the host of a job, read back
 * (jobtap_host_job_decision) and told again (jobtap_host_job_resync), as
 * the Slurm adapter compares an array's tasks and splits one off. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host.h"
#include "tap.h"
#include "util.h"

static jobtap_host_error_t err;

static int new_job (uint64_t id, json_t *jobspec, int urgency)
{
    uint64_t token = 0;
    int rc = jobtap_host_submit (jobspec, 1000, urgency, 1.0, 0, NULL, &token,
                                 &err);
    json_decref (jobspec);
    if (rc < 0)
        return -1;
    return jobtap_host_job_new (token, id, 1000, urgency, 1.0, NULL, &err);
}

static void is_actions (const char *want, const char *msg)
{
    char *s = actions_str ();
    is (s, want, "%s", msg);
    free (s);
    json_array_clear (test_actions);
}

int main (void)
{
    char text[1024];
    struct jobtap_host_decision a, b;

    test_reset ();
    snprintf (text, sizeof (text),
              "[job-manager]\nplugins = [ { load = \"%s\" } ]\n",
              plugin_path ("policy.so"));
    if (jobtap_host_init (&test_ops, NULL) < 0
        || jobtap_host_load_config (write_config ("decision.toml", text), &err)
               < 0)
        bail_out ("start: %s", err.text);

    ok (new_job (1, jobspec_make ("{}"), 16) == 0, "a job nothing holds");
    ok (new_job (2, jobspec_make ("{s:[{s:s s:s}]}", "dependencies", "scheme",
                                  "test", "value", "abc"),
                 16) == 0,
        "a job held for a dependency");
    ok (new_job (3, jobspec_make ("{}"), 0) == 0, "a job at urgency 0");
    ok (new_job (4, jobspec_make ("{}"), 16) == 0, "another job nothing holds");
    json_array_clear (test_actions);

    ok (jobtap_host_job_decision (1, &a) == 0, "job 1's decision");
    ok (a.state == JOBTAP_STATE_SCHED && !a.hold_reason[0] && !a.urgency_hold
            && a.priority == 16,
        "scheduled, not held, priority 16");
    ok (jobtap_host_job_decision (2, &b) == 0
            && !strcmp (b.hold_reason, "jobtap: test=abc")
            && b.state == JOBTAP_STATE_DEPEND
            && b.priority == JOBTAP_PRIORITY_UNAVAIL,
        "job 2: held with its dependency as the reason, no priority");
    ok (!jobtap_host_decision_equal (&a, &b), "the two differ");
    ok (jobtap_host_job_decision (3, &b) == 0 && b.urgency_hold
            && !jobtap_host_decision_equal (&a, &b),
        "job 3 is held by its user's urgency: it differs too");
    ok (jobtap_host_job_decision (4, &b) == 0
            && jobtap_host_decision_equal (&a, &b),
        "jobs 1 and 4 agree");
    ok (jobtap_host_job_decision (99, &b) < 0 && errno == ENOENT,
        "an unknown job: ENOENT");

    ok (jobtap_host_job_resync (1) == 0, "job 1 told again");
    is_actions ("release 1; priority 1 16",
                "all of it: not held, its priority (the test's ops record "
                "no urgency hold)");
    ok (jobtap_host_job_resync (2) == 0, "job 2 told again");
    is_actions ("hold 2 jobtap: test=abc", "its hold and reason");
    ok (jobtap_host_job_resync (3) == 0, "job 3 told again");
    is_actions ("release 3; priority 3 0", "job 3: priority 0 under its urgency 0");
    ok (jobtap_host_job_decision (1, &a) == 0 && a.priority == 16
            && !a.hold_reason[0],
        "a resync leaves the decision as it was");
    ok (jobtap_host_job_resync (99) < 0 && errno == ENOENT,
        "an unknown job cannot be told");

    jobtap_host_fini ();
    json_decref (test_log);
    json_decref (test_actions);
    done_testing ();
    return 0;
}
