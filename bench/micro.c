/* bench-micro: in-process costs of the jobtap runtime as the Slurm shim
 * drives it, per policy stack (builtins only, 1 C plugin, 5 C plugins,
 * 1 Lua policy):
 *
 *   submit    what job_submit() does: build the jobspec from a
 *             job_desc_msg_t (the shim's jobspec.c, when linked), run
 *             job.create/job.validate (jobtap_host_submit), apply the
 *             updates back; batches are aborted untimed afterwards
 *   agent     what the agent does later per job: job.new (bind the
 *             provisional job, DEPEND, PRIORITY, SCHED), and at the end
 *             job_inactive (the periodic sweep)
 *   reprio    jobtap_host_reprioritize_all over 10k and 100k SCHED jobs
 *   memory    heap (mallinfo2) held per tracked job, 100k jobs
 *
 *   bench-micro [--quick] [--jobs N]   (N: the large job count, 100000)
 *   bench-micro --profile STACK N [PENDING]
 *       N submissions through STACK (builtins, c1, c5, lua1) with
 *       PENDING jobs in SCHED, then N whole lifecycles, for callgrind
 *       --toggle-collect=loop_submit (or =jobtap_host_job_new: the agent)
 *
 * Prints "key value unit" lines; bench/run turns them into a table. */
#ifdef BENCH_HAVE_JOBSPEC
#include <config.h>
#endif
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "host.h"
#ifdef BENCH_HAVE_JOBSPEC
#include "src/common/slurm_xlator.h"
#include "src/common/xmalloc.h"
#include "src/slurmctld/slurmctld.h"

#include "jobspec.h"
#include "jobspec_apply.h"
#include "jobspec_fields.h"
#endif

static int quick;
static int log_errors;

static double now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void op_log (int level, const char *msg, void *arg)
{
    (void)arg;
    if (level <= 3 && log_errors++ < 5)
        fprintf (stderr, "bench-micro: runtime: %s\n", msg);
}

/* The shim's callbacks queue actions for the agent; here they do nothing,
 * so what is timed is the runtime and the plugins. */
static const struct jobtap_host_ops ops = {
    .log = op_log,
#ifdef BENCH_HAVE_JOBSPEC
    .jobspec_rebuild = jobspec_source_build, /* the shim's */
    .jobspec_find = jobspec_source_find,
#endif
};

/* The jobspec the shim builds for the job of bench_desc_init; used as is
 * when the jobspec build is not linked. */
static const char *spec_text =
    "{\"version\":1,\"resources\":[{\"type\":\"node\",\"count\":1,\"with\":"
    "[{\"type\":\"slot\",\"count\":4,\"label\":\"task\",\"with\":[{\"type\":"
    "\"core\",\"count\":1}]}]}],\"tasks\":[{\"command\":[\"/home/alice/run.sh\","
    "\"--input\",\"data.txt\"],\"slot\":\"task\",\"count\":{\"per_slot\":1}}],"
    "\"attributes\":{\"system\":{\"duration\":3600.0,\"queue\":\"debug\","
    "\"bank\":\"physics\",\"cwd\":\"/home/alice/work\",\"job\":{\"name\":"
    "\"sim-42\"},\"slurm\":{\"comment\":\"run 42\"}}}}";

static json_t *the_spec;
static size_t heap_used (void);

#ifdef BENCH_HAVE_JOBSPEC
/* The Slurm side: the shim's own src/slurm_adapter/jobspec.c builds the
 * jobspec of a realistic job_desc_msg_t and jobspec_apply.c applies a
 * policy's updates back, as job_submit/jobtap does.  Its partitions are the benchmark
 * cluster's: "debug", the default, with no DefaultTime and MaxTime
 * unlimited. */
static const char *bench_default_part (void *arg)
{
    (void)arg;
    return "debug";
}

static bool bench_part_limits (const char *name, uint32_t *default_time,
                               uint32_t *max_time, void *arg)
{
    (void)arg;
    if (name && strcmp (name, "debug"))
        return false;
    *default_time = NO_VAL;
    *max_time = INFINITE;
    return true;
}

static const struct jobspec_partitions bench_parts = {
    .default_name = bench_default_part,
    .time_limits = bench_part_limits,
};

static job_desc_msg_t desc;
static char *desc_argv[] = {"/home/alice/run.sh", "--input", "data.txt", NULL};

