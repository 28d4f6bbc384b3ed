/* src/jobspec/r_build.c: an allocation -> R version 1, what jobtap plugins
 * get at job.state.run. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "r_build.h"
#include "r_text.h"
#include "tap.h"

#define LEN(a) (sizeof (a) / sizeof ((a)[0]))

static char *text;

/* The compact, sorted text of R's value at key of "execution" (the whole
 * of R when key is NULL), or "(null)" when r_build fails. */
static const char *build_at (const struct r_node *nodes,
                             size_t nnodes,
                             double starttime,
                             double expiration,
                             const char *key)
{
    json_t *R = r_build (nodes, nnodes, starttime, expiration);
    json_t *v =
        R && key ? json_object_get (json_object_get (R, "execution"), key) : R;
    free (text);
    text = v ? json_dumps (v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY)
             : NULL;
    json_decref (R);
    return text ? text : "(null)";
}

static const char *build (const struct r_node *nodes, size_t nnodes)
{
    return build_at (nodes, nnodes, 0, 0, NULL);
}

static const char *rlite (const struct r_node *nodes, size_t nnodes)
{
    return build_at (nodes, nnodes, 0, 0, "R_lite");
}

/* The nodelist of nodes named names[0..n-1], one core each. */
static const char *nodelist_of (const char *const *names, size_t n)
{
    struct r_node nodes[16];

    if (n > LEN (nodes))
        bail_out ("nodelist_of: %zu names, room for %zu", n, LEN (nodes));
    memset (nodes, 0, sizeof (nodes));
    for (size_t i = 0; i < n; i++) {
        nodes[i].hostname = names[i];
        nodes[i].ncores = 1;
    }
    return build_at (nodes, n, 0, 0, "nodelist");
}

static const uint32_t cores4[] = {0, 1, 2, 3};

static void test_one_node (void)
{
    struct r_node n = {.hostname = "n1", .cores = cores4, .ncores = 4};

    is (build (&n, 1),
        "{\"execution\":{\"R_lite\":[{\"children\":{\"core\":\"0-3\"},"
        "\"rank\":\"0\"}],\"expiration\":0.0,\"nodelist\":[\"n1\"],"
        "\"starttime\":0.0},\"version\":1}",
        "one node, 4 cores, no GPU: rank 0, no gpu key, both times");
    n.cores = NULL;
    is (rlite (&n, 1), "[{\"children\":{\"core\":\"0-3\"},\"rank\":\"0\"}]",
        "no core ids and a count of 4: cores 0-3");
    n.ncores = 1;
    is (rlite (&n, 1), "[{\"children\":{\"core\":\"0\"},\"rank\":\"0\"}]",
        "... a count of 1: core 0");
}

static void test_identical (void)
{
    struct r_node n[] = {
        {.hostname = "n1", .cores = cores4, .ncores = 4},
        {.hostname = "n2", .cores = cores4, .ncores = 4},
    };

    is (build_at (n, LEN (n), 0, 0, NULL),
        "{\"execution\":{\"R_lite\":[{\"children\":{\"core\":\"0-3\"},"
        "\"rank\":\"0-1\"}],\"expiration\":0.0,\"nodelist\":[\"n[1-2]\"],"
        "\"starttime\":0.0},\"version\":1}",
        "two identical nodes: one R_lite entry for ranks 0-1, n[1-2]");
}

static void test_heterogeneous (void)
{
    static const uint32_t two[] = {0, 1};
    struct r_node n[] = {
        {.hostname = "n1", .cores = cores4, .ncores = 4},
        {.hostname = "n2", .cores = two, .ncores = 2},
        {.hostname = "n3", .cores = cores4, .ncores = 4},
        {.hostname = "n4", .cores = cores4, .ncores = 4},
        {.hostname = "n5", .cores = two, .ncores = 2},
        {.hostname = "n6", .cores = cores4, .ncores = 4},
    };

    is (rlite (n, 2),
        "[{\"children\":{\"core\":\"0-3\"},\"rank\":\"0\"},"
        "{\"children\":{\"core\":\"0-1\"},\"rank\":\"1\"}]",
        "two different nodes: two entries, in rank order");
    is (rlite (n, LEN (n)),
        "[{\"children\":{\"core\":\"0-3\"},\"rank\":\"0,2-3,5\"},"
        "{\"children\":{\"core\":\"0-1\"},\"rank\":\"1,4\"}]",
        "ranks apart with the same children share an entry: 0,2-3,5 and 1,4");
}

