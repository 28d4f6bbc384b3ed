/* The submission mark (src/slurm_adapter/mark.c): what job_submit writes
 * into a job's spank environment and the agent reads back. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "mark.h"
#include "tap.h"

static void test_format (void)
{
    char buf[MARK_SIZE];

    mark_format (buf, 12, 34, 16, 0);
    is (buf, "SLURM_JOBTAP_SUBMIT=12:34:16:0", "the mark's format");
    mark_format (buf, 0, 0, -3, 7);
    is (buf, "SLURM_JOBTAP_SUBMIT=0:0:0:7", "negative urgency is written as 0");
    mark_format (buf, UINT64_MAX, UINT64_MAX, INT_MAX, UINT32_MAX);
    is (buf,
        "SLURM_JOBTAP_SUBMIT=18446744073709551615:18446744073709551615:"
        "2147483647:4294967295",
        "the largest values fit");
    ok (strlen (buf) < MARK_SIZE, "MARK_SIZE holds the longest mark");
}

static void test_round_trip (void)
{
    char buf[MARK_SIZE];
    char *env[] = {"A=1", buf, NULL};
    uint64_t token = 99;
    int urgency = 99;
    uint32_t op = 99;

    mark_format (buf, UINT64_MAX, UINT64_MAX - 1, INT_MAX, UINT32_MAX);
    ok (mark_find (env, 2, UINT64_MAX, &token, &urgency, &op),
        "the mark is found among other variables");
    ok (token == UINT64_MAX - 1 && urgency == INT_MAX && op == UINT32_MAX,
        "the largest values read back");

    mark_format (buf, 5, 6, 0, 0);
    ok (mark_find (env, 2, 5, &token, &urgency, &op) && token == 6 &&
            urgency == 0 && op == 0,
        "a mark of this boot gives its token");
    mark_format (buf, 4, 6, 31, 1000);
    ok (mark_find (env, 2, 5, &token, &urgency, &op) && token == 0 &&
            urgency == 31 && op == 1000,
        "a mark of another boot gives token 0 and its other fields");
}

static void test_not_found (void)
{
    char *env[] = {"SLURM_JOBTAP_SUBMIT=1:2:3:4"};
    uint64_t token = 99;
    int urgency = 98;
    uint32_t op = 97;

    ok (!mark_find (NULL, 3, 1, &token, &urgency, &op),
        "no environment: no mark");
    ok (!mark_find (env, 0, 1, &token, &urgency, &op),
        "only the first n entries are read");
    ok (token == 99 && urgency == 98 && op == 97,
        "the outputs are left alone when there is no mark");
}

/* Each malformed mark is skipped; a good one after it is still found. */
static void test_malformed (void)
{
    const char *bad[] = {
        "SLURM_JOBTAP_SUBMIT=",
        "SLURM_JOBTAP_SUBMIT=1:2:3",
        "SLURM_JOBTAP_SUBMIT=1:2:3:4:5",
        "SLURM_JOBTAP_SUBMIT=1:2:3:4x",
        "SLURM_JOBTAP_SUBMIT=1::3:4",
        "SLURM_JOBTAP_SUBMIT=-1:2:3:4",
        "SLURM_JOBTAP_SUBMIT= 1:2:3:4",
        "SLURM_JOBTAP_SUBMIT=18446744073709551616:2:3:4",
        "SLURM_JOBTAP_SUBMIT=1:2:2147483648:4",
        "SLURM_JOBTAP_SUBMIT=1:2:3:4294967296",
        "SLURM_JOBTAP_SUBMITX=1:2:3:4",
        "slurm_jobtap_submit=1:2:3:4",
    };
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        char *env[] = {NULL, (char *)bad[i], "SLURM_JOBTAP_SUBMIT=1:8:9:10"};
        uint64_t token = 0;
        int urgency = 0;
        uint32_t op = 0;
        bool found = mark_find (env, 3, 1, &token, &urgency, &op);
        ok (found && token == 8 && urgency == 9 && op == 10, "skipped: \"%s\"",
            bad[i]);
    }
}

int main (void)
{
    test_format ();
    test_round_trip ();
    test_not_found ();
    test_malformed ();
    done_testing ();
    return 0;
}