/* What sbatch -J sim-42 -t 60 -N 1 -n 4 -A physics --comment "run 42"
 * -D /home/alice/work run.sh --input data.txt sends (no partition). */
static void bench_desc_init (void)
{
    slurm_init_job_desc_msg (&desc);
    desc.name = "sim-42";
    desc.time_limit = 60;
    desc.min_nodes = 1;
    desc.num_tasks = 4;
    desc.account = "physics";
    desc.comment = "run 42";
    desc.work_dir = "/home/alice/work";
    desc.argv = desc_argv;
    desc.argc = 3;
    desc.user_id = 1000;
    desc.group_id = 1000;
}

/* What job_submit keeps of the last submission's updates checked. */
static struct apply_memo apply_memo = APPLY_MEMO_INIT;

/* Apply the updates as job_submit does, then undo them so the next
 * iteration starts from the same request. */
static int bench_apply_updates (json_t *updates)
{
    jobtap_host_error_t err;
    int rc = jobspec_apply_updates (&desc, NULL, updates, &apply_memo, &err);
    xfree (desc.partition);
    return rc;
}
#endif

/* The runtime ended, with what the bench kept of its objects let go
 * first (they may come from its pool). */
static void runtime_fini (void)
{
#ifdef BENCH_HAVE_JOBSPEC
    apply_memo_clear (&apply_memo);
#endif
    jobtap_host_fini ();
}

/* The jobspec, and with the jobspec build linked the fields it was built
 * from (source may be NULL: not wanted). */
static json_t *build_spec_sourced (void **source, size_t *len)
{
#ifdef BENCH_HAVE_JOBSPEC
    return jobspec_from_desc_parts (&desc, &bench_parts, source, len);
#else
    if (source)
        *source = NULL;
    (void)len;
    return json_incref (the_spec);
#endif
}

static json_t *build_spec (void)
{
    return build_spec_sourced (NULL, NULL);
}

static void apply_updates (json_t *updates)
{
#ifdef BENCH_HAVE_JOBSPEC
    if (updates && json_object_size (updates) > 0 &&
        bench_apply_updates (updates) < 0) {
        fprintf (stderr, "bench-micro: updates did not apply\n");
        exit (1);
    }
#else
    (void)updates;
#endif
}

static int start (const char *name, const char *plugins)
{
    char path[] = "/tmp/bench-micro-XXXXXX";
    int fd = mkstemp (path);
    jobtap_host_error_t err = {{0}};
    FILE *f;

    if (fd < 0 || !(f = fdopen (fd, "w"))) {
        perror ("bench-micro: config");
        exit (1);
    }
    /* inactive-max small: finished jobs are purged as in a long run. */
    fprintf (f, "[job-manager]\nplugins = [ %s ]\n[slurm-jobtap]\ninactive-max = 100\n",
             plugins);
    fclose (f);
    if (jobtap_host_init (&ops, NULL) < 0 ||
        jobtap_host_load_config (path, &err) < 0) {
        fprintf (stderr, "bench-micro: %s: %s\n", name, err.text);
        unlink (path);
        exit (1);
    }
    unlink (path);
    return 0;
}

/* One accepted submission as job_submit() makes it. */
static uint64_t submit_one (void)
{
    void *source;
    size_t source_len = 0;
    json_t *spec = build_spec_sourced (&source, &source_len), *updates = NULL;
    jobtap_host_error_t err;
    uint64_t token = 0;
    int rc = source ? jobtap_host_submit_from_source (source, source_len,
                                                      1000, 16, 1.0, 0,
                                                      &updates, &token, &err)
                    : jobtap_host_submit (spec, 1000, 16, 1.0,
                                          JOBTAP_SUBMIT_TAKE_JOBSPEC,
                                          &updates, &token, &err);
    if (rc < 0) {
        fprintf (stderr, "bench-micro: rejected: %s\n", err.text);
        exit (1);
    }
    apply_updates (updates);
    json_decref (updates);
    return token;
}

