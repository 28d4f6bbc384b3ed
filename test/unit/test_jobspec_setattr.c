/* src/jobspec/jobspec_setattr.c: --setattr options read as flux submit
 * reads them, their encoding in SLURM_JOBTAP_SETATTR, and the merge into a
 * jobspec (what is refused, what is ignored, and the messages). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jobspec_build.h"
#include "jobspec_setattr.h"
#include "tap.h"

static char *text;

/* Compact, sorted text of o (valid until the next call). */
static const char *dump (const json_t *o)
{
    free (text);
    text = o ? json_dumps (o, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY)
             : NULL;
    return text ? text : "(null)";
}

/* The set the options give, or the first error. */
static const char *options (const char **args, jobtap_host_error_t *err)
{
    json_t *a = json_object ();
    const char *s = NULL;
    err->text[0] = '\0';
    for (; *args; args++)
        if (jobspec_setattr_add (a, *args, err) < 0)
            break;
    if (!err->text[0])
        s = dump (a);
    json_decref (a);
    return s ? s : err->text;
}

/* One option alone. */
static const char *one (const char *arg)
{
    static jobtap_host_error_t err;
    const char *args[] = {arg, NULL};
    return options (args, &err);
}

static void test_keys (void)
{
    is (one ("bank-check=ok"), "{\"bank-check\":\"ok\"}",
        "a bare KEY is system.KEY");
    is (one ("system.bank-check=ok"), "{\"bank-check\":\"ok\"}", "system.KEY");
    is (one ("attributes.system.k=1"), "{\"k\":1}", "attributes.system.KEY");
    is (one (".system.k=1"), "{\"k\":1}", ".system.KEY (flux: attributes.)");
    is (one ("a.b.c=1"), "{\"a\":{\"b\":{\"c\":1}}}", "dots nest objects");
    is (one ("system=1"), "{\"system\":1}",
        "a bare \"system\" is system.system, as in flux");
    is (one ("attributes=1"), "{\"attributes\":1}",
        "and a bare \"attributes\" system.attributes");

    like (one ("user.k=1"), "^only system attributes",
          "user.KEY is refused: only system attributes reach Slurm jobs");
    like (one ("attributes.user.k=1"), "^only system attributes",
          "attributes.user.KEY too");
    like (one ("attributes.k=1"), "^only system attributes",
          "and another attributes.KEY");
    is (one ("system.=1"), "an empty key or key part", "system. alone");
    is (one (".system=1"), "an empty key or key part",
        ".system (all of attributes.system) is no key");
    is (one ("=1"), "an empty key or key part", "an empty key");
    is (one ("a..b=1"), "an empty key or key part", "an empty key part");
    is (one ("a.=1"), "an empty key or key part", "a trailing dot");

    is (one ("duration=60"),
        "attributes.system.duration is the Slurm job's own: set it with "
        "--time",
        "duration comes from Slurm: the message names the option");
    is (one ("system.queue=q"),
        "attributes.system.queue is the Slurm job's own: set it with "
        "--partition",
        "so does queue");
    is (one ("bank=b"),
        "attributes.system.bank is the Slurm job's own: set it with "
        "--account",
        "and bank");
    like (one ("job.name=x"), "system.job is the Slurm job's own.*--job-name",
          "a key under job (job.name)");
    like (one ("slurm.qos=x"), "system.slurm is the Slurm job's own",
          "a key under slurm");
    is (one ("jobs=1"), "{\"jobs\":1}", "a key that only starts like one");
}

static void test_values (void)
{
    is (one ("k=5"), "{\"k\":5}", "a number is a number");
    is (one ("k=2.5"), "{\"k\":2.5}", "a real a real");
    is (one ("k=ok"), "{\"k\":\"ok\"}", "not JSON: a string");
    is (one ("k=\"5\""), "{\"k\":\"5\"}", "a JSON string");
    is (one ("k=true"), "{\"k\":true}", "true");
    is (one ("k=null"), "{\"k\":null}", "null");
    is (one ("k={\"a\":[1,2]}"), "{\"k\":{\"a\":[1,2]}}", "an object");
    is (one ("k= 7 "), "{\"k\":7}", "JSON with spaces around it");
    is (one ("k=5abc"), "{\"k\":\"5abc\"}", "JSON followed by more: a string");
    is (one ("k="), "{\"k\":\"\"}", "an empty value: an empty string");
    is (one ("k"), "{\"k\":1}", "no value: 1, as in flux");
    is (one ("k=a=b"), "{\"k\":\"a=b\"}", "the value runs to the end");
    is (one ("k=\xff"), "the value is not valid UTF-8",
        "a value that is not UTF-8 is refused");
    is (one ("\xff=1"), "the key is not valid UTF-8",
        "a key that is not UTF-8 too");
}