static void test_gpus (void)
{
    static const uint32_t odd_gpus[] = {3, 1};
    struct r_node n[] = {
        {.hostname = "g1", .cores = cores4, .ncores = 4, .ngpus = 2},
        {.hostname = "g2", .cores = cores4, .ncores = 4, .ngpus = 2},
        {.hostname = "g3", .cores = cores4, .ncores = 4},
        {.hostname = "g4",
         .cores = cores4,
         .ncores = 4,
         .gpus = odd_gpus,
         .ngpus = 2},
        {.hostname = "g5", .ngpus = 1},
    };

    is (rlite (n, LEN (n)),
        "[{\"children\":{\"core\":\"0-3\",\"gpu\":\"0-1\"},\"rank\":\"0-1\"},"
        "{\"children\":{\"core\":\"0-3\"},\"rank\":\"2\"},"
        "{\"children\":{\"core\":\"0-3\",\"gpu\":\"1,3\"},\"rank\":\"3\"},"
        "{\"children\":{\"gpu\":\"0\"},\"rank\":\"4\"}]",
        "GPU counts as ids 0..n-1, GPU ids as given, no gpu key without "
        "GPUs, a GPU-only node has no core key");
}

static void test_core_sets (void)
{
    static const uint32_t gappy[] = {3, 0, 2, 2};
    static const uint32_t ends[] = {4294967295u, 0, 4294967294u, 4294967295u};
    struct r_node n = {.hostname = "n1", .cores = gappy, .ncores = 4};

    is (rlite (&n, 1), "[{\"children\":{\"core\":\"0,2-3\"},\"rank\":\"0\"}]",
        "cores 3,0,2,2: sorted, once each, 0,2-3");
    n.cores = ends;
    is (rlite (&n, 1),
        "[{\"children\":{\"core\":\"0,4294967294-4294967295\"},"
        "\"rank\":\"0\"}]",
        "the largest ids do not wrap");
}

static void test_padding (void)
{
    const char *padded[] = {"node01", "node02", "node03", "node04"};
    const char *nine_ten[] = {"node09", "node10"};
    const char *natural[] = {"n9", "n10", "n11"};
    const char *mixed[] = {"n9", "n010"};
    const char *fixed[] = {"n08", "n10", "n100"};
    const char *zero[] = {"n0", "n1"};

    is (nodelist_of (padded, LEN (padded)), "[\"node[01-04]\"]",
        "zero padding is kept: node[01-04]");
    is (nodelist_of (nine_ten, LEN (nine_ten)), "[\"node[09-10]\"]",
        "node09,node10: node[09-10]");
    is (nodelist_of (natural, LEN (natural)), "[\"n[9-11]\"]",
        "n9,n10,n11 (no padding, widths differ): n[9-11]");
    is (nodelist_of (mixed, LEN (mixed)), "[\"n9,n010\"]",
        "n9,n010: no one format prints both back: two parts of one string");
    is (nodelist_of (fixed, LEN (fixed)), "[\"n[08,10],n100\"]",
        "n08 fixes the width at 2: n10 joins, n100 does not");
    is (nodelist_of (zero, LEN (zero)), "[\"n[0-1]\"]",
        "a lone 0 is no padding: n[0-1]");
}

static void test_uncompressed (void)
{
    const char *login[] = {"login", "n1"};
    const char *between[] = {"n1", "n2", "login", "n3", "n5", "n6"};
    const char *falling[] = {"n3", "n1", "n2"};
    const char *prefixes[] = {"a1", "b2", "ab3"};
    const char *digits[] = {"123", "124"};
    const char *suffixed[] = {"n1-ib", "n2-ib"};
    const char *single[] = {"n7"};

    is (nodelist_of (login, LEN (login)), "[\"login,n1\"]",
        "login,n1: each name its own part");
    is (nodelist_of (between, LEN (between)),
        "[\"n[1-2],login,n[3,5-6]\"]",
        "runs are cut where another name comes between, in rank order");
    is (nodelist_of (falling, LEN (falling)), "[\"n3,n[1-2]\"]",
        "a falling number starts a new part, so rank order survives");
    is (nodelist_of (prefixes, LEN (prefixes)), "[\"a1,b2,ab3\"]",
        "different prefixes are not joined");
    is (nodelist_of (digits, LEN (digits)), "[\"123,124\"]",
        "all-digit names have no prefix and are left as they are");
    is (nodelist_of (suffixed, LEN (suffixed)), "[\"n1-ib,n2-ib\"]",
        "names not ending in digits are left as they are");
    is (nodelist_of (single, LEN (single)), "[\"n7\"]",
        "a run of one has no brackets");
}

