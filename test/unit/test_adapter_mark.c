/* The submission mark (src/slurm_adapter/mark.c): what job_submit writes
 * into a job's spank environment and the agent reads back, and the mark
 * an empty environment array holds past its NULL. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "mark.h"
#include "tap.h"

/* A boot as the adapter makes it (a few alive at once). */
static const struct mark_boot *boot (uint64_t value)
{
    static struct mark_boot b[4];
    static int i;
    i = (i + 1) % 4;
    mark_boot_init (&b[i], value);
    return &b[i];
}

static void test_format (void)
{
    char buf[MARK_SIZE];

    mark_format (buf, boot (12), &(struct mark){34, 16, 0, 0});
    is (buf, "SLURM_JOBTAP_SUBMIT=12:34:16:0:0", "the mark's format");
    mark_format (buf, boot (0), &(struct mark){0, -3, 7, MARK_BATCH});
    is (buf, "SLURM_JOBTAP_SUBMIT=0:0:0:7:2",
        "negative urgency is written as 0; the flags last");
    mark_format (buf, boot (UINT64_MAX),
                 &(struct mark){UINT64_MAX, INT_MAX, UINT32_MAX, UINT32_MAX});
    is (buf,
        "SLURM_JOBTAP_SUBMIT=18446744073709551615:18446744073709551615:"
        "2147483647:4294967295:4294967295",
        "the largest values fit");
    ok (strlen (buf) < MARK_SIZE, "MARK_SIZE holds the longest mark");
}

static void test_round_trip (void)
{
    char buf[MARK_SIZE];
    char *env[] = {"A=1", buf, NULL};
    struct mark m = {99, 99, 99, 99};

    mark_format (buf, boot (UINT64_MAX),
                 &(struct mark){UINT64_MAX - 1, INT_MAX, UINT32_MAX,
                                MARK_CREATED_HELD | MARK_BATCH});
    ok (mark_find (env, 2, boot (UINT64_MAX), &m),
        "the mark is found among other variables");
    ok (m.token == UINT64_MAX - 1 && m.urgency == INT_MAX
            && m.op_priority == UINT32_MAX
            && m.flags == (MARK_CREATED_HELD | MARK_BATCH),
        "the largest values read back");

    mark_format (buf, boot (5), &(struct mark){6, 0, 0, 0});
    ok (mark_find (env, 2, boot (5), &m) && m.token == 6 && m.urgency == 0
            && m.op_priority == 0 && m.flags == 0,
        "a mark of this boot gives its token");
    mark_format (buf, boot (4), &(struct mark){6, 31, 1000, MARK_BATCH});
    ok (mark_find (env, 2, boot (5), &m) && m.token == 0 && m.urgency == 31
            && m.op_priority == 1000 && m.flags == MARK_BATCH,
        "a mark of another boot gives token 0 and its other fields");
    mark_format (buf, boot (55), &(struct mark){6, 1, 0, 0});
    ok (mark_find (env, 2, boot (5), &m) && m.token == 0 && m.urgency == 1,
        "a boot that begins with this boot's digits is another boot");
    char *zero[] = {"SLURM_JOBTAP_SUBMIT=05:7:2:0:0"};
    ok (mark_find (zero, 1, boot (5), &m) && m.token == 7 && m.urgency == 2,
        "this boot written with a leading zero is still this boot");
}

/* Numbers of every length, and around each power of ten, are written as
 * printf writes them and read back. */
static void test_every_length (void)
{
    char buf[MARK_SIZE], want[MARK_SIZE];
    char *env[] = {buf};
    int bad_written = 0, bad_read = 0;
    uint64_t p = 1;

    for (int k = 0; k < 20; k++, p *= 10) {
        uint64_t vs[] = {p - 1, p, p + 1, p * 5 + 3};
        for (size_t i = 0; i < sizeof (vs) / sizeof (vs[0]); i++) {
            uint64_t v = vs[i];
            struct mark m = {0, 0, 0, 0};
            mark_format (buf, boot (v), &(struct mark){v, 7, 8, 2});
            snprintf (want, sizeof (want), "SLURM_JOBTAP_SUBMIT=%ju:%ju:7:8:2",
                      (uintmax_t)v, (uintmax_t)v);
            bad_written += strcmp (buf, want) != 0;
            bad_read += !mark_find (env, 1, boot (v + 1), &m) || m.token != 0
                        || !mark_find (env, 1, boot (v), &m) || m.token != v;
        }
    }
    isint (bad_written, 0, "numbers of 1 to 20 digits are written in full");
    isint (bad_read, 0, "and read back, with their boot told apart");
    char *padded[] = {"SLURM_JOBTAP_SUBMIT=1:000000000000000000000009:3:4:0"};
    struct mark m = {0, 0, 0, 0};
    ok (mark_find (padded, 1, boot (1), &m) && m.token == 9,
        "leading zeros past 20 digits still read");
    char *over[] = {"SLURM_JOBTAP_SUBMIT=1:99999999999999999999:3:4:0"};
    ok (!mark_find (over, 1, boot (1), &m), "a 20-digit overflow is refused");
}

