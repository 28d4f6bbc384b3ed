/* jobspec_build: a job's fields -> Flux jobspec version 1.
 *
 * Slurm-free: slurmctld (through src/slurm_adapter/jobspec.c) and
 * jobtap-run fill struct jobspec_fields their own way and build here, so
 * both give the same job the same jobspec.  docs/jobspec.md documents the
 * mapping. */
#include <ctype.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobspec_build.h"
#include "jobspec_mail.h"

/* GPUs in a TRES request string such as "gres:gpu:2" or
 * "gres:gpu:a100:1,gres:nic:1" (a bare "gres:gpu" means 1). */
static uint32_t gpus_in (const char *tres)
{
    uint32_t total = 0;
    char *copy, *save = NULL, *tok;

    if (!tres || !(copy = strdup (tres)))
        return 0;
    for (tok = strtok_r (copy, ",", &save); tok;
         tok = strtok_r (NULL, ",", &save)) {
        if (!strncmp (tok, "gres:", 5))
            tok += 5;
        else if (!strncmp (tok, "gres/", 5))
            tok += 5;
        if (strncmp (tok, "gpu", 3) || (tok[3] != ':' && tok[3] != '\0'))
            continue;
        char *last = strrchr (tok, ':');
        char *end;
        unsigned long n = last ? strtoul (last + 1, &end, 10) : 1;
        if (last && (*end != '\0' || end == last + 1))
            n = 1; /* "gpu:type" with no count */
        total += n;
    }
    free (copy);
    return total;
}

/* A dependency string in one form whether it comes from the request or
 * the record, where slurmctld rewrites it: "afterok:1:2?singleton" and
 * "afterok:1(unfulfilled),afterok:2(unfulfilled)?singleton(unfulfilled)"
 * both become "afterok:1,afterok:2?singleton". malloc'd, or NULL. */
static char *canonical_dependency (const char *dep)
{
    char *copy, *p, *out = NULL;
    size_t outlen = 0;
    FILE *f;

    if (!dep || !dep[0] || !(copy = strdup (dep)))
        return NULL;
    if (!(f = open_memstream (&out, &outlen))) {
        free (copy);
        return NULL;
    }
    /* drop the "(state)" notes slurmctld appends */
    for (p = copy; (p = strchr (p, '('));) {
        char *end = strchr (p, ')');
        if (!end)
            break;
        memmove (p, end + 1, strlen (end + 1) + 1);
    }
    p = copy;
    while (*p) {
        size_t len = strcspn (p, ",?");
        char sep = p[len];
        p[len] = '\0';
        char *colon = strchr (p, ':');
        if (colon) {
            char *save = NULL, *id;
            bool first = true;
            *colon = '\0';
            for (id = strtok_r (colon + 1, ":", &save); id;
                 id = strtok_r (NULL, ":", &save)) {
                fprintf (f, "%s%s:%s", first ? "" : ",", p, id);
                first = false;
            }
        } else
            fputs (p, f);
        if (!sep)
            break;
        fputc (sep, f);
        p += len + 1;
    }
    free (copy);
    if (fclose (f) != 0 || outlen == 0) {
        free (out);
        return NULL;
    }
    return out;
}

json_t *jobspec_lowercase (const char *s)
{
    char *copy = strdup (s);
    if (!copy)
        return NULL;
    for (char *p = copy; *p; p++)
        *p = tolower ((unsigned char)*p);
    json_t *o = json_string (copy);
    free (copy);
    return o;
}

/* Slurm's dependency string as RFC 26 entries: "afterok:1:2,singleton"
 * becomes [{afterok,1},{afterok,2},{singleton,""}]. A bare id means
 * afterany. Schemes with no jobtap meaning are left to the raw string in
 * attributes.system.slurm.dependency, which Slurm enforces anyway. */
