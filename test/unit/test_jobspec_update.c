/* src/jobspec/jobspec_update.c: the keys with a Slurm field and the check
 * of updates against them (the messages users see). */
#include <stdlib.h>
#include <string.h>

#include "jobspec_update.h"
#include "tap.h"

static void test_keys (void)
{
    const struct jobspec_update_key *k;

    ok (jobspec_update_nkeys == 35, "35 keys have a Slurm field");
    k = jobspec_update_key_find ("attributes.system.duration");
    ok (k && k->kind == JOBSPEC_UPDATE_DURATION &&
            k->field == JOBSPEC_FIELD_TIME_LIMIT,
        "duration is the time limit");
    k = jobspec_update_key_find ("attributes.system.bank");
    ok (k && k->kind == JOBSPEC_UPDATE_LOWER, "bank is lowercased by Slurm");
    ok (!jobspec_update_key_find ("attributes.system"),
        "a key's parent is not a key");
    k = jobspec_update_key_find ("resources");
    ok (k && k->kind == JOBSPEC_UPDATE_SHAPE, "resources are a shape");
    ok (!jobspec_update_key_find ("resources.0.count"),
        "... updated whole, not by index");
    k = jobspec_update_key_find (
        "attributes.system.shell.options.output.stdout.path");
    ok (k && k->field == JOBSPEC_FIELD_STD_OUT,
        "Flux's stdout path is Slurm's std_out");
    bool once = true;
    for (size_t i = 0; i < jobspec_update_nkeys; i++)
        once &= jobspec_update_key_find (jobspec_update_keys[i].key) ==
                &jobspec_update_keys[i];
    ok (once, "each key is in the table once");
}

static void
check (const char *json, const char *want_flat, const char *want_msg)
{
    json_t *u = json_loads (json, 0, NULL);
    jobtap_host_error_t err = {"unset"};
    json_t *flat = jobspec_updates_check (u, &err);
    char *s = flat ? json_dumps (flat, JSON_COMPACT | JSON_SORT_KEYS) : NULL;

    if (want_flat) {
        is (s, want_flat, "accepted: %s", json);
        is (err.text, "unset", "... with no message");
    } else {
        ok (flat == NULL, "refused: %s", json);
        is (err.text, want_msg, "... %s", want_msg);
    }
    free (s);
    json_decref (flat);
    json_decref (u);
}

static void test_check (void)
{
    jobtap_host_error_t err;
    json_t *u = json_pack ("{s:s s:i}", "attributes.system.queue", "q",
                           "attributes.system.duration", 60);
    json_t *flat = jobspec_updates_check (u, &err);
    ok (flat == u, "updates with nothing to expand are read as they are");
    json_decref (flat);
    json_object_set_new (u, "attributes.system.slurm", json_pack ("{s:s}",
                                                                  "qos", "x"));
    flat = jobspec_updates_check (u, &err);
    ok (flat != u && json_object_get (flat, "attributes.system.slurm.qos")
            && json_object_size (flat) == 3,
        "...those with, expanded into a new object");
    json_decref (flat);
    json_decref (u);

    check ("{}", "{}", NULL);
    check ("{\"attributes.system.duration\": 60}",
           "{\"attributes.system.duration\":60}", NULL);
    check ("{\"attributes.system.job\": {\"name\": \"n\"}}",
           "{\"attributes.system.job.name\":\"n\"}", NULL);
    check ("{\"attributes\": {\"system\": {\"slurm\": {\"qos\": \"q\"}, "
           "\"constraints\": {\"properties\": [\"a\"]}}}}",
           "{\"attributes.system.constraints\":{\"properties\":[\"a\"]},"
           "\"attributes.system.slurm.qos\":\"q\"}",
           NULL);
    check ("{\"attributes.system.queue\": \"q\", \"attributes.system.x\": 1}",
           NULL,
           "jobtap: jobspec update of attributes.system.x has no Slurm "
           "equivalent");
    check ("{\"tasks\": {}}", NULL,
           "jobtap: jobspec update of tasks: invalid value {}");
    check ("{\"attributes.system.duration\": \"1h\"}", NULL,
           "jobtap: jobspec update of attributes.system.duration: invalid "
           "value \"1h\"");
    check ("{\"attributes.system.cwd\": null}", NULL,
           "jobtap: jobspec update of attributes.system.cwd: invalid value "
           "null");
    check ("{\"attributes.system.constraints\": {\"properties\": [\"a\"], "
           "\"x\": 1}}",
           NULL,
           "jobtap: jobspec update of attributes.system.constraints: invalid "
           "value {\"properties\":[\"a\"],\"x\":1}");
}

