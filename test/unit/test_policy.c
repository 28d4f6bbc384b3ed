/* policy.c and fsd.c: Flux's [policy] and [queues] checked with Flux's
 * messages (each case of flux-core's t2245-policy-config.t, and the
 * config cases of t2221 and t2222), the limits as .limit-duration and
 * .limit-job-size apply them (the job cases of t2221 and t2222), virtual
 * queues (RFC 33), the jobspec defaults, and a bad table's file and line
 * through jobtap_host_load_config. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>

#include "fsd.h"
#include "host.h"
#include "policy.h"
#include "tap.h"
#include "toml.h"

static char dir[] = "/tmp/test-policy-XXXXXX";

/* text written to a file of dir, read as jobtap.conf's TOML. */
static json_t *toml (const char *text)
{
    char path[256];
    FILE *f;
    json_t *lines = NULL, *o;
    jobtap_host_error_t err;

    snprintf (path, sizeof (path), "%s/policy.toml", dir);
    if (!(f = fopen (path, "w")) || fputs (text, f) < 0 || fclose (f) != 0)
        bail_out ("cannot write %s", path);
    if (!(o = toml_file_to_json (path, &lines, NULL, &err)))
        bail_out ("%s", err.text);
    json_decref (lines);
    return o;
}

/* policy_create's error for text ("" if it was accepted). */
static char error_text[sizeof (((jobtap_host_error_t *)0)->text)];
static const char *error_of (const char *text)
{
    jobtap_host_error_t err = {{0}};
    json_t *conf = toml (text);
    struct policy *p = policy_create (conf, NULL, 0, &err);

    snprintf (error_text, sizeof (error_text), "%s", p ? "" : err.text);
    policy_destroy (p);
    json_decref (conf);
    return error_text;
}

static void test_fsd (void)
{
    static const struct {
        const char *s;
        double d;
    } good[] = {{"0", 0.}, {"30", 30.}, {"1.5", 1.5}, {"100ms", .1},
                {"30s", 30.}, {"30m", 1800.}, {"1h", 3600.},
                {"1.5h", 5400.}, {"2d", 172800.}};
    static const char *bad[] = {"", "-1", "1x", "1hh", "xyz123", "inf5",
                                "infs", "nan", "h"};
    double d;

    for (size_t i = 0; i < sizeof (good) / sizeof (good[0]); i++)
        ok (fsd_parse (good[i].s, &d) == 0 && d == good[i].d,
            "fsd: \"%s\" is %g s", good[i].s, good[i].d);
    ok (fsd_parse ("inf", &d) == 0 && isinf (d), "fsd: \"inf\" is infinite");
    ok (fsd_parse ("infinity", &d) == 0 && isinf (d),
        "fsd: \"infinity\" too");
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        errno = 0;
        ok (fsd_parse (bad[i], &d) < 0 && errno == EINVAL,
            "fsd: \"%s\" is refused (EINVAL)", bad[i]);
    }

    static const struct {
        double d;
        const char *s;
    } shown[] = {{7200., "2h"}, {5400., "1.5h"}, {60., "1m"}, {30., "30s"},
                 {0., "0s"}, {.05, "50ms"}, {57600., "16h"},
                 {259200., "3d"}, {1234567., "14d"}};
    char buf[64];
    for (size_t i = 0; i < sizeof (shown) / sizeof (shown[0]); i++) {
        fsd_format (buf, sizeof (buf), shown[i].d, 2);
        is (buf, shown[i].s, "fsd: %g s shows as %s", shown[i].d, shown[i].s);
    }
    fsd_format (buf, sizeof (buf), INFINITY, 2);
    is (buf, "infinity", "fsd: infinity shows as infinity");
    ok (fsd_format (buf, sizeof (buf), -1., 2) < 0, "fsd: a negative "
        "duration cannot be shown");
}

/* t2245-policy-config.t, each case; then the config cases of t2221 and
 * t2222 and of RFC 33's virtual queues. */