static int cmp_double (const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#define ROUNDS 7

/* Median over ROUNDS rounds of the time per call of fn, in us.  fn
 * returns the seconds it timed (its own clean-up left out). */
static double median_us (double (*fn) (int), int per_round)
{
    double t[ROUNDS];
    fn (per_round / 10 + 1); /* warm-up */
    for (int r = 0; r < ROUNDS; r++)
        t[r] = fn (per_round) * 1e6 / per_round;
    qsort (t, ROUNDS, sizeof (t[0]), cmp_double);
    return t[ROUNDS / 2];
}

static double loop_build (int n)
{
    double t0 = now ();
    for (int i = 0; i < n; i++)
        json_decref (build_spec ());
    return now () - t0;
}

/* Submissions in batches under provisional-max; each batch is aborted
 * after the clock stops: job_submit() returns before the job is freed. */
#define SUBMIT_BATCH 500
static double loop_submit (int n)
{
    uint64_t tokens[SUBMIT_BATCH];
    double timed = 0.;
    while (n > 0) {
        int k = n < SUBMIT_BATCH ? n : SUBMIT_BATCH;
        double t0 = now ();
        for (int i = 0; i < k; i++)
            tokens[i] = submit_one ();
        timed += now () - t0;
        for (int i = 0; i < k; i++)
            jobtap_host_submit_abort (tokens[i]);
        n -= k;
    }
    return timed;
}

static uint64_t next_id = 1;

static double loop_lifecycle (int n)
{
    jobtap_host_error_t err;
    double t0 = now ();
    for (int i = 0; i < n; i++) {
        uint64_t token = submit_one (), id = next_id++;
        if (jobtap_host_job_new (token, id, 1000, 16, 1.0, NULL, &err) < 0) {
            fprintf (stderr, "bench-micro: job_new: %s\n", err.text);
            exit (1);
        }
        jobtap_host_job_inactive (id);
    }
    return now () - t0;
}

/* n jobs in SCHED, ids from next_id. They enter as a restart or the
 * shim's discovery brings them (job_new without a token: job.create, then
 * job.new), with the jobspec the shim builds: the same per-job state as a
 * submission, without the submit path's cost (see submit_us). */
static void add_jobs (int n)
{
    jobtap_host_error_t err;
    for (int i = 0; i < n; i++) {
        json_t *spec = build_spec ();
        if (jobtap_host_job_new (0, next_id++, 1000, 16, 1.0, spec, &err)
            < 0) {
            fprintf (stderr, "bench-micro: job_new: %s\n", err.text);
            exit (1);
        }
        json_decref (spec);
    }
}

static size_t heap_used (void)
{
    struct mallinfo2 mi = mallinfo2 ();
    return mi.uordblks + mi.hblkhd + jobtap_host_json_pool_bytes ();
}

struct stack {
    const char *name;
    const char *plugins;
    int nplugins;
};

int main (int argc, char **argv)
{
    int big = 100000;
    char c1[512], c5[2048], cp1[512], cp5[2048], lua[512];

    const char *profile = NULL;
    int profile_n = 0, profile_pending = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp (argv[i], "--profile") && i + 2 < argc) {
            profile = argv[i + 1];
            profile_n = atoi (argv[i + 2]);
            i += 2;
            if (i + 1 < argc)
                profile_pending = atoi (argv[++i]);
        } else if (!strcmp (argv[i], "--quick"))
            quick = 1;
        else if (!strcmp (argv[i], "--jobs") && i + 1 < argc)
            big = atoi (argv[++i]);
        else {
            fprintf (stderr, "usage: %s [--quick] [--jobs N]\n", argv[0]);
            return 2;
        }
    }
    if (quick)
        big = 1000;
    the_spec = json_loads (spec_text, 0, NULL);
#ifdef BENCH_HAVE_JOBSPEC
    bench_desc_init ();
    printf ("jobspec_build linked\n");
#else
    printf ("jobspec_build not-linked\n");
