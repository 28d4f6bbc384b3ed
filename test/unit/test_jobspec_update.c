/* src/jobspec/jobspec_update.c: the keys with a Slurm field and the check
 * of updates against them (the messages users see). */
#include <stdlib.h>
#include <string.h>

#include "jobspec_update.h"
#include "tap.h"

static void test_keys (void)
{
    const struct jobspec_update_key *k;

    ok (jobspec_update_nkeys == 12, "12 keys have a Slurm field");
    k = jobspec_update_key_find ("attributes.system.duration");
    ok (k && k->kind == JOBSPEC_UPDATE_DURATION &&
            k->field == JOBSPEC_FIELD_TIME_LIMIT,
        "duration is the time limit");
    k = jobspec_update_key_find ("attributes.system.bank");
    ok (k && k->kind == JOBSPEC_UPDATE_LOWER, "bank is lowercased by Slurm");
    ok (!jobspec_update_key_find ("attributes.system"),
        "a key's parent is not a key");
    ok (!jobspec_update_key_find ("resources"), "resources have no field");
}

static void
check (const char *json, const char *want_flat, const char *want_msg)
{
    json_t *u = json_loads (json, 0, NULL);
    char *msg = (char *)"unset";
    json_t *flat = jobspec_updates_check (u, &msg);
    char *s = flat ? json_dumps (flat, JSON_COMPACT | JSON_SORT_KEYS) : NULL;

    if (want_flat) {
        is (s, want_flat, "accepted: %s", json);
        ok (msg == NULL, "... with no message");
    } else {
        ok (flat == NULL, "refused: %s", json);
        is (msg, want_msg, "... %s", want_msg);
    }
    free (s);
    free (msg == (char *)"unset" ? NULL : msg);
    json_decref (flat);
    json_decref (u);
}

static void test_check (void)
{
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
    check ("{\"attributes.system.queue\": \"q\", \"tasks\": []}", NULL,
           "jobtap: jobspec update of tasks has no Slurm equivalent");
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

int main (void)
{
    test_keys ();
    test_check ();
    test_helpers ();
    done_testing ();
    return 0;
}