static void test_config_errors (void)
{
    static const struct {
        const char *toml, *error;
    } cases[] = {
        {"policy.foo = 1",
         "error parsing [policy] config table: 1 object item(s) left "
         "unpacked: foo"},
        {"policy.jobspec.foo = 1",
         "error parsing [policy.jobspec] config table: 1 object item(s) "
         "left unpacked: foo"},
        {"policy.jobspec.defaults.foo = 1",
         "error parsing [policy.jobspec] config table: 1 object item(s) "
         "left unpacked: foo"},
        {"policy.jobspec.defaults.system.foo = 1",
         "error parsing [policy.jobspec] config table: 1 object item(s) "
         "left unpacked: foo"},
        {"policy.jobspec.defaults.system.duration = 1",
         "error parsing [policy.jobspec] config table: "
         "'defaults.system.duration' is not a valid FSD"},
        {"policy.jobspec.defaults.system.queue = 1",
         "error parsing [policy.jobspec] config table: "
         "'defaults.system.queue' is not a string"},
        {"policy.limits.foo = 1",
         "error parsing [policy.limits] config table: 1 object item(s) "
         "left unpacked: foo"},
        {"policy.limits.job-size.foo = 1",
         "error parsing [policy.limits.job-size] config table: 1 object "
         "item(s) left unpacked: foo"},
        {"policy.limits.job-size.max.foo = 1",
         "error parsing [policy.limits.max] config table: 1 object item(s) "
         "left unpacked: foo"},
        {"policy.limits.job-size.min.foo = 1",
         "error parsing [policy.limits.min] config table: 1 object item(s) "
         "left unpacked: foo"},
        {"policy.limits.job-size.min.nnodes = -2",
         "error parsing [policy.limits.min] config table: values must be "
         ">= -1"},
        {"policy.limits.duration = 1.0",
         "error parsing [policy.limits] config table: 'duration' is not a "
         "valid FSD"},
        {"policy.access.foo = 1.0",
         "error parsing [policy.access] config table: 1 object item(s) left "
         "unpacked: foo"},
        {"policy.access.allow-user = 1.0",
         "error parsing [policy.access] config table: 'allow-user' must be "
         "a string array"},
        {"policy.access.allow-group = 1.0",
         "error parsing [policy.access] config table: 'allow-group' must "
         "be a string array"},
        {"policy.access.allow-user = [ 1 ]",
         "error parsing [policy.access] config table: 'allow-user' must be "
         "a string array"},
        {"policy.access.allow-group = [ 1 ]",
         "error parsing [policy.access] config table: 'allow-group' must "
         "be a string array"},
        {"queues = 1", "error parsing [queues] config table: not a table"},
        {"queues.x.policy.foo = 1",
         "error parsing [queues.x.policy] config table: 1 object item(s) "
         "left unpacked: foo"},
        {"queues.x.policy.limits.duration = 1",
         "error parsing [queues.x.policy.limits] config table: 'duration' "
         "is not a valid FSD"},
        {"queues.x.policy.jobspec.defaults.system.queue = \"x\"",
         "error parsing [queues.x] config table: 'policy' must not define a "
         "default queue!"},
        {"[queues.foo]\n[policy]\njobspec.defaults.system.queue = \"bar\"",
         "the [policy] config table defines a default queue bar that is not "
         "in [queues] table"},
        {"queues.x.requires = 1",
         "error parsing [queues.x] config table: 'requires' must be an "
         "array of property strings (RFC 20)"},
        {"queues.x.requires = [ 1 ]",
         "error parsing [queues.x] config table: 'requires' must be an "
         "array of property strings (RFC 20)"},
        {"queues.x.requires = [ \"foo|bar\" ]",
         "error parsing [queues.x] config table: 'requires' must be an "
         "array of property strings (RFC 20)"},
        /* t2221 */
        {"[policy.limits]\nduration = \"xyz123\"",
         "error parsing [policy.limits] config table: 'duration' is not a "
         "valid FSD"},
        {"[policy.limits]\nduration = [ 0 ]",
         "error parsing [policy.limits] config table: 'duration' is not a "
         "valid FSD"},
        {"[queues.debug.policy.limits]\nduration = \"xyz123\"",
         "error parsing [queues.debug.policy.limits] config table: "
         "'duration' is not a valid FSD"},
        /* t2222 */
        {"[policy.limits]\njob-size.max.nnodes = -42",
         "error parsing [policy.limits.max] config table: values must be "
         ">= -1"},
        {"[policy.limits]\njob-size = \"wrong\"",
         "error parsing [policy.limits.job-size] config table: Expected "
         "object, got string"},
        {"[queues.debug.policy.limits]\njob-size.min.nnodes = \"xyz\"",
         "error parsing [queues.debug.policy.limits.min] config table: "
         "Expected integer, got string"},
        /* RFC 33 virtual queues */
        {"[queues.v]\nparent = 1",
         "error parsing [queues.v] config table: 'parent' must be a string"},
        {"[queues.v]\nparent = \"v\"",
         "error parsing [queues.v] config table: parent queue is itself"},
        {"[queues.v]\nparent = \"p\"",
         "error parsing [queues.v] config table: parent queue 'p' is not "
         "configured"},
        {"[queues.p]\nparent = \"q\"\n[queues.q]\n[queues.v]\nparent = \"p\"",
         "error parsing [queues.v] config table: parent queue 'p' is itself "
         "a virtual queue"},
        {"[queues.p]\n[queues.v]\nparent = \"p\"\nrequires = [ \"a\" ]",
         "error parsing [queues.v] config table: a virtual queue must not "
         "set 'requires'"},
        {"[queues.p]\n[queues.v]\nparent = \"p\"\npolicy.scheduler.x = 1",
         "error parsing [queues.v] config table: a virtual queue must not "
         "set 'policy.scheduler'"},
        {"[queues.v]\nfoo = 1",
         "error parsing [queues.v] config table: 1 object item(s) left "
         "unpacked: foo"},
    };
    for (size_t i = 0; i < sizeof (cases) / sizeof (cases[0]); i++)
        is (error_of (cases[i].toml), cases[i].error, "refused: %s",
            cases[i].toml);

    static const char *accepted[] = {
        "[policy.access]\nallow-user = [ \"alice\", \"bob\" ]\n"
        "allow-group = [ \"smurfs\" ]",
        "[queues.x]\nrequires = [ \"batch\" ]\n[queues.z]\n"
        "requires = [ \"debug\", \"foo\" ]",
        /* flux-config-policy(5)'s example */
        "[policy.jobspec.defaults.system]\nduration = \"1h\"\n"
        "queue = \"batch\"\n[policy.limits]\nduration = \"4h\"\n"
        "job-size.max.nnodes = 8\njob-size.max.ngpus = 4\n"
        "[queues.debug.policy.limits]\nduration = \"30m\"\n"
        "job-size.max.ngpus = -1\n[queues.batch]",
        "[policy.limits]\nduration = \"1m\"",
        "[queues.p]\n[queues.v]\nparent = \"p\"",
        "",
    };
    for (size_t i = 0; i < sizeof (accepted) / sizeof (accepted[0]); i++)
        is (error_of (accepted[i]), "", "accepted: %s", accepted[i]);
}