static json_t *dependencies (const char *dep)
{
    json_t *a = json_array ();
    char *copy, *save = NULL, *tok;

    if (!a || !dep || !(copy = strdup (dep)))
        return a;
    for (tok = strtok_r (copy, ",?", &save); tok;
         tok = strtok_r (NULL, ",?", &save)) {
        char *colon = strchr (tok, ':');
        const char *scheme = tok;
        if (!colon) {
            if (!strcmp (tok, "singleton"))
                json_array_append_new (a, json_pack ("{s:s s:s}", "scheme",
                                                     "singleton", "value", ""));
            else if (isdigit ((unsigned char)tok[0]))
                json_array_append_new (a, json_pack ("{s:s s:s}", "scheme",
                                                     "afterany", "value", tok));
            continue;
        }
        *colon = '\0';
        if (strcmp (scheme, "after") && strcmp (scheme, "afterany") &&
            strcmp (scheme, "afterok") && strcmp (scheme, "afternotok"))
            continue;
        char *isave = NULL;
        for (char *id = strtok_r (colon + 1, ":", &isave); id;
             id = strtok_r (NULL, ":", &isave))
            json_array_append_new (
                a, json_pack ("{s:s s:s}", "scheme", scheme, "value", id));
    }
    free (copy);
    return a;
}

/* "a&b&c" as RFC 31 {"properties": [a, b, c]}; anything richer (|, [],
 * counts) has no simple form and stays in attributes.system.slurm. */
static json_t *constraints (const char *features)
{
    char *copy, *save = NULL, *tok;

    if (!features || strpbrk (features, "|[]*()!") ||
        !(copy = strdup (features)))
        return NULL;
    json_t *props = json_array ();
    for (tok = strtok_r (copy, "&,", &save); tok;
         tok = strtok_r (NULL, "&,", &save))
        json_array_append_new (props, json_string (tok));
    free (copy);
    return json_pack ("{s:o}", "properties", props);
}

/* Keys here are our literals (no UTF-8 check); values are the user's. */
static void set_str (json_t *o, const char *key, const char *s)
{
    if (s && s[0])
        json_object_set_new_nocheck (o, key, json_string (s));
}

/* The jobspec is built once per submission inside slurmctld's locks, so
 * objects are put together directly rather than through pack formats.
 * set() takes the literal keys below (no UTF-8 check needed) and steals
 * v; json_object_set_new_nocheck ignores a NULL object or value. */
static json_t *set (json_t *o, const char *key, json_t *v)
{
    json_object_set_new_nocheck (o, key, v);
    return o;
}

static json_t *append (json_t *a, json_t *v)
{
    json_array_append_new (a, v);
    return a;
}

/* {type, count} */
static json_t *typed_count (const char *type, json_int_t count)
{
    return set (set (json_object (), "type", json_string_nocheck (type)),
                "count", json_integer (count));
}

/* {type: slot, count, label: task, with: [core[, gpu]]} */
static json_t *slot_of (uint32_t count, uint16_t cores, uint32_t gpus)
{
    json_t *with = append (json_array (), typed_count ("core", cores));
    if (gpus)
        append (with, typed_count ("gpu", gpus));
    return set (set (typed_count ("slot", count), "label",
                     json_string_nocheck ("task")),
                "with", with);
}

/* What a job's resources and task count depend on. */
struct shape {
    uint32_t nodes, ntasks, gpus_per_slot, node_gpus;
    uint16_t cpus_per_task, tasks_per_node;
    bool exclusive;
};

static json_t *resources_build (const struct shape *k, json_t **countp)
{
    uint32_t gpus_per_slot = k->gpus_per_slot;
    json_t *res;

    if (k->nodes > 0) {
        uint32_t per_node = k->tasks_per_node ? k->tasks_per_node
                            : k->ntasks ? (k->ntasks + k->nodes - 1) / k->nodes
                                        : 1;
        uint32_t total = k->ntasks ? k->ntasks : k->nodes * per_node;
        /* GPUs requested per node are spread over its slots when they
         * divide evenly, as Flux's nested form would. */
        if (!gpus_per_slot && k->node_gpus)
            gpus_per_slot =
                k->node_gpus % per_node == 0 ? k->node_gpus / per_node : 0;
        res = set (typed_count ("node", k->nodes), "with",
                   append (json_array (), slot_of (per_node, k->cpus_per_task,
                                                   gpus_per_slot)));
        if (k->exclusive)
            set (res, "exclusive", json_true ());
        *countp = total == k->nodes * per_node
                      ? set (json_object (), "per_slot", json_integer (1))
                      : set (json_object (), "total", json_integer (total));
    } else {
        res = slot_of (k->ntasks ? k->ntasks : 1, k->cpus_per_task,
                       gpus_per_slot);
        *countp = set (json_object (), "per_slot", json_integer (1));
    }
    return append (json_array (), res);
}