#endif
    snprintf (c1, sizeof (c1), "{ load = \"%s/bench-policy.so\" }",
              BENCH_PLUGIN_DIR);
    snprintf (cp1, sizeof (cp1),
              "{ load = \"%s/bench-policy.so\", conf = { priority = true } }",
              BENCH_PLUGIN_DIR);
    c5[0] = cp5[0] = '\0';
    for (int i = 1; i <= 5; i++) {
        size_t l = strlen (c5), lp = strlen (cp5);
        snprintf (c5 + l, sizeof (c5) - l, "%s{ load = \"%s/bench-policy-%d.so\" }",
                  i > 1 ? ", " : "", BENCH_PLUGIN_DIR, i);
        snprintf (cp5 + lp, sizeof (cp5) - lp,
                  "%s{ load = \"%s/bench-policy-%d.so\", conf = { priority = true } }",
                  i > 1 ? ", " : "", BENCH_PLUGIN_DIR, i);
    }
    snprintf (lua, sizeof (lua), "{ load = \"%s\" }", BENCH_LUA_POLICY);

    if (profile) {
        const char *pl = !strcmp (profile, "c1")     ? c1
                         : !strcmp (profile, "c5")   ? c5
                         : !strcmp (profile, "lua1") ? lua
                                                     : "";
        start (profile, pl);
        add_jobs (profile_pending);
        double t0 = now ();
        loop_submit (profile_n);
        printf ("submit_us %s pending=%d %.3f us\n", profile, profile_pending,
                (now () - t0) * 1e6 / profile_n);
        t0 = now ();
        loop_lifecycle (profile_n);
        printf ("lifecycle_us %s pending=%d %.3f us\n", profile,
                profile_pending, (now () - t0) * 1e6 / profile_n);
        runtime_fini ();
        return 0;
    }

    int per = quick ? 200 : 20000;
    printf ("jobspec_build_us %.3f us\n", median_us (loop_build, per));
    {
        /* What one jobspec alone holds, to read heap_per_job against. */
        int k = quick ? 100 : 10000;
        json_t **v = calloc (k, sizeof (*v));
        size_t h = heap_used ();
        for (int i = 0; i < k && v; i++)
            v[i] = build_spec ();
        printf ("heap_per_jobspec %.0f bytes\n", (double)(heap_used () - h) / k);
        for (int i = 0; i < k && v; i++)
            json_decref (v[i]);
        free (v);
    }

    struct stack stacks[] = {
        {"builtins", "", 0},
        {"c1", c1, 1},
        {"c5", c5, 5},
        {"lua1", lua, 1},
    };
    for (size_t s = 0; s < sizeof (stacks) / sizeof (stacks[0]); s++) {
        start (stacks[s].name, stacks[s].plugins);
        printf ("submit_us %s %.3f us\n", stacks[s].name,
                median_us (loop_submit, per));
        next_id = 1;
        double life = median_us (loop_lifecycle, per);
        printf ("lifecycle_us %s %.3f us\n", stacks[s].name, life);
        runtime_fini ();
    }

    /* Reprioritize: builtins only, then 1 and 5 C plugins with a priority. */
    struct stack rstacks[] = {
        {"builtins", "", 0},
        {"c1", cp1, 1},
        {"c5", cp5, 5},
    };
    int counts[] = {quick ? 100 : 10000, big};
    for (size_t s = 0; s < sizeof (rstacks) / sizeof (rstacks[0]); s++) {
        for (size_t k = 0; k < 2; k++) {
            double t[3];
            start (rstacks[s].name, rstacks[s].plugins);
            next_id = 1;
            size_t h0 = heap_used ();
            add_jobs (counts[k]);
            size_t h1 = heap_used ();
            for (int r = 0; r < 3; r++) {
                double t0 = now ();
                jobtap_host_reprioritize_all ();
                t[r] = (now () - t0) * 1e6 / counts[k];
            }
            qsort (t, 3, sizeof (t[0]), cmp_double);
            printf ("reprio_us_per_job %s %d %.3f us\n", rstacks[s].name,
                    counts[k], t[1]);
            if (k == 1)
                printf ("heap_per_job %s %d %.0f bytes\n", rstacks[s].name,
                        counts[k], (double)(h1 - h0) / counts[k]);
            runtime_fini ();
        }
    }
    /* Memory with the Lua policy (its per-job state lives in Lua). */
    start ("lua1", lua);
    next_id = 1;
    size_t h0 = heap_used ();
    add_jobs (big);
    printf ("heap_per_job lua1 %d %.0f bytes\n", big,
            (double)(heap_used () - h0) / big);
    runtime_fini ();
    /* Jobs that came through a submission keep what it was built from
     * rather than the jobspec's text (with the jobspec build linked). */
    start ("c1", c1);
    next_id = 1;
    h0 = heap_used ();
    for (int i = 0; i < big; i++) {
        jobtap_host_error_t err;
        if (jobtap_host_job_new (submit_one (), next_id++, 1000, 16, 1.0, NULL,
                                 &err) < 0) {
            fprintf (stderr, "bench-micro: job_new: %s\n", err.text);
            exit (1);
        }
    }
    printf ("heap_per_job c1-submitted %d %.0f bytes\n", big,
            (double)(heap_used () - h0) / big);
    runtime_fini ();
    json_decref (the_spec);
    if (log_errors) {
        fprintf (stderr, "bench-micro: %d runtime errors\n", log_errors);
        return 1;
    }
    return 0;
}