static struct policy *policy_of (const char *text)
{
    jobtap_host_error_t err;
    json_t *conf = toml (text);
    struct policy *p = policy_create (conf, NULL, 0, &err);
    json_decref (conf);
    if (!p)
        bail_out ("%s: %s", text, err.text);
    return p;
}

/* The rejection of a job of queue q (NULL: none) asking for duration d
 * ("" if accepted). */
static char reject_text[sizeof (((jobtap_host_error_t *)0)->text)];
static const char *duration_check (struct policy *p, const char *q, double d)
{
    struct policy_request r = {.duration = d, .queue = q};
    jobtap_host_error_t err;
    snprintf (reject_text, sizeof (reject_text), "%s",
              policy_check_duration (p, &r, &err) < 0 ? err.text : "");
    return reject_text;
}

static const char *size_check (struct policy *p,
                               const char *q,
                               int nnodes,
                               int ncores,
                               int ngpus)
{
    struct policy_request r = {.nnodes = nnodes, .ncores = ncores,
                               .ngpus = ngpus, .queue = q};
    jobtap_host_error_t err;
    snprintf (reject_text, sizeof (reject_text), "%s",
              policy_check_size (p, &r, &err) < 0 ? err.text : "");
    return reject_text;
}

/* t2221-job-manager-limit-duration.t, job by job. */
static void test_duration (void)
{
    struct policy *p = policy_of ("[policy.limits]\nduration = \"1m\"");
    ok (policy_limits_duration (p) && !policy_limits_size (p),
        "a duration limit: only .limit-duration takes jobs");
    ok (!policy_has_defaults (p), "and no defaults are set");
    is (duration_check (p, NULL, 3600.),
        "requested duration (1h) exceeds policy limit of 1m",
        "a job over policy.limits.duration is rejected");
    is (duration_check (p, NULL, 30.), "", "one under it is accepted");
    is (duration_check (p, NULL, 60.), "", "one at it is accepted");
    policy_destroy (p);

    p = policy_of ("[policy.limits]\nduration = \"1h\"\n[queues.debug]\n"
                   "[queues.batch.policy.limits]\nduration = \"8h\"\n"
                   "[queues.short.policy.limits]\nduration = \"1m\"");
    is (duration_check (p, "debug", 7200.),
        "requested duration (2h) exceeds policy limit of 1h for queue debug",
        "over the general limit in a queue with none: Flux's details");
    is (duration_check (p, "debug", 0.),
        "requested duration (unlimited) exceeds policy limit of 1h for "
        "queue debug",
        "no duration (unlimited) is rejected too");
    is (duration_check (p, "batch", 7200.), "",
        "accepted by a queue with a higher limit");
    is (duration_check (p, "batch", 57600.),
        "requested duration (16h) exceeds policy limit of 8h for queue batch",
        "rejected over that queue's limit");
    like (duration_check (p, "batch", 0.), "^requested duration \\(unlimited\\)",
          "no limit is rejected by that queue too");
    is (duration_check (p, "debug", 3600.), "", "under the general limit");
    is (duration_check (p, "short", 3600.),
        "requested duration (1h) exceeds policy limit of 1m for queue short",
        "rejected by a queue with a lower limit");
    is (duration_check (p, "other", 3600.), "",
        "a queue [queues] does not list has the general limit");
    policy_destroy (p);

    p = policy_of ("[policy.limits]\nduration = \"1h\"\n"
                   "[queues.batch.policy.limits]\nduration = \"0\"\n"
                   "[queues.debug]");
    ok (duration_check (p, "debug", 7200.)[0] != '\0',
        "over the general limit is rejected");
    is (duration_check (p, "batch", 7200.), "",
        "and accepted by the unlimited queue");
    is (duration_check (p, "batch", 0.), "",
        "which also takes a job with no duration");
    policy_destroy (p);

    p = policy_of ("[queues.b.policy.jobspec.defaults.system]\n"
                   "duration = \"1m\"");
    ok (policy_has_defaults (p), "a queue's default duration alone is a default");
    policy_destroy (p);
    p = policy_of ("[queues.batch.policy.limits]\nduration = \"0\"");
    ok (!policy_limits_duration (p),
        "only unlimited queues and no general limit: nothing to check");
    policy_destroy (p);
    p = policy_of ("[policy.limits]\nduration = \"inf\"");
    is (duration_check (p, NULL, 0.),
        "requested duration (unlimited) exceeds policy limit of infinity",
        "an infinite limit still wants a duration, as in Flux");
    policy_destroy (p);
}