/* Most jobs of a site ask for one of a few shapes, so the last resources
 * tree and task count built are reused for a job of the same shape:
 * shared, not copied (a third of a jobspec's objects).  The runtime
 * changes a jobspec object in place only when nobody else holds it
 * (updates copy shared objects on their path), so jobs can share
 * subtrees; jansson's reference counts are atomic. */
static struct {
    pthread_mutex_t lock;
    struct shape key;
    json_t *res, *count;
} last_shape = {.lock = PTHREAD_MUTEX_INITIALIZER};

static json_t *resources (const struct jobspec_fields *f, json_t **countp)
{
    struct shape key;
    json_t *res = NULL;

    memset (&key, 0, sizeof (key)); /* padding too: compared with memcmp */
    key.nodes = f->nodes;
    key.ntasks = f->ntasks;
    key.gpus_per_slot = gpus_in (f->tres_per_task);
    key.node_gpus = gpus_in (f->tres_per_node);
    key.cpus_per_task = f->cpus_per_task ? f->cpus_per_task : 1;
    key.tasks_per_node = f->tasks_per_node;
    key.exclusive = f->exclusive == JOBSPEC_EXCLUSIVE_NODE;

    pthread_mutex_lock (&last_shape.lock);
    if (last_shape.res && !memcmp (&last_shape.key, &key, sizeof (key))) {
        res = json_incref (last_shape.res);
        *countp = json_incref (last_shape.count);
    }
    pthread_mutex_unlock (&last_shape.lock);
    if (res)
        return res;
    res = resources_build (&key, countp);
    pthread_mutex_lock (&last_shape.lock);
    json_decref (last_shape.res);
    json_decref (last_shape.count);
    last_shape.key = key;
    last_shape.res = json_incref (res);
    last_shape.count = json_incref (*countp);
    pthread_mutex_unlock (&last_shape.lock);
    return res;
}

static json_t *command (const struct jobspec_fields *f)
{
    json_t *cmd = json_array ();
    for (uint32_t i = 0; f->argv && i < f->argc && f->argv[i]; i++)
        json_array_append_new (cmd, json_string (f->argv[i]));
    if (json_array_size (cmd) == 0)
        json_array_append_new (cmd, json_string (f->name ? f->name : "job"));
    return cmd;
}

const char *jobspec_exclusive_name (enum jobspec_exclusive e)
{
    switch (e) {
    case JOBSPEC_EXCLUSIVE_NODE:
        return "node";
    case JOBSPEC_EXCLUSIVE_USER:
        return "user";
    case JOBSPEC_EXCLUSIVE_MCS:
        return "mcs";
    case JOBSPEC_EXCLUSIVE_TOPO:
        return "topo";
    case JOBSPEC_SHARED:
        break;
    }
    return NULL;
}

/* The rarer requests, apart so that a typical job pays one test for
 * them all. */
static void slurm_rare (json_t *slurm, const struct jobspec_fields *f)
{
    char mail[128];

    set_str (slurm, "admin_comment", f->admin_comment);
    set_str (slurm, "tres_per_socket", f->tres_per_socket);
    set_str (slurm, "cpus_per_tres", f->cpus_per_tres);
    set_str (slurm, "mem_per_tres", f->mem_per_tres);
    if (f->mem_per != JOBSPEC_MEM_UNSET)
        set (slurm,
             f->mem_per == JOBSPEC_MEM_PER_CPU ? "mem_per_cpu" : "mem_per_node",
             json_integer ((json_int_t)f->mem_mb));
    if (f->max_nodes > f->nodes)
        set (slurm, "max_nodes", json_integer (f->max_nodes));
    if (f->time_min > 0)
        set (slurm, "time_min", json_real (f->time_min * 60.));
    if (f->exclusive != JOBSPEC_SHARED)
        set (slurm, "exclusive",
             json_string_nocheck (jobspec_exclusive_name (f->exclusive)));
    if (f->mail_type != 0) {
        set (slurm, "mail_type",
             json_string_nocheck (
                 jobspec_mail_type_text (f->mail_type, mail, sizeof (mail))));
        set_str (slurm, "mail_user", f->mail_user);
    }
    set_str (slurm, "array", f->array);
    if (f->array_job_id != 0) {
        set (slurm, "array_job_id", json_integer (f->array_job_id));
        set (slurm, "array_task_id", json_integer (f->array_task_id));
    }
}

