/* jobopts: jobtap-run's options, the job options read the way sbatch
 * reads them and slurmctld completes them, into struct jobspec_fields. */
#include <ctype.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "host.h"
#include "jobopts.h"
#include "jobspec_setattr.h"
#include "jobspec_mail.h"
#include "jobspec_update.h"

void jobopts_usage (FILE *f)
{
    fprintf (
        f,
        "Usage: jobtap-run [-C JOBTAP.CONF] [-v] [JOB OPTIONS] [JOBSPEC.json "
        "...]\n"
        "       jobtap-run [-C JOBTAP.CONF] [-v] -f SCRIPT   (- for stdin)\n"
        "\n"
        "Submit one job built from the job options, or one job per JSON file,\n"
        "and print what the plugins decide.\n"
        "\n"
        "Job options (as sbatch; the jobspec is the one slurmctld builds):\n"
        "  -N, --nodes=N           -n, --ntasks=N        -c, "
        "--cpus-per-task=N\n"
        "  --ntasks-per-node=N     --exclusive           -t, --time=TIME\n"
        "  -p, --partition=NAME    -A, --account=NAME    -J, --job-name=NAME\n"
        "  --wckey=NAME            -d, --dependency=LIST -D, --chdir=DIR\n"
        "  -G, --gpus=N            --gpus-per-node=N     --gpus-per-task=N\n"
        "  --gres=LIST             --constraint=LIST     -L, --licenses=LIST\n"
        "  --comment=TEXT          -q, --qos=NAME        --reservation=NAME\n"
        "  --nice[=N]              -N, --nodes=MIN-MAX   --time-min=TIME\n"
        "  --mem=SIZE              --mem-per-cpu=SIZE    --mem-per-gpu=SIZE\n"
        "  --cpus-per-gpu=N        --gpus-per-socket=N   --begin=now+N[unit]\n"
        "  --exclusive[=user|mcs|topo]                   -o, --output=PATH\n"
        "  -e, --error=PATH        --mail-type=LIST      --mail-user=ADDR\n"
        "  -a, --array=TASKS       --setattr=KEY[=VALUE] (as with "
        "spank_jobtap.so)\n"
        "  -H, --hold (urgency 0)  --urgency=N           --uid=N\n"
        "  --id=N (job id to use)\n"
        "What Slurm fills in for a job that gives none:\n"
        "  --default-queue=NAME    --default-time=TIME\n"
        "  --print-jobspec         print each job's jobspec before submitting "
        "it\n"
        "\n"
        "Script commands, one per line (# starts a comment):\n"
        "  submit [JOB OPTIONS] [JOBSPEC.json]   run ID   finish ID [RESULT]\n"
        "  inactive ID   urgency ID N   reprioritize   reload   show ID\n");
}

void runopts_init (struct runopts *r)
{
    memset (r, 0, sizeof (*r));
}

void jobopts_init (struct jobopts *o)
{
    memset (o, 0, sizeof (*o));
    o->uid = (long)getuid ();
    o->urgency = 16;
}

void jobopts_free (struct jobopts *o)
{
    free (o->cwd);
    free (o->std_out);
    free (o->std_err);
    free (o->mail_user);
    free (o->tres_per_socket);
    free (o->cpus_per_tres);
    free (o->mem_per_tres);
    free (o->tres_per_job);
    free (o->tres_per_node);
    free (o->tres_per_task);
    json_decref (o->setattr);
}

/* Slurm time formats: MIN, MIN:SEC, H:M:S, D-H, D-H:M, D-H:M:S, in
 * seconds; 0 for unlimited, -1 if invalid. */
static long parse_seconds (const char *s)
{
    long d = 0, v[3] = {0, 0, 0};
    int n = 0;
    const char *p = s;
    char *end;

    if (!strcasecmp (s, "unlimited") || !strcasecmp (s, "infinite"))
        return 0;
    if (strchr (s, '-')) {
        d = strtol (s, &end, 10);
        if (*end != '-')
            return -1;
        p = end + 1;
    }
    while (*p && n < 3) {
        v[n++] = strtol (p, &end, 10);
        if (end == p)
            return -1;
        p = *end == ':' ? end + 1 : end;
        if (*end && *end != ':')
            return -1;
    }
    if (strchr (s, '-')) {
        /* D-H[:M[:S]] */
        return d * 86400 + v[0] * 3600 + v[1] * 60 + v[2];
    }
    if (n == 1)
        return v[0] * 60;
    if (n == 2)
        return v[0] * 60 + v[1];
    return v[0] * 3600 + v[1] * 60 + v[2];
}