static void test_times (void)
{
    struct r_node n = {.hostname = "n1", .ncores = 1};

    is (build_at (&n, 1, 1700000000.5, 0, "expiration"), "0.0",
        "expiration 0 (unlimited) is written as 0.0, as Flux does");
    is (build_at (&n, 1, 1700000000.5, 0, "starttime"), "1700000000.5",
        "starttime as given, a real");
    is (build_at (&n, 1, 1700000000, 1700003600, "expiration"), "1700003600.0",
        "an expiration is a real too");
    is (build_at (&n, 1, 5, 5, "expiration"), "5.0",
        "expiration may equal starttime");
}

static void test_large (void)
{
    enum { N = 4096 };
    struct r_node *n = calloc (N, sizeof (*n));
    char (*names)[16] = calloc (N, sizeof (*names));
    json_t *R;

    if (!n || !names)
        bail_out ("out of memory");
    for (int i = 0; i < N; i++) {
        snprintf (names[i], sizeof (names[i]), "c%04d", i);
        n[i].hostname = names[i];
        n[i].ncores = i % 2 ? 2 : 4;
    }
    R = r_build (n, N, 0, 0);
    json_t *rl = json_object_get (json_object_get (R, "execution"), "R_lite");
    isint ((long long)json_array_size (rl), 2,
           "%d nodes of two shapes: two R_lite entries", N);
    like (json_string_value (json_object_get (json_array_get (rl, 1), "rank")),
          "^1,3,5,.*,4093,4095$", "... the odd ranks one by one");
    is (build_at (n, N, 0, 0, "nodelist"), "[\"c[0000-4095]\"]",
        "... and one nodelist entry");
    json_decref (R);
    free (names);
    free (n);
}

/* r_text on its own: the edges r_build never reaches. */
static void test_text (void)
{
    static const uint32_t one[] = {7};
    const char *names[] = {"n1"};
    char *s;
    json_t *o;

    s = idset_text (NULL, 0);
    is (s, "", "no ids: the empty idset");
    free (s);
    s = idset_text (one, 1);
    is (s, "7", "one id");
    free (s);
    s = idset_text (NULL, 2);
    is (s, "0-1", "a count of 2: 0-1");
    free (s);
    o = hostlist_text (names, 0);
    s = json_dumps (o, JSON_COMPACT);
    is (s, "[]", "no names: an empty array");
    free (s);
    json_decref (o);
    ok (hostlist_name_valid ("node-01.cluster_a"),
        "dots, dashes and underscores are fine in a name");
    ok (!hostlist_name_valid (NULL), "NULL is no name");
}

static void invalid (const struct r_node *nodes,
                     size_t nnodes,
                     double starttime,
                     double expiration,
                     const char *what)
{
    errno = 0;
    json_t *R = r_build (nodes, nnodes, starttime, expiration);
    ok (R == NULL && errno == EINVAL, "EINVAL: %s", what);
    json_decref (R);
}

static void test_invalid (void)
{
    struct r_node good = {.hostname = "n1", .ncores = 1};
    struct r_node n[2] = {good, good};

    invalid (NULL, 1, 0, 0, "no node array");
    invalid (n, 0, 0, 0, "no nodes");
    n[1].hostname = NULL;
    invalid (n, 2, 0, 0, "a node without a hostname");
    const char *bad_names[] = {"",    "a,b",  "n[1-2]",     "a]",
                               "a b", "a\tb", "caf\xc3\xa9"};
    for (size_t i = 0; i < LEN (bad_names); i++) {
        char what[64];
        snprintf (what, sizeof (what), "hostname \"%s\"", bad_names[i]);
        n[1].hostname = bad_names[i];
        invalid (n, 2, 0, 0, what);
    }
    n[1] = good;
    n[1].ncores = 0;
    invalid (n, 2, 0, 0, "a node with neither cores nor GPUs");
    n[1] = good;
    invalid (n, 2, -1, 0, "a negative starttime");
    invalid (n, 2, 0, -1, "a negative expiration");
    invalid (n, 2, NAN, 0, "a NaN starttime");
    invalid (n, 2, 0, INFINITY, "an infinite expiration");
    invalid (n, 2, 100, 50, "an expiration before the starttime");
    json_t *R = r_build (n, 2, 100, 0);
    ok (R != NULL, "expiration 0 with a starttime is fine");
    json_decref (R);
}

int main (void)
{
    test_one_node ();
    test_identical ();
    test_heterogeneous ();
    test_gpus ();
    test_core_sets ();
    test_padding ();
    test_uncompressed ();
    test_times ();
    test_large ();
    test_text ();
    test_invalid ();
    free (text);
    done_testing ();
    return 0;
}