/* Whether any of slurm_rare's fields is set. */
static bool has_rare (const struct jobspec_fields *f)
{
    /* one test of them all ORed, not a branch each */
    return ((uintptr_t)f->admin_comment | (uintptr_t)f->tres_per_socket |
            (uintptr_t)f->cpus_per_tres | (uintptr_t)f->mem_per_tres |
            (uintptr_t)f->array | f->array_job_id | f->mem_per | f->time_min |
            f->exclusive | f->mail_type) != 0 ||
           f->max_nodes > f->nodes;
}

/* attributes.system.slurm: what has no Flux name. */
static void slurm_extras (json_t *system,
                          const struct jobspec_fields *f,
                          const char *dependency)
{
    json_t *slurm = json_object ();

    set_str (slurm, "dependency", dependency);
    set_str (slurm, "features", f->features);
    set_str (slurm, "comment", f->comment);
    set_str (slurm, "qos", f->qos);
    set_str (slurm, "reservation", f->reservation);
    set_str (slurm, "licenses", f->licenses);
    set_str (slurm, "tres_per_job", f->tres_per_job);
    set_str (slurm, "tres_per_node", f->tres_per_node);
    set_str (slurm, "tres_per_task", f->tres_per_task);
    if (f->begin_time > 0)
        json_object_set_new (slurm, "begin_time",
                             json_integer ((json_int_t)f->begin_time));
    if (f->nice != 0)
        json_object_set_new (slurm, "nice", json_integer (f->nice));
    if (has_rare (f))
        slurm_rare (slurm, f);
    if (json_object_size (slurm) > 0)
        json_object_set_new (system, "slurm", slurm);
    else
        json_decref (slurm);
}

/* {type: file, path}, as flux submit --output/--error writes it. */
static json_t *output_file (const char *path)
{
    return set (set (json_object (), "type", json_string_nocheck ("file")),
                "path", json_string (path));
}

/* -o/-e as Flux's shell output options (paths as given: Slurm expands
 * its %j patterns, not Flux's {{id}}). */
static void output (json_t *system, const struct jobspec_fields *f)
{
    json_t *out = json_object ();

    if (f->std_out && f->std_out[0])
        set (out, "stdout", output_file (f->std_out));
    if (f->std_err && f->std_err[0])
        set (out, "stderr", output_file (f->std_err));
    if (json_object_size (out) == 0) {
        json_decref (out);
        return;
    }
    set (system, "shell",
         set (json_object (), "options", set (json_object (), "output", out)));
}

/* A field's text as a JSON string (NULL if it is not UTF-8): ASCII, the
 * usual, spared jansson's byte-by-byte check (readers ask for these on
 * every submission). */
static json_t *field_string (const char *s)
{
    return jobspec_text_as_is (s, false) ? json_string_nocheck (s)
                                         : json_string (s);
}

/* attributes.system's members made of one field each: what the build
 * puts there, or NULL for nothing.  jobspec_system_member answers a
 * reader from the same functions, so the two cannot differ. */
static json_t *sys_duration (const struct jobspec_fields *f)
{
    return json_real (jobspec_duration (f->time_limit));
}

static json_t *sys_queue (const struct jobspec_fields *f)
{
    return f->partition && f->partition[0] ? field_string (f->partition)
                                           : NULL;
}

static json_t *sys_bank (const struct jobspec_fields *f)
{
    return f->account && f->account[0] ? jobspec_lowercase (f->account) : NULL;
}

static json_t *sys_project (const struct jobspec_fields *f)
{
    return f->wckey && f->wckey[0] ? jobspec_lowercase (f->wckey) : NULL;
}

static json_t *sys_cwd (const struct jobspec_fields *f)
{
    return f->work_dir && f->work_dir[0] ? field_string (f->work_dir) : NULL;
}