static void test_order (void)
{
    jobtap_host_error_t err;
    const char *later[] = {"k=1", "k=2", NULL};
    const char *merged[] = {"a.b=1", "a.c=2", NULL};
    const char *replace[] = {"a.b=1", "a=3", NULL};
    const char *through[] = {"a=3", "a.b=1", NULL};

    is (options (later, &err), "{\"k\":2}",
        "a later option for a key wins");
    is (options (merged, &err), "{\"a\":{\"b\":1,\"c\":2}}",
        "two keys under one object");
    is (options (replace, &err), "{\"a\":3}",
        "a value replaces an object set before");
    is (options (through, &err),
        "system.a is not an object (an earlier --setattr set it)",
        "a key under a value that is not an object is refused");

    json_t *a = json_object ();
    ok (jobspec_setattr_add (a, "x=1", &err) == 0 &&
            jobspec_setattr_add (a, "x.y.z=1", &err) < 0,
        "a refused option ...");
    is (dump (a), "{\"x\":1}", "... leaves the set as it was");
    json_decref (a);
}

static void test_file (void)
{
    char path[] = "/tmp/test_setattr.XXXXXX";
    int fd = mkstemp (path);
    FILE *f = fd >= 0 ? fdopen (fd, "w") : NULL;
    char arg[300], err[256];

    if (!f)
        bail_out ("cannot make a temp file");
    fputs ("{\"limits\": {\"nodes\": 4}}\n", f);
    fclose (f);
    snprintf (arg, sizeof (arg), "^policy=%s", path);
    is (one (arg), "{\"policy\":{\"limits\":{\"nodes\":4}}}",
        "^KEY=FILE: the JSON in FILE");
    f = fopen (path, "w");
    fputs ("not json", f);
    fclose (f);
    snprintf (err, sizeof (err), "^%s: ", path);
    like (one (arg), err, "a FILE that is not JSON is refused, named");
    unlink (path);
    like (one (arg), "No such file", "a FILE that is not there");
    is (one ("^policy"), "^KEY needs =FILE, a file of JSON",
        "^KEY with no =FILE");
}

static void test_encode (void)
{
    jobtap_host_error_t err;
    json_t *a = json_object ();
    char *s;

    jobspec_setattr_add (a, "note=caf\xc3\xa9\nline", &err);
    jobspec_setattr_add (a, "n=5", &err);
    s = jobspec_setattr_encode (a, &err);
    is (s, "{\"note\":\"caf\\u00E9\\nline\",\"n\":5}",
        "compact ASCII JSON, in option order");
    free (s);

    json_t *big = json_object ();
    char *v = malloc (JOBSPEC_SETATTR_MAX + 1);
    memset (v, 'x', JOBSPEC_SETATTR_MAX);
    v[JOBSPEC_SETATTR_MAX] = '\0';
    json_object_set_new (big, "k", json_string (v));
    free (v);
    ok (jobspec_setattr_encode (big, &err) == NULL,
        "a set longer than JOBSPEC_SETATTR_MAX is refused");
    like (err.text, "^the attributes take [0-9]+ bytes, more than 65536$",
          "... saying so");
    json_decref (big);
    json_decref (a);
}

static void test_find (void)
{
    char *env[] = {"SLURM_JOBTAP_SETATTRX=1", "OTHER=1",
                   "SLURM_JOBTAP_SETATTR={\"a\":1}", "SLURM_JOBTAP_SETATTR=2",
                   NULL};
    ok (jobspec_setattr_find (NULL, 3) == NULL, "no environment");
    ok (jobspec_setattr_find (env, 2) == NULL,
        "a longer name or another variable is not it");
    is (jobspec_setattr_find (env, 4), "{\"a\":1}", "the first entry's value");
}

/* A jobspec of a job with every Slurm field set. */
static json_t *full_jobspec (void)
{
    struct jobspec_fields f;
    char *argv[] = {"run.sh", NULL};
    memset (&f, 0, sizeof (f));
    f.nodes = 1;
    f.ntasks = 2;
    f.time_limit = 5;
    f.partition = "p";
    f.account = "a";
    f.wckey = "w";
    f.work_dir = "/";
    f.name = "n";
    f.dependency = "afterok:1";
    f.features = "x&y";
    f.comment = "c";
    f.qos = "q";
    f.reservation = "r";
    f.licenses = "l";
    f.tres_per_job = "gres:gpu:1";
    f.begin_time = 1;
    f.nice = 1;
    f.argv = argv;
    f.argc = 1;
    return jobspec_build (&f);
}