/* A time limit as sbatch sends it: whole minutes rounded up, 0 for
 * unlimited (sbatch's -t 0 too).  -1 if invalid. */
static long parse_minutes (const char *s)
{
    long secs = parse_seconds (s);
    return secs < 0 ? -1 : (secs + 59) / 60;
}

/* A size as sbatch reads it (str_to_mbytes): MB, or with a K, M, G or T
 * suffix (and an optional B); -1 if invalid. */
static long long parse_mbytes (const char *s)
{
    char *end;
    long long v = strtoll (s, &end, 10);
    const char *units = "kmgt";
    const char *u;

    if (end == s || v < 0)
        return -1;
    if (*end == '\0')
        return v;
    if (!(u = strchr (units, tolower ((unsigned char)*end))) ||
        (end[1] && (tolower ((unsigned char)end[1]) != 'b' || end[2])))
        return -1;
    switch (*u) {
    case 'k':
        return (v + 1023) / 1024; /* rounded up, as sbatch */
    case 'g':
        return v * 1024;
    case 't':
        return v * 1024 * 1024;
    }
    return v;
}

/* --begin as now, now+N (seconds) or now+N with a unit (s, min, hours,
 * days, weeks, or any prefix sbatch takes): epoch seconds, -1 if
 * invalid. */
static long long parse_begin (const char *s)
{
    static const struct {
        const char *name;
        long long secs;
    } units[] = {{"seconds", 1},
                 {"minutes", 60},
                 {"hours", 3600},
                 {"days", 86400},
                 {"weeks", 604800}};
    long long now = (long long)time (NULL), n;
    char *end;

    if (strncasecmp (s, "now", 3))
        return -1;
    if (s[3] == '\0')
        return now;
    if (s[3] != '+')
        return -1;
    n = strtoll (s + 4, &end, 10);
    if (end == s + 4 || n < 0)
        return -1;
    if (*end == '\0')
        return now + n;
    for (size_t i = 0; i < sizeof (units) / sizeof (units[0]); i++)
        if (!strncasecmp (end, units[i].name, strlen (end)))
            return now + n * units[i].secs;
    return -1;
}

/* "gres:gpu:SPEC", as sbatch writes a --gpus* option into a TRES field;
 * appended after a ',' when the field has one already (--gres). */
static int add_tres (char **field, const char *prefix, const char *spec)
{
    char *s;
    if (asprintf (&s, "%s%s%s%s", *field ? *field : "", *field ? "," : "",
                  prefix, spec) < 0)
        return -1;
    free (*field);
    *field = s;
    return 0;
}

/* -D as sbatch keeps it: absolute, relative paths under the current
 * directory (which is the default). */
static int set_cwd (struct jobopts *o, const char *dir)
{
    char here[PATH_MAX];
    char *s;

    if (dir && dir[0] == '/')
        s = strdup (dir);
    else if (!getcwd (here, sizeof (here)))
        return -1;
    else if (!dir)
        s = strdup (here);
    else if (asprintf (&s, "%s/%s", here, dir) < 0)
        s = NULL;
    if (!s)
        return -1;
    free (o->cwd);
    o->cwd = s;
    return 0;
}

enum {
    OPT_WCKEY = 256,
    OPT_URGENCY,
    OPT_UID,
    OPT_ID,
    OPT_DEFQ,
    OPT_DEFTIME,
    OPT_PRINT,
    OPT_TPN,
    OPT_EXCLUSIVE,
    OPT_GPN,
    OPT_GPT,
    OPT_GRES,
    OPT_CONSTRAINT,
    OPT_COMMENT,
    OPT_RESV,
    OPT_NICE,
    OPT_SETATTR,
    OPT_TIME_MIN,
    OPT_MEM,
    OPT_MEM_PER_CPU,
    OPT_MEM_PER_GPU,
    OPT_CPUS_PER_GPU,
    OPT_GPUS_PER_SOCKET,
    OPT_BEGIN,
    OPT_MAIL_TYPE,
    OPT_MAIL_USER,
};