static const struct {
    const char *key;
    json_t *(*make) (const struct jobspec_fields *f);
    /* made of a text field (at 'field'), lowercased when 'lower' */
    bool text;
    size_t field;
    bool lower;
} system_scalars[] = {
    {"duration", sys_duration, false, 0, false},
    {"queue", sys_queue, true, offsetof (struct jobspec_fields, partition),
     false},
    {"bank", sys_bank, true, offsetof (struct jobspec_fields, account), true},
    {"project", sys_project, true, offsetof (struct jobspec_fields, wckey),
     true},
    {"cwd", sys_cwd, true, offsetof (struct jobspec_fields, work_dir), false},
};
#define NSYSTEM_SCALARS (sizeof (system_scalars) / sizeof (system_scalars[0]))

bool jobspec_text_as_is (const char *s, bool lower)
{
    for (; *s; s++) {
        if ((unsigned char)*s >= 0x80 || (lower && *s >= 'A' && *s <= 'Z'))
            return false;
    }
    return true;
}

/* system_scalars[i] told without JSON: false when it must be made (or is
 * absent, which the make says). */
static bool system_scalar (const struct jobspec_fields *f,
                           size_t i,
                           struct jobspec_scalar *scalar)
{
    if (!system_scalars[i].text) { /* duration, as sys_duration makes it */
        *scalar = (struct jobspec_scalar){.type = JSON_REAL,
                                          .real = jobspec_duration (
                                              f->time_limit)};
        return true;
    }
    const char *s =
        *(const char *const *)((const char *)f + system_scalars[i].field);
    if (!s || !s[0] || !jobspec_text_as_is (s, system_scalars[i].lower))
        return false;
    *scalar = (struct jobspec_scalar){.type = JSON_STRING, .string = s};
    return true;
}

/* The other members the build may put in attributes.system. */
static const char *const system_others[] = {
    "job", "dependencies", "constraints", "slurm", "shell",
};

enum jobspec_member jobspec_system_member (const struct jobspec_fields *f,
                                           const char *key,
                                           json_t **value,
                                           struct jobspec_scalar *scalar)
{
    *value = NULL;
    for (size_t i = 0; i < NSYSTEM_SCALARS; i++) {
        if (!strcmp (key, system_scalars[i].key)) {
            if (scalar && system_scalar (f, i, scalar))
                return JOBSPEC_MEMBER_SCALAR;
            *value = system_scalars[i].make (f);
            return *value ? JOBSPEC_MEMBER_VALUE : JOBSPEC_MEMBER_ABSENT;
        }
    }
    if (!strcmp (key, "job")) /* {name} */
        return f->name && f->name[0] ? JOBSPEC_MEMBER_OBJECT
                                     : JOBSPEC_MEMBER_ABSENT;
    if (!strcmp (key, "dependencies") && (!f->dependency || !f->dependency[0]))
        return JOBSPEC_MEMBER_ABSENT;
    for (size_t i = 0; i < sizeof (system_others) / sizeof (*system_others);
         i++) {
        if (!strcmp (key, system_others[i]))
            return JOBSPEC_MEMBER_UNKNOWN;
    }
    return JOBSPEC_MEMBER_ABSENT;
}

json_t *jobspec_build (const struct jobspec_fields *f)
{
    json_t *count = NULL;
    json_t *res = resources (f, &count);
    json_t *system = json_object ();
    json_t *deps, *cons;
    char *dependency = canonical_dependency (f->dependency);

    for (size_t i = 0; i < NSYSTEM_SCALARS; i++)
        set (system, system_scalars[i].key, system_scalars[i].make (f));
    if (f->name && f->name[0])
        set (system, "job",
             set (json_object (), "name", json_string (f->name)));
    deps = dependencies (dependency);
    if (json_array_size (deps) > 0)
        json_object_set_new (system, "dependencies", deps);
    else
        json_decref (deps);
    if ((cons = constraints (f->features)))
        json_object_set_new (system, "constraints", cons);
    slurm_extras (system, f, dependency);
    if (f->std_out || f->std_err)
        output (system, f);
    free (dependency);

    json_t *task = set (set (set (json_object (), "command", command (f)),
                             "slot", json_string_nocheck ("task")),
                        "count", count);
    json_t *spec = json_object ();
    set (spec, "version", json_integer (1));
    set (spec, "resources", res);
    set (spec, "tasks", append (json_array (), task));
    set (spec, "attributes", set (json_object (), "system", system));
    return spec;
}