/* t2222-job-manager-limit-job-size.t, job by job. */
static void test_size (void)
{
    struct policy *p = policy_of ("[policy.limits]\njob-size.max.nnodes = 2\n"
                                  "job-size.min.nnodes = 2");
    ok (policy_limits_size (p) && !policy_limits_duration (p),
        "a size limit: only .limit-job-size takes jobs");
    is (size_check (p, NULL, 3, 3, 0),
        "requested nnodes (3) exceeds policy limit of 2",
        "over job-size.max.nnodes is rejected");
    is (size_check (p, NULL, 1, 1, 0),
        "requested nnodes (1) is under policy limit of 2",
        "under job-size.min.nnodes is rejected");
    is (size_check (p, NULL, 2, 2, 0), "", "between both is accepted");
    policy_destroy (p);

    p = policy_of ("[policy.limits]\njob-size.max.ncores = 2\n"
                   "job-size.min.ncores = 2");
    is (size_check (p, NULL, 0, 3, 0),
        "requested ncores (3) exceeds policy limit of 2", "max.ncores");
    is (size_check (p, NULL, 0, 1, 0),
        "requested ncores (1) is under policy limit of 2", "min.ncores");
    is (size_check (p, NULL, 0, 2, 0), "", "between both is accepted");
    policy_destroy (p);

    p = policy_of ("[policy.limits]\njob-size.max.ngpus = 2\n"
                   "job-size.min.ngpus = 2");
    is (size_check (p, NULL, 0, 1, 3),
        "requested ngpus (3) exceeds policy limit of 2", "max.ngpus");
    is (size_check (p, NULL, 0, 1, 1),
        "requested ngpus (1) is under policy limit of 2", "min.ngpus");
    is (size_check (p, NULL, 0, 1, 2), "", "between both is accepted");
    policy_destroy (p);

    p = policy_of ("[policy.limits]\njob-size.max.ngpus = 0\n[queues.debug]\n"
                   "[queues.batch.policy.limits]\njob-size.max.ngpus = -1");
    is (size_check (p, "debug", 0, 1, 0), "", "under the general gpu limit");
    is (size_check (p, "debug", 0, 1, 1),
        "requested ngpus (1) exceeds policy limit of 0 for queue debug",
        "over it, with the queue's name");
    is (size_check (p, "batch", 0, 1, 1), "",
        "accepted by a queue whose limit is unlimited");
    policy_destroy (p);
}