/* Jobs saved by a version that wrote four fields were all created held. */
static void test_four_fields (void)
{
    char *env[] = {"SLURM_JOBTAP_SUBMIT=1:2:3:4"};
    struct mark m = {0, 0, 0, 0};

    ok (mark_find (env, 1, boot (1), &m) && m.token == 2 && m.urgency == 3
            && m.op_priority == 4 && m.flags == MARK_CREATED_HELD,
        "a four-field mark reads as created held");
}

static void test_not_found (void)
{
    char *env[] = {"SLURM_JOBTAP_SUBMIT=1:2:3:4:0"};
    struct mark m = {99, 98, 97, 96};

    ok (!mark_find (NULL, 3, boot (1), &m), "no environment: no mark");
    ok (!mark_find (env, 0, boot (1), &m), "only the first n entries are read");
    ok (m.token == 99 && m.urgency == 98 && m.op_priority == 97
            && m.flags == 96,
        "the outputs are left alone when there is no mark");
}

/* Each malformed mark is skipped; a good one before it is still found. */
static void test_malformed (void)
{
    const char *bad[] = {
        "SLURM_JOBTAP_SUBMIT=",
        "SLURM_JOBTAP_SUBMIT=1:2:3",
        "SLURM_JOBTAP_SUBMIT=1:2:3:4:5:6",
        "SLURM_JOBTAP_SUBMIT=1:2:3:4x",
        "SLURM_JOBTAP_SUBMIT=1:2:3:4:",
        "SLURM_JOBTAP_SUBMIT=1:2:3:4:5x",
        "SLURM_JOBTAP_SUBMIT=1::3:4",
        "SLURM_JOBTAP_SUBMIT=-1:2:3:4",
        "SLURM_JOBTAP_SUBMIT= 1:2:3:4",
        "SLURM_JOBTAP_SUBMIT=18446744073709551616:2:3:4",
        "SLURM_JOBTAP_SUBMIT=1:2:2147483648:4",
        "SLURM_JOBTAP_SUBMIT=1:2:3:4294967296",
        "SLURM_JOBTAP_SUBMIT=1:2:3:4:4294967296",
        "SLURM_JOBTAP_SUBMITX=1:2:3:4",
        "slurm_jobtap_submit=1:2:3:4",
    };
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        char *env[] = {"SLURM_JOBTAP_SUBMIT=1:8:9:10:2", NULL,
                       (char *)bad[i]};
        struct mark m = {0, 0, 0, 0};
        bool found = mark_find (env, 3, boot (1), &m);
        ok (found && m.token == 8 && m.urgency == 9 && m.op_priority == 10
                && m.flags == MARK_BATCH,
            "skipped: \"%s\"", bad[i]);
    }
}

/* A mark the request brought is passed over: job_submit's own is the
 * last. */
static void test_last_wins (void)
{
    char *env[] = {"SLURM_JOBTAP_SUBMIT=1:2:3:4:0", "A=b",
                   "SLURM_JOBTAP_SUBMIT=1:5:6:7:2"};
    struct mark m = {0, 0, 0, 0};

    ok (mark_find (env, 3, boot (1), &m) && m.token == 5 && m.urgency == 6
            && m.op_priority == 7 && m.flags == MARK_BATCH,
        "the last mark is the one found");
    ok (mark_find (env, 2, boot (1), &m) && m.token == 2 && m.urgency == 3,
        "within the first n entries");
}

static void test_inline (void)
{
    struct mark_inline a, other;
    const struct mark_boot *b = boot (99);
    struct mark m = {0, 0, 0, 0}, kept = {7, 16, 0, MARK_BATCH};
    char **env = (char **)&a;
    char *full[2] = {"A=1", NULL};

    mark_inline_write (&a, b, &kept);
    ok (env[0] == NULL, "the array's NULL comes first: an empty environment");
    ok (mark_inline_find (env, 0, MARK_INLINE_SIZE, b, &m) && m.token == 7
            && m.urgency == 16 && m.op_priority == 0 && m.flags == MARK_BATCH,
        "the mark is found in the record's empty array");
    m.token = 0;
    ok (!mark_inline_find (env, 1, MARK_INLINE_SIZE, b, &m) && m.token == 0,
        "not in an array said to hold an entry");
    ok (!mark_inline_find (env, 0, sizeof (char *), b, &m) && m.token == 0,
        "not in an empty array of another size (never read past it)");
    ok (!mark_inline_find (NULL, 0, 0, b, &m) && m.token == 0,
        "not without an array");
    ok (!mark_inline_find (env, 0, MARK_INLINE_SIZE, boot (98), &m)
            && m.token == 0,
        "not another process's (its boot)");
    ok (!mark_inline_find (full, 1, MARK_INLINE_SIZE, b, &m) && m.token == 0,
        "not in an environment with entries");
    mark_inline_write (&other, b, &(struct mark){0, 16, 0, 0});
    ok (!mark_inline_find ((char **)&other, 0, MARK_INLINE_SIZE, b, &m),
        "not one without a provisional job (token 0)");
    other.terminator = "A=1";
    other.mark.token = 7;
    ok (!mark_inline_find ((char **)&other, 0, MARK_INLINE_SIZE, b, &m),
        "not one whose first slot is an entry");
}

int main (void)
{
    test_format ();
    test_round_trip ();
    test_every_length ();
    test_four_fields ();
    test_not_found ();
    test_malformed ();
    test_last_wins ();
    test_inline ();
    done_testing ();
    return 0;
}