static const struct option longopts[] = {
    {"config", required_argument, NULL, 'C'},
    {"script", required_argument, NULL, 'f'},
    {"verbose", no_argument, NULL, 'v'},
    {"help", no_argument, NULL, 'h'},
    {"array", required_argument, NULL, 'a'},
    {"nodes", required_argument, NULL, 'N'},
    {"ntasks", required_argument, NULL, 'n'},
    {"cpus-per-task", required_argument, NULL, 'c'},
    {"ntasks-per-node", required_argument, NULL, OPT_TPN},
    {"exclusive", optional_argument, NULL, OPT_EXCLUSIVE},
    {"time", required_argument, NULL, 't'},
    {"partition", required_argument, NULL, 'p'},
    {"account", required_argument, NULL, 'A'},
    {"job-name", required_argument, NULL, 'J'},
    {"dependency", required_argument, NULL, 'd'},
    {"chdir", required_argument, NULL, 'D'},
    {"gpus", required_argument, NULL, 'G'},
    {"gpus-per-node", required_argument, NULL, OPT_GPN},
    {"gpus-per-task", required_argument, NULL, OPT_GPT},
    {"gres", required_argument, NULL, OPT_GRES},
    {"constraint", required_argument, NULL, OPT_CONSTRAINT},
    {"licenses", required_argument, NULL, 'L'},
    {"comment", required_argument, NULL, OPT_COMMENT},
    {"qos", required_argument, NULL, 'q'},
    {"reservation", required_argument, NULL, OPT_RESV},
    {"nice", optional_argument, NULL, OPT_NICE},
    {"setattr", required_argument, NULL, OPT_SETATTR},
    {"time-min", required_argument, NULL, OPT_TIME_MIN},
    {"mem", required_argument, NULL, OPT_MEM},
    {"mem-per-cpu", required_argument, NULL, OPT_MEM_PER_CPU},
    {"mem-per-gpu", required_argument, NULL, OPT_MEM_PER_GPU},
    {"cpus-per-gpu", required_argument, NULL, OPT_CPUS_PER_GPU},
    {"gpus-per-socket", required_argument, NULL, OPT_GPUS_PER_SOCKET},
    {"begin", required_argument, NULL, OPT_BEGIN},
    {"mail-type", required_argument, NULL, OPT_MAIL_TYPE},
    {"mail-user", required_argument, NULL, OPT_MAIL_USER},
    {"output", required_argument, NULL, 'o'},
    {"error", required_argument, NULL, 'e'},
    {"hold", no_argument, NULL, 'H'},
    {"wckey", required_argument, NULL, OPT_WCKEY},
    {"urgency", required_argument, NULL, OPT_URGENCY},
    {"uid", required_argument, NULL, OPT_UID},
    {"id", required_argument, NULL, OPT_ID},
    {"default-queue", required_argument, NULL, OPT_DEFQ},
    {"default-time", required_argument, NULL, OPT_DEFTIME},
    {"print-jobspec", no_argument, NULL, OPT_PRINT},
    {NULL, 0, NULL, 0},
};

/* -c is cpus-per-task as in sbatch, so the config is -C/--config. */
static const char *shortopts = "+C:f:vha:N:n:c:t:p:A:J:d:D:G:L:q:Ho:e:";

static int bad (const char *what, const char *arg)
{
    fprintf (stderr, "jobtap-run: invalid %s %s\n", what, arg);
    return -1;
}

/* A count option: a whole number in [0, max]. */
static int count (const char *arg, unsigned long max, unsigned long *v)
{
    char *end;
    *v = strtoul (arg, &end, 10);
    return end == arg || *end || *v > max ? -1 : 0;
}

/* -N MIN or MIN-MAX, as sbatch: MIN alone is MIN-MIN. */
static int node_range (struct jobspec_fields *f, const char *arg)
{
    char *end;
    unsigned long min = strtoul (arg, &end, 10), max = min;

    if (end == arg || min > UINT32_MAX - 2)
        return bad ("node count", arg);
    if (*end == '-' && end[1]) {
        char *rest = end + 1;
        max = strtoul (rest, &end, 10);
        if (end == rest || max < min || max > UINT32_MAX - 2)
            return bad ("node count", arg);
    }
    if (*end)
        return bad ("node count", arg);
    f->nodes = min;
    f->max_nodes = max;
    return 0;
}

static int set_string (char **field, const char *s)
{
    free (*field);
    return (*field = strdup (s)) ? 0 : -1;
}