static void test_virtual_queues (void)
{
    struct policy *p = policy_of (
        "[policy.limits]\nduration = \"4h\"\njob-size.max.nnodes = 8\n"
        "[policy.jobspec.defaults.system]\nduration = \"1h\"\n"
        "queue = \"batch\"\n"
        "[queues.batch.policy.limits]\nduration = \"2h\"\n"
        "job-size.max.nnodes = 4\n"
        "[queues.batch.policy.jobspec.defaults.system]\nduration = \"30m\"\n"
        "[queues.small]\nparent = \"batch\"\n"
        "[queues.small.policy.limits]\njob-size.max.nnodes = 1\n"
        "[queues.long]\nparent = \"batch\"\n"
        "[queues.long.policy.limits]\nduration = \"0\"\n"
        "[queues.long.policy.jobspec.defaults.system]\nduration = \"8h\"");
    is (duration_check (p, "small", 10800.),
        "requested duration (3h) exceeds policy limit of 2h for queue small",
        "a virtual queue has its parent's duration limit");
    is (size_check (p, "small", 2, 2, 0),
        "requested nnodes (2) exceeds policy limit of 1 for queue small",
        "and its own size limit over the parent's");
    is (duration_check (p, "long", 36000.), "",
        "its own \"0\" lifts the parent's limit");
    is (size_check (p, "long", 5, 5, 0),
        "requested nnodes (5) exceeds policy limit of 4 for queue long",
        "and it keeps the parent's size limit");
    ok (policy_default_duration (p, "small") == 1800.,
        "a virtual queue's default duration is its parent's");
    ok (policy_default_duration (p, "long") == 28800.,
        "or its own");
    ok (policy_default_duration (p, "batch") == 1800.,
        "a queue's default duration is its own");
    ok (policy_default_duration (p, "other") == 3600.
            && policy_default_duration (p, NULL) == 3600.,
        "a queue [queues] does not list, or none, has the general default");
    is (policy_default_queue (p), "batch", "the default queue");
    ok (policy_has_defaults (p), "defaults are set");
    ok (policy_queue_count (p) == 3, "three queues");
    policy_destroy (p);

    p = policy_of ("[queues.debug]");
    ok (policy_default_duration (p, "debug") == POLICY_DURATION_UNSET
            && !policy_default_queue (p) && !policy_has_defaults (p),
        "no defaults configured: none");
    ok (!policy_limits_duration (p) && !policy_limits_size (p),
        "and no limit to check");
    policy_destroy (p);
}