/* The keys of the wider map (docs/jobspec.md): values Slurm can take. */
static void test_check_wider (void)
{
    check ("{\"attributes.system.slurm.mem_per_node\": 100}",
           "{\"attributes.system.slurm.mem_per_node\":100}", NULL);
    check ("{\"attributes.system.slurm.mem_per_cpu\": 0}",
           "{\"attributes.system.slurm.mem_per_cpu\":0}", NULL);
    check ("{\"attributes.system.slurm.mem_per_node\": 1.5}", NULL,
           "jobtap: jobspec update of attributes.system.slurm.mem_per_node: "
           "invalid value 1.5");
    check ("{\"attributes.system.slurm.mem_per_node\": -1}", NULL,
           "jobtap: jobspec update of attributes.system.slurm.mem_per_node: "
           "invalid value -1");
    check ("{\"attributes.system.slurm.mem_per_cpu\": 10, "
           "\"attributes.system.slurm.mem_per_node\": null}",
           "{\"attributes.system.slurm.mem_per_cpu\":10,"
           "\"attributes.system.slurm.mem_per_node\":null}",
           NULL);
    check ("{\"attributes.system.slurm.mem_per_node\": null}", NULL,
           "jobtap: jobspec update of attributes.system.slurm.mem_per_node: "
           "null only beside the other memory key");
    check ("{\"attributes.system.slurm.mem_per_node\": 1, "
           "\"attributes.system.slurm.mem_per_cpu\": 2}",
           NULL,
           "jobtap: jobspec update of attributes.system.slurm.mem_per_node: "
           "memory per node and per cpu together");
    check ("{\"attributes.system.slurm.max_nodes\": 0}", NULL,
           "jobtap: jobspec update of attributes.system.slurm.max_nodes: "
           "invalid value 0");
    check ("{\"attributes.system.slurm.time_min\": 90}",
           "{\"attributes.system.slurm.time_min\":90}", NULL);
    check ("{\"attributes.system.slurm.begin_time\": -1}", NULL,
           "jobtap: jobspec update of attributes.system.slurm.begin_time: "
           "invalid value -1");
    check ("{\"attributes.system.slurm.nice\": -2147483645}",
           "{\"attributes.system.slurm.nice\":-2147483645}", NULL);
    check ("{\"attributes.system.slurm.nice\": 2147483646}", NULL,
           "jobtap: jobspec update of attributes.system.slurm.nice: invalid "
           "value 2147483646");
    check ("{\"attributes.system.slurm.mail_type\": \"end,Begin\"}",
           "{\"attributes.system.slurm.mail_type\":\"end,Begin\"}", NULL);
    check ("{\"attributes.system.slurm.mail_type\": \"END,SOON\"}", NULL,
           "jobtap: jobspec update of attributes.system.slurm.mail_type: "
           "invalid value \"END,SOON\"");
    check ("{\"attributes.system.slurm.exclusive\": \"user\"}",
           "{\"attributes.system.slurm.exclusive\":\"user\"}", NULL);
    check ("{\"attributes.system.slurm.exclusive\": true}", NULL,
           "jobtap: jobspec update of attributes.system.slurm.exclusive: "
           "invalid value true");
    check ("{\"attributes.system.shell.options.output\": {\"stdout\": "
           "{\"type\": \"file\", \"path\": \"/o\"}}}",
           "{\"attributes.system.shell.options.output.stdout.path\":\"/o\","
           "\"attributes.system.shell.options.output.stdout.type\":\"file\"}",
           NULL);
    check ("{\"attributes.system.shell.options.output.stderr.type\": "
           "\"kvs\"}",
           NULL,
           "jobtap: jobspec update of "
           "attributes.system.shell.options.output.stderr.type: invalid "
           "value \"kvs\"");
    check ("{\"attributes.system.shell.options.output.stdout.label\": "
           "true}",
           NULL,
           "jobtap: jobspec update of "
           "attributes.system.shell.options.output.stdout.label has no Slurm "
           "equivalent");
    check ("{\"resources\": [], \"tasks\": []}",
           "{\"resources\":[],\"tasks\":[]}", NULL);
}