/* The options of the wider map (docs/jobspec.md). */
static int parse_more (int c, struct jobopts *o)
{
    struct jobspec_fields *f = &o->f;
    long long v;
    long t;

    switch (c) {
    case OPT_TIME_MIN:
        if ((t = parse_minutes (optarg)) < 0 || t > UINT32_MAX - 2)
            return bad ("time", optarg);
        f->time_min = t;
        break;
    case OPT_MEM:
    case OPT_MEM_PER_CPU:
        if ((v = parse_mbytes (optarg)) < 0)
            return bad ("memory size", optarg);
        f->mem_per = c == OPT_MEM ? JOBSPEC_MEM_PER_NODE : JOBSPEC_MEM_PER_CPU;
        /* --mem-per-cpu=0 is --mem=0 (slurmctld) */
        if (v == 0)
            f->mem_per = JOBSPEC_MEM_PER_NODE;
        f->mem_mb = (uint64_t)v;
        break;
    case OPT_MEM_PER_GPU:
        if ((v = parse_mbytes (optarg)) < 0)
            return bad ("memory size", optarg);
        free (o->mem_per_tres);
        return asprintf (&o->mem_per_tres, "gres:gpu:%lld", v) < 0 ? -1 : 0;
    case OPT_CPUS_PER_GPU:
        return add_tres (&o->cpus_per_tres, "gres:gpu:", optarg);
    case OPT_GPUS_PER_SOCKET:
        return add_tres (&o->tres_per_socket, "gres:gpu:", optarg);
    case OPT_BEGIN:
        if ((v = parse_begin (optarg)) < 0)
            return bad ("begin time", optarg);
        f->begin_time = v;
        break;
    case OPT_MAIL_TYPE:
        if (jobspec_mail_type_parse (optarg, &f->mail_type) < 0)
            return bad ("mail type", optarg);
        break;
    case OPT_MAIL_USER:
        return set_string (&o->mail_user, optarg);
    case 'o':
        return set_string (&o->std_out, optarg);
    case 'e':
        return set_string (&o->std_err, optarg);
    default:
        jobopts_usage (stderr);
        return -1;
    }
    return 0;
}

static int parse_one (int c, struct jobopts *o, struct runopts *r)
{
    struct jobspec_fields *f = &o->f;
    unsigned long n;
    long t;

    switch (c) {
    case 'C':
        r->config = optarg;
        break;
    case 'f':
        r->script = optarg;
        break;
    case 'v':
        r->verbose++;
        break;
    case 'h':
        jobopts_usage (stdout);
        exit (0);
    case 'N':
        return node_range (f, optarg);
    case 'n':
        if (count (optarg, UINT32_MAX - 2, &n) < 0)
            return bad ("task count", optarg);
        f->ntasks = n;
        break;
    case 'c':
        if (count (optarg, UINT16_MAX - 2, &n) < 0)
            return bad ("cpus per task", optarg);
        f->cpus_per_task = n;
        break;
    case OPT_TPN:
        if (count (optarg, UINT16_MAX - 2, &n) < 0)
            return bad ("tasks per node", optarg);
        f->tasks_per_node = n;
        break;
    case OPT_EXCLUSIVE:
        /* sbatch: --exclusive is whole nodes, =user|mcs|topo the kinds */
        f->exclusive =
            !optarg ? JOBSPEC_EXCLUSIVE_NODE : jobspec_exclusive_parse (optarg);
        if (f->exclusive == JOBSPEC_SHARED)
            return bad ("exclusive", optarg);
        break;
    case 't':
        if ((t = parse_minutes (optarg)) < 0 || t > UINT32_MAX - 2)
            return bad ("time", optarg);
        f->time_limit = t;
        o->time_set = true;
        break;
    case 'p':
        f->partition = optarg;
        break;
    case 'A':
        f->account = optarg;
        break;
    case 'J':
        f->name = optarg;
        break;
    case 'd':
        f->dependency = optarg;
        break;
    case 'D':
        if (set_cwd (o, optarg) < 0)
            return bad ("directory", optarg);
        break;
    case 'G':
        return add_tres (&o->tres_per_job, "gres:gpu:", optarg);
    case OPT_GPN:
        return add_tres (&o->tres_per_node, "gres:gpu:", optarg);
    case OPT_GPT:
        return add_tres (&o->tres_per_task, "gres:gpu:", optarg);
    case OPT_GRES:
        /* --gres=none asks for none: sbatch sends nothing */
        return strcasecmp (optarg, "none")
                   ? add_tres (&o->tres_per_node, "", optarg)
                   : 0;
    case OPT_CONSTRAINT:
        f->features = optarg;
        break;
    case 'L':
        f->licenses = optarg;
        break;
    case OPT_COMMENT:
        f->comment = optarg;
        break;
    case 'q':
        f->qos = optarg;
        break;
    case 'a':
        f->array = optarg;
        break;
    case OPT_RESV:
        f->reservation = optarg;
        break;
    case OPT_NICE:
        f->nice = optarg ? (int32_t)strtol (optarg, NULL, 10) : 100;
        break;
    case OPT_SETATTR: {
        jobtap_host_error_t err;
        if (!o->setattr && !(o->setattr = json_object ()))
            return bad ("--setattr", "(out of memory)");
        if (jobspec_setattr_add (o->setattr, optarg, &err) < 0) {
            fprintf (stderr, "jobtap-run: --setattr=%s: %s\n", optarg,
                     err.text);
            return -1;
        }
        break;
    }
    case 'H':
        o->urgency = 0;
        break;
    case OPT_WCKEY:
        f->wckey = optarg;
        break;
    case OPT_URGENCY:
        o->urgency = (int)strtol (optarg, NULL, 10);
        break;
    case OPT_UID:
        o->uid = strtol (optarg, NULL, 10);
        break;
    case OPT_ID:
        o->id = strtoull (optarg, NULL, 10);
        break;
    case OPT_DEFQ:
        r->default_queue = optarg;
        break;
    case OPT_DEFTIME:
        if ((t = parse_minutes (optarg)) < 0 || t > UINT32_MAX - 2)
            return bad ("time", optarg);
        r->default_time = t;
        break;
    case OPT_PRINT:
        r->print_jobspec = true;
        break;
    default:
        return parse_more (c, o);
    }
    return 0;
}

