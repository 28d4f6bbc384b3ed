/* libFuzzer harness: jobspec updates checked against the key table
 * (src/jobspec/jobspec_update.c).
 *
 * The input is a JSON object of updates (dotted keys, values that may
 * nest the rest of the path).  A check that passes must give table keys
 * only, each found by jobspec_update_key_find, and checking its result
 * again must give the same; a check that fails must say why.  The
 * helpers the adapter applies with (constraints as features, exclusive,
 * duration as minutes) run on every value. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "jobspec_update.h"

static void fail (const char *what, const char *key)
{
    fprintf (stderr, "fuzz_jobspec_update: %s%s%s\n", what, key ? ": " : "",
             key ? key : "");
    abort ();
}

static int each_calls;

static const char *count_each (const struct jobspec_update_key *m, json_t *v,
                               void *arg)
{
    (void)v, (void)arg;
    if (!m || jobspec_update_key_find (m->key) != m)
        fail ("each called with a key not in the table", m ? m->key : NULL);
    each_calls++;
    return NULL;
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    jobtap_host_error_t err = {""};
    json_t *updates = json_loadb ((const char *)data, size, 0, NULL);
    const char *key;
    json_t *v;

    if (!updates)
        return 0;
    json_t *checked = jobspec_updates_check (updates, &err);
    if (!checked) {
        if (!err.text[0])
            fail ("a refused update with no message", NULL);
    }
    else {
        json_object_foreach (checked, key, v) {
            if (!jobspec_update_key_find (key))
                fail ("a checked update with a key not in the table", key);
            char *features = jobspec_constraints_features (v);
            free (features);
            (void)jobspec_exclusive_parse (json_string_value (v));
            if (json_is_number (v))
                (void)jobspec_duration_minutes (json_number_value (v));
        }
        json_t *again = jobspec_updates_check (checked, &err);
        if (!again)
            fail ("checking a checked update fails", err.text);
        if (!json_equal (again, checked))
            fail ("checking a checked update changes it", NULL);
        json_decref (again);

        each_calls = 0;
        json_t *each = jobspec_updates_check_each (updates, count_each, NULL,
                                                   &err);
        if (!each || !json_equal (each, checked))
            fail ("check_each and check disagree", err.text);
        if ((size_t)each_calls != json_object_size (checked))
            fail ("check_each: not one call a key", NULL);
        json_decref (each);
        json_decref (checked);
    }
    json_decref (updates);
    return 0;
}