static void test_merge (void)
{
    json_t *spec = full_jobspec ();
    json_t *system =
        json_object_get (json_object_get (spec, "attributes"), "system");
    jobtap_host_error_t msg = {"unset"};
    const char *key;
    json_t *v;
    int all = 1;

    json_object_foreach (system, key, v)
    {
        if (!jobspec_setattr_reserved (key, NULL)) {
            diag ("attributes.system.%s is not reserved", key);
            all = 0;
        }
    }
    ok (all && json_object_size (system) >= 9,
        "every key jobspec_build fills is one --setattr cannot set");

    ok (jobspec_setattr_merge (spec, "{\"bank-check\":\"ok\",\"limit\":5}",
                               &msg) == 2 &&
            msg.text[0] == '\0',
        "a set merges into attributes.system, with no message");
    is (dump (json_object_get (system, "bank-check")), "\"ok\"", "a string");
    is (dump (json_object_get (system, "limit")), "5", "a number");

    ok (jobspec_setattr_merge (
            spec, "{\"duration\":1,\"x\":{\"y\":1},\"a.b\":1,\"\":2}", &msg) ==
            1,
        "keys the Slurm job gives, dotted or empty keys are dropped");
    is (msg.text,
        "SLURM_JOBTAP_SETATTR keys the Slurm job gives or --setattr cannot "
        "make, ignored: \"duration\", \"a.b\", \"\"",
        "... and named in the message");
    is (dump (json_object_get (system, "duration")), "300.0",
        "the Slurm job's duration stays");
    is (dump (json_object_get (system, "x")), "{\"y\":1}",
        "the rest of the set is merged");

    ok (jobspec_setattr_merge (spec, "{\"k\":", &msg) == -1,
        "text that is not JSON is ignored");
    like (msg.text, "^SLURM_JOBTAP_SETATTR is not a JSON object \\(.+\\): ignored$",
          "... with jansson's reason");
    ok (jobspec_setattr_merge (spec, "[1]", &msg) == -1,
        "a JSON array is ignored");
    is (msg.text,
        "SLURM_JOBTAP_SETATTR is not a JSON object (another JSON value): "
        "ignored",
        "... saying so");
    ok (jobspec_setattr_merge (spec, "5", &msg) == -1, "so is a number");

    char *big = malloc (JOBSPEC_SETATTR_MAX + 2);
    memset (big, ' ', JOBSPEC_SETATTR_MAX + 1);
    big[JOBSPEC_SETATTR_MAX + 1] = '\0';
    ok (jobspec_setattr_merge (spec, big, &msg) == -1,
        "a set longer than the limit is ignored");
    is (msg.text, "SLURM_JOBTAP_SETATTR is longer than 65536 bytes: ignored",
        "... saying so");
    free (big);
    json_decref (spec);

    spec = json_object ();
    ok (jobspec_setattr_merge (spec, "{}", &msg) == -1 && msg.text[0],
        "a jobspec with no attributes.system takes nothing");
    json_decref (spec);
}

/* What the SPANK plugin encodes is what the adapter merges. */
static void test_round_trip (void)
{
    const char *args[] = {"system.bank-check=ok", "limit=5", "a.b=[1]",
                          "note=\"x\"", NULL};
    jobtap_host_error_t err, msg;
    json_t *a = json_object ();
    json_t *spec = full_jobspec ();
    char *s;

    for (const char **p = args; *p; p++)
        jobspec_setattr_add (a, *p, &err);
    s = jobspec_setattr_encode (a, &err);
    ok (s && jobspec_setattr_merge (spec, s, &msg) == 4 && !msg.text[0],
        "options -> SLURM_JOBTAP_SETATTR -> jobspec");
    json_t *system =
        json_object_get (json_object_get (spec, "attributes"), "system");
    const char *key;
    json_t *v;
    int same = 1;
    json_object_foreach (a, key, v)
    {
        same &= json_equal (json_object_get (system, key), v);
    }
    ok (same, "every attribute arrives as it was given");
    free (s);
    json_decref (spec);
    json_decref (a);
}

int main (void)
{
    test_keys ();
    test_values ();
    test_order ();
    test_file ();
    test_encode ();
    test_find ();
    test_merge ();
    test_round_trip ();
    free (text);
    done_testing ();
    return 0;
}