static void test_unapplied (void)
{
    struct policy *p = policy_of (
        "[policy.access]\nallow-user = [ \"alice\" ]\n"
        "[queues.x]\nrequires = [ \"batch\" ]\n"
        "[queues.x.policy.scheduler]\nreservation-depth = 2");
    is (policy_unapplied (p, 0), "policy.access", "policy.access is named");
    is (policy_unapplied (p, 1), "queues.x.policy.scheduler",
        "a queue's scheduler settings");
    is (policy_unapplied (p, 2), "queues.x.requires", "its requires");
    ok (policy_unapplied (p, 3) == NULL, "and nothing else");
    policy_destroy (p);
}

/* A bad table refuses jobtap.conf with the file, the table's line and
 * Flux's message. */
static void test_load_errors (void)
{
    jobtap_host_error_t err;
    char path[256], want[512];
    FILE *f;

    snprintf (path, sizeof (path), "%s/jobtap.conf", dir);
    if (!(f = fopen (path, "w")))
        bail_out ("cannot write %s", path);
    fputs ("[job-manager]\nplugins = []\n\n[policy.limits]\n"
           "duration = \"4h\"\n\n[queues.debug.policy.limits]\n"
           "duration = \"30 minutes\"\n",
           f);
    fclose (f);
    ok (jobtap_host_init (NULL, NULL) == 0, "init");
    ok (jobtap_host_load_config (path, &err) < 0, "a bad queue limit refuses "
        "the config");
    snprintf (want, sizeof (want),
              "%s:7: error parsing [queues.debug.policy.limits] config table: "
              "'duration' is not a valid FSD",
              path);
    is (err.text, want, "with the file, the table's line and Flux's words");

    if (!(f = fopen (path, "w")))
        bail_out ("cannot write %s", path);
    fputs ("[policy]\nlimits.duration = \"1h\"\nlimits.job-size.min.nnodes "
           "= -3\n",
           f);
    fclose (f);
    ok (jobtap_host_load_config (path, &err) < 0, "a bad size refuses it");
    snprintf (want, sizeof (want),
              "%s:3: error parsing [policy.limits.min] config table: values "
              "must be >= -1",
              path);
    is (err.text, want, "dotted keys: the line of the key that makes the "
        "table");

    if (!(f = fopen (path, "w")))
        bail_out ("cannot write %s", path);
    fputs ("[policy.jobspec.defaults.system]\nqueue = \"batch\"\n"
           "duration = \"90s\"\n[queues.batch]\n"
           "[queues.debug.policy.jobspec.defaults.system]\n"
           "duration = \"5m\"\n[resource]\nnoverify = true\n",
           f);
    fclose (f);
    ok (jobtap_host_load_config (path, &err) == 0, "a good one loads");
    ok (jobtap_host_policy_has_defaults (), "the host sees it sets defaults");
    char *q = jobtap_host_policy_default_queue ();
    is (q, "batch", "the host reads the default queue");
    free (q);
    ok (jobtap_host_policy_default_duration ("debug") == 300.
            && jobtap_host_policy_default_duration ("batch") == 90.,
        "and the default durations per queue");
    json_t *queues = jobtap_host_policy_queues ();
    char *s = json_dumps (queues, JSON_COMPACT);
    ok (s && (!strcmp (s, "[\"batch\",\"debug\"]")
              || !strcmp (s, "[\"debug\",\"batch\"]")),
        "and the queues: %s", s ? s : "(null)");
    free (s);
    json_decref (queues);
    jobtap_host_fini ();
    unlink (path);
}

int main (void)
{
    char path[256];

    if (!mkdtemp (dir))
        bail_out ("mkdtemp: %s", strerror (errno));
    test_fsd ();
    test_config_errors ();
    test_duration ();
    test_size ();
    test_virtual_queues ();
    test_unapplied ();
    test_load_errors ();
    snprintf (path, sizeof (path), "%s/policy.toml", dir);
    unlink (path);
    rmdir (dir);
    done_testing ();
}