static void test_helpers (void)
{
    json_t *c = json_pack ("{s:[sss]}", "properties", "a", "b", "c");
    char *s = jobspec_constraints_features (c);
    is (s, "a&b&c", "constraints {properties} as Slurm features");
    free (s);
    json_decref (c);
    c = json_pack ("{s:[]}", "properties");
    s = jobspec_constraints_features (c);
    is (s, "", "no properties: empty features");
    free (s);
    json_decref (c);
    ok (jobspec_duration_minutes (0) == 0, "duration 0 stays unlimited");
    ok (jobspec_duration_minutes (1) == 1, "a second is a minute");
    ok (jobspec_duration_minutes (60) == 1, "60 s is a minute");
    ok (jobspec_duration_minutes (61) == 2, "61 s is two (rounded up)");
    ok (jobspec_duration_minutes (1e30) == UINT32_MAX - 2,
        "a huge duration is the longest limit, not a Slurm sentinel");
}

/* A plugin's huge value or key is cut in the message users and the log
 * see, with its size (a 100 kB update once flooded sbatch and the log). */
static void test_huge (void)
{
    size_t n = 100 * 1024;
    char *big = malloc (n + 1);
    memset (big, 'x', n);
    big[n] = '\0';
    json_t *u = json_pack ("{s:s}", "attributes.system.duration", big);
    jobtap_host_error_t err = {""};

    ok (jobspec_updates_check (u, &err) == NULL, "a 100 kB string duration "
                                                 "is refused");
    ok (strlen (err.text) < 200, "... in a short message (%zu bytes)",
        strlen (err.text));
    like (err.text, "^jobtap: jobspec update of attributes.system.duration: "
               "invalid value \"x{63}\\.\\.\\. \\(102402 bytes\\)$",
          "... which gives the start and the size");
    json_decref (u);

    char *key = malloc (n + 1);
    memcpy (key, "attributes.system.", 18);
    memset (key + 18, 'k', n - 18);
    key[n] = '\0';
    u = json_pack ("{s:i}", key, 1);
    err.text[0] = '\0';
    ok (jobspec_updates_check (u, &err) == NULL, "a 100 kB unknown key "
                                                 "is refused");
    ok (strlen (err.text) < 200, "... in a short message (%zu bytes)",
        strlen (err.text));
    like (err.text, "^jobtap: jobspec update of attributes.system.k{110}\\.\\.\\. "
               "has no Slurm equivalent$", "... naming the key's start");
    json_decref (u);

    json_t *short_value = json_string ("short");
    char *text = jobspec_update_value_text (short_value, 64);
    is (text, "\"short\"", "a short value is given whole");
    free (text);
    json_decref (short_value);
    json_t *s = json_string (big);
    text = jobspec_update_value_text (s, 8);
    is (text, "\"xxxxxxx... (102402 bytes)", "a long one is cut at max");
    free (text);
    json_decref (s);
    free (key);
    free (big);
}

int main (void)
{
    test_keys ();
    test_check ();
    test_check_wider ();
    test_helpers ();
    test_huge ();
    done_testing ();
    return 0;
}