/* A path under dir unless absolute, as sbatch's -o and -e. */
static int absolute (char **path, const char *dir)
{
    char *s;

    if (!*path || (*path)[0] == '/')
        return 0;
    if (asprintf (&s, "%s/%s", dir, *path) < 0)
        return -1;
    free (*path);
    *path = s;
    return 0;
}

int jobopts_parse (int argc, char **argv, struct jobopts *o, struct runopts *r)
{
    int c;
    optind = 0;
    while ((c = getopt_long (argc, argv, shortopts, longopts, NULL)) != -1) {
        if (parse_one (c, o, r) < 0)
            return -1;
    }
    /* sbatch sends its current directory when -D is not given */
    if (!o->cwd && set_cwd (o, NULL) < 0) {
        perror ("jobtap-run: getcwd");
        return -1;
    }
    /* and -o, -e under -D's directory when relative */
    if (absolute (&o->std_out, o->cwd) < 0 ||
        absolute (&o->std_err, o->cwd) < 0) {
        perror ("jobtap-run");
        return -1;
    }
    return optind;
}

/* The options the way slurmctld gets them: encoded in the job's SPANK
 * environment by spank_jobtap.so, merged into the jobspec by the adapter.
 * The options were checked as they were read: the merge cannot drop any. */
static int add_setattr (json_t *spec, const json_t *attrs)
{
    jobtap_host_error_t err;
    char *text = jobspec_setattr_encode (attrs, &err);
    int rc = 0;

    if (!text) {
        fprintf (stderr, "jobtap-run: --setattr: %s\n", err.text);
        return -1;
    }
    if (jobspec_setattr_merge (spec, text, &err) < 0 || err.text[0]) {
        fprintf (stderr, "jobtap-run: --setattr: %s\n", err.text);
        rc = -1;
    }
    free (text);
    return rc;
}

void jobopts_fields (const struct jobopts *o,
                     const struct runopts *r,
                     struct jobspec_fields *fp)
{
    struct jobspec_fields f = o->f;

    f.work_dir = o->cwd;
    f.tres_per_job = o->tres_per_job;
    f.tres_per_node = o->tres_per_node;
    f.tres_per_task = o->tres_per_task;
    f.tres_per_socket = o->tres_per_socket;
    f.cpus_per_tres = o->cpus_per_tres;
    f.mem_per_tres = o->mem_per_tres;
    f.std_out = o->std_out;
    f.std_err = o->std_err;
    /* slurmctld mails the job's user when no --mail-user */
    if (f.mail_type) {
        struct passwd *pw = getpwuid ((uid_t)o->uid);
        f.mail_user = o->mail_user ? o->mail_user : pw ? pw->pw_name : "nobody";
    }
    /* sbatch --wrap names the job "wrap" */
    if (!f.name)
        f.name = "wrap";
    /* what slurmctld fills in before job_submit: Flux's jobspec defaults
     * first (job_submit/jobtap applies them to the request), then the
     * partition's */
    if (!f.partition)
        f.partition = r->policy_queue ? r->policy_queue : r->default_queue;
    if (!o->time_set) {
        double d = jobtap_host_policy_default_duration (f.partition);
        f.time_limit = d < 0 ? r->default_time
                       : isinf (d) ? 0
                                   : jobspec_duration_minutes (d);
    }
    *fp = f;
}

json_t *jobopts_jobspec (const struct jobopts *o, const struct runopts *r)
{
    struct jobspec_fields f;
    jobopts_fields (o, r, &f);
    json_t *spec = jobspec_build (&f);
    if (spec && o->setattr && json_object_size (o->setattr) > 0 &&
        add_setattr (spec, o->setattr) < 0) {
        json_decref (spec);
        return NULL;
    }
    return spec;
}
