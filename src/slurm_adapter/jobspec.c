/* Slurm job <-> Flux jobspec version 1.
 *
 * Both directions go through one normalized view of a Slurm job (struct
 * job_fields), filled either from a job_desc_msg_t at submit or from a
 * job_record_t later, so the same job yields the same jobspec either way.
 * docs/jobspec.md documents the mapping. */
#include <config.h>

#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "src/common/slurm_xlator.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

#include "host.h"
#include "jobspec.h"

#define URGENCY_HOLD 0
#define URGENCY_DEFAULT 16

struct job_fields {
    uint32_t nodes;          /* 0 = unset */
    uint32_t ntasks;         /* 0 = unset */
    uint16_t cpus_per_task;  /* >= 1 */
    uint16_t tasks_per_node; /* 0 = unset */
    bool exclusive;
    uint32_t time_limit; /* minutes, INFINITE, or NO_VAL */
    const char *partition;
    const char *account;
    const char *wckey;
    const char *work_dir;
    const char *name;
    char *dependency; /* canonical form, xmalloc'd (fields_free) */
    const char *features;
    const char *comment;
    const char *qos;
    const char *reservation;
    const char *licenses;
    const char *tres_per_job;
    const char *tres_per_node;
    const char *tres_per_task;
    time_t begin_time; /* 0 = unset */
    uint32_t nice;     /* NICE_OFFSET-based; NO_VAL = unset */
    char **argv;
    uint32_t argc;
};

static bool set32 (uint32_t v)
{
    return v != NO_VAL && v != INFINITE;
}

static bool set16 (uint16_t v)
{
    return v != NO_VAL16 && v != INFINITE16;
}

/* GPUs in a TRES request string such as "gres:gpu:2" or
 * "gres:gpu:a100:1,gres:nic:1" (a bare "gres:gpu" means 1). */
static uint32_t gpus_in (const char *tres)
{
    uint32_t total = 0;
    char *copy, *save = NULL, *tok;

    if (!tres)
        return 0;
    copy = xstrdup (tres);
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
    xfree (copy);
    return total;
}

/* A dependency string in one form whether it comes from the request or
 * the record, where slurmctld rewrites it: "afterok:1:2?singleton" and
 * "afterok:1(unfulfilled),afterok:2(unfulfilled)?singleton(unfulfilled)"
 * both become "afterok:1,afterok:2?singleton". xmalloc'd, or NULL. */
static char *canonical_dependency (const char *dep)
{
    char *out = NULL, *copy, *p, *tok;

    if (!dep || !dep[0])
        return NULL;
    copy = xstrdup (dep);
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
        tok = xstrndup (p, len);
        char *colon = strchr (tok, ':');
        if (colon) {
            char *save = NULL, *id;
            *colon = '\0';
            bool first = true;
            for (id = strtok_r (colon + 1, ":", &save); id;
                 id = strtok_r (NULL, ":", &save)) {
                xstrfmtcat (out, "%s%s:%s", first ? "" : ",", tok, id);
                first = false;
            }
        } else if (tok[0])
            xstrcat (out, tok);
        xfree (tok);
        if (!sep)
            break;
        xstrfmtcat (out, "%c", sep);
        p += len + 1;
    }
    xfree (copy);
    return out;
}

/* A partition request may be a list ("a,b"): defaults come from the first. */
static part_record_t *first_partition (const char *list)
{
    char name[256];
    size_t len;

    if (!list)
        return default_part_loc;
    len = strcspn (list, ",");
    if (len >= sizeof (name))
        return NULL;
    memcpy (name, list, len);
    name[len] = '\0';
    return find_part_record (name);
}

static void fields_from_desc (const job_desc_msg_t *d, struct job_fields *f)
{
    memset (f, 0, sizeof (*f));
    f->nodes = set32 (d->min_nodes) ? d->min_nodes : 0;
    f->ntasks = set32 (d->num_tasks) ? d->num_tasks : 0;
    f->cpus_per_task = set16 (d->cpus_per_task) && d->cpus_per_task > 0
                           ? d->cpus_per_task
                           : 1;
    f->tasks_per_node = set16 (d->ntasks_per_node) ? d->ntasks_per_node : 0;
    f->exclusive = d->shared == JOB_SHARED_NONE;
    f->tres_per_job = d->tres_per_job;
    f->tres_per_node = d->tres_per_node;
    f->tres_per_task = d->tres_per_task;
    /* slurmctld fills these in when the job is created; do the same so a
     * policy sees the values the job will really get. */
    f->partition = d->partition ? d->partition : default_part_name;
    f->time_limit = d->time_limit;
    if (f->time_limit == NO_VAL) {
        part_record_t *part = first_partition (d->partition);
        if (part)
            f->time_limit = part->default_time != NO_VAL ? part->default_time
                                                         : part->max_time;
    }
    f->account = d->account;
    f->wckey = d->wckey;
    f->work_dir = d->work_dir;
    f->name = d->name;
    f->dependency = canonical_dependency (d->dependency);
    f->features = d->features;
    f->comment = d->comment;
    f->qos = d->qos;
    f->reservation = d->reservation;
    f->licenses = d->licenses;
    f->begin_time = d->begin_time;
    f->nice = d->nice;
    f->argv = d->argv;
    f->argc = d->argc;
}

static void fields_from_record (const job_record_t *j, struct job_fields *f)
{
    const struct job_details *det = j->details;

    memset (f, 0, sizeof (*f));
    f->cpus_per_task = 1;
    f->nice = NO_VAL;
    if (det) {
        /* slurmctld fills in min_nodes itself; max_nodes stays 0 unless
         * the user asked for a node count. */
        f->nodes = det->max_nodes && set32 (det->min_nodes) ? det->min_nodes
                                                           : 0;
        f->ntasks = set32 (det->num_tasks) ? det->num_tasks : 0;
        if (set16 (det->orig_cpus_per_task) && det->orig_cpus_per_task > 0)
            f->cpus_per_task = det->orig_cpus_per_task;
        f->tasks_per_node = set16 (det->ntasks_per_node)
                                ? det->ntasks_per_node
                                : 0;
        f->exclusive = det->share_res == 0 &&
                       (det->whole_node & WHOLE_NODE_REQUIRED);
        f->work_dir = det->work_dir;
        f->dependency = canonical_dependency (det->dependency);
        f->features = det->features;
        f->begin_time = det->begin_time;
        f->nice = det->nice;
        f->argv = det->argv;
        f->argc = det->argc;
    }
    f->tres_per_job = j->tres_per_job;
    f->tres_per_node = j->tres_per_node;
    f->tres_per_task = j->tres_per_task;
    f->partition = j->partition;
    f->time_limit = j->time_limit;
    f->account = j->account;
    /* A wckey Slurm filled in from the user's default is marked '*'. */
    f->wckey = j->wckey && j->wckey[0] == '*' ? NULL : j->wckey;
    f->name = j->name;
    f->comment = j->comment;
    f->qos = j->qos_ptr ? ((slurmdb_qos_rec_t *)j->qos_ptr)->name : NULL;
    f->reservation = j->resv_name;
    f->licenses = j->licenses;
}

static json_t *lowercase_string (const char *s)
{
    char *copy = xstrdup (s);
    for (char *p = copy; *p; p++)
        *p = tolower ((unsigned char)*p);
    json_t *o = json_string (copy);
    xfree (copy);
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

    if (!a || !dep)
        return a;
    copy = xstrdup (dep);
    for (tok = strtok_r (copy, ",?", &save); tok;
         tok = strtok_r (NULL, ",?", &save)) {
        char *colon = strchr (tok, ':');
        const char *scheme = tok;
        if (!colon) {
            if (!strcmp (tok, "singleton"))
                json_array_append_new (a, json_pack ("{s:s s:s}", "scheme",
                                                     "singleton", "value",
                                                     ""));
            else if (isdigit ((unsigned char)tok[0]))
                json_array_append_new (a, json_pack ("{s:s s:s}", "scheme",
                                                     "afterany", "value",
                                                     tok));
            continue;
        }
        *colon = '\0';
        if (strcmp (scheme, "after") && strcmp (scheme, "afterany") &&
            strcmp (scheme, "afterok") && strcmp (scheme, "afternotok"))
            continue;
        char *isave = NULL;
        for (char *id = strtok_r (colon + 1, ":", &isave); id;
             id = strtok_r (NULL, ":", &isave))
            json_array_append_new (a, json_pack ("{s:s s:s}", "scheme",
                                                 scheme, "value", id));
    }
    xfree (copy);
    return a;
}

/* "a&b&c" as RFC 31 {"properties": [a, b, c]}; anything richer (|, [],
 * counts) has no simple form and stays in attributes.system.slurm. */
static json_t *constraints (const char *features)
{
    if (!features || strpbrk (features, "|[]*()!"))
        return NULL;
    json_t *props = json_array ();
    char *copy = xstrdup (features), *save = NULL, *tok;
    for (tok = strtok_r (copy, "&,", &save); tok;
         tok = strtok_r (NULL, "&,", &save))
        json_array_append_new (props, json_string (tok));
    xfree (copy);
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
                            : k->ntasks       ? (k->ntasks + k->nodes - 1) /
                                              k->nodes
                                              : 1;
        uint32_t total = k->ntasks ? k->ntasks : k->nodes * per_node;
        /* GPUs requested per node are spread over its slots when they
         * divide evenly, as Flux's nested form would. */
        if (!gpus_per_slot && k->node_gpus)
            gpus_per_slot = k->node_gpus % per_node == 0
                                ? k->node_gpus / per_node
                                : 0;
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
} last_shape = { .lock = PTHREAD_MUTEX_INITIALIZER };

static json_t *resources (const struct job_fields *f, json_t **countp)
{
    struct shape key;
    json_t *res = NULL;

    memset (&key, 0, sizeof (key)); /* padding too: compared with memcmp */
    key.nodes = f->nodes;
    key.ntasks = f->ntasks;
    key.gpus_per_slot = gpus_in (f->tres_per_task);
    key.node_gpus = gpus_in (f->tres_per_node);
    key.cpus_per_task = f->cpus_per_task;
    key.tasks_per_node = f->tasks_per_node;
    key.exclusive = f->exclusive;

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

static json_t *command (const struct job_fields *f)
{
    json_t *cmd = json_array ();
    for (uint32_t i = 0; f->argv && i < f->argc && f->argv[i]; i++)
        json_array_append_new (cmd, json_string (f->argv[i]));
    if (json_array_size (cmd) == 0)
        json_array_append_new (cmd, json_string (f->name ? f->name : "job"));
    return cmd;
}

static json_t *build (const struct job_fields *f)
{
    json_t *count = NULL;
    json_t *res = resources (f, &count);
    json_t *system = json_object ();
    json_t *slurm = json_object ();
    json_t *deps, *cons;
    double duration = 0.;

    if (set32 (f->time_limit))
        duration = f->time_limit * 60.;
    json_object_set_new (system, "duration", json_real (duration));
    set_str (system, "queue", f->partition);
    if (f->account && f->account[0])
        json_object_set_new (system, "bank", lowercase_string (f->account));
    if (f->wckey && f->wckey[0])
        json_object_set_new (system, "project", lowercase_string (f->wckey));
    set_str (system, "cwd", f->work_dir);
    if (f->name && f->name[0])
        set (system, "job", set (json_object (), "name", json_string (f->name)));
    deps = dependencies (f->dependency);
    if (json_array_size (deps) > 0)
        json_object_set_new (system, "dependencies", deps);
    else
        json_decref (deps);
    if ((cons = constraints (f->features)))
        json_object_set_new (system, "constraints", cons);

    /* What has no Flux name, under attributes.system.slurm. */
    set_str (slurm, "dependency", f->dependency);
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
    if (f->nice != NO_VAL && f->nice != NICE_OFFSET)
        json_object_set_new (slurm, "nice",
                             json_integer ((json_int_t)f->nice -
                                           (json_int_t)NICE_OFFSET));
    if (json_object_size (slurm) > 0)
        json_object_set_new (system, "slurm", slurm);
    else
        json_decref (slurm);

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

/* At submit, build() only makes a tree: its blocks may come from the
 * runtime's pool.  Not for records: a restart replays every job at once,
 * and the pool would keep that peak for good. */
json_t *jobspec_from_desc (const job_desc_msg_t *desc)
{
    struct job_fields f;
    fields_from_desc (desc, &f);
    jobtap_host_json_pool_begin ();
    json_t *spec = build (&f);
    jobtap_host_json_pool_end ();
    xfree (f.dependency);
    return spec;
}

json_t *jobspec_from_record (const job_record_t *job)
{
    struct job_fields f;
    fields_from_record (job, &f);
    json_t *spec = build (&f);
    xfree (f.dependency);
    return spec;
}

int jobspec_urgency_from_desc (const job_desc_msg_t *desc)
{
    return desc->priority == 0 ? URGENCY_HOLD : URGENCY_DEFAULT;
}

int jobspec_urgency_from_record (const job_record_t *job)
{
    return job->priority == 0 && job->state_reason == WAIT_HELD_USER
               ? URGENCY_HOLD
               : URGENCY_DEFAULT;
}

/* The job_desc field behind each jobspec key, both ways: a job_modify
 * request becomes these keys, and updates to them are applied back. */
enum field_kind {
    F_DURATION,    /* time_limit */
    F_STRING,      /* a char * field */
    F_LOWER,       /* a char * field slurmctld lowercases */
    F_CONSTRAINTS, /* features, from RFC 31 {properties}: apply only */
};
struct update_map {
    const char *key;
    enum field_kind kind;
    size_t offset; /* of the char * in job_desc_msg_t */
};

static const struct update_map update_map[] = {
    {"attributes.system.duration", F_DURATION, 0},
    {"attributes.system.queue", F_STRING,
     offsetof (job_desc_msg_t, partition)},
    {"attributes.system.bank", F_LOWER, offsetof (job_desc_msg_t, account)},
    {"attributes.system.project", F_LOWER, offsetof (job_desc_msg_t, wckey)},
    {"attributes.system.job.name", F_STRING, offsetof (job_desc_msg_t, name)},
    {"attributes.system.cwd", F_STRING, offsetof (job_desc_msg_t, work_dir)},
    {"attributes.system.constraints", F_CONSTRAINTS,
     offsetof (job_desc_msg_t, features)},
    {"attributes.system.slurm.comment", F_STRING,
     offsetof (job_desc_msg_t, comment)},
    {"attributes.system.slurm.features", F_STRING,
     offsetof (job_desc_msg_t, features)},
    {"attributes.system.slurm.dependency", F_STRING,
     offsetof (job_desc_msg_t, dependency)},
    {"attributes.system.slurm.qos", F_STRING, offsetof (job_desc_msg_t, qos)},
    {"attributes.system.slurm.reservation", F_STRING,
     offsetof (job_desc_msg_t, reservation)},
};
#define UPDATE_MAP_SIZE (sizeof (update_map) / sizeof (update_map[0]))

json_t *jobspec_updates_from_desc (const job_desc_msg_t *d)
{
    json_t *u = json_object ();

    for (size_t i = 0; i < UPDATE_MAP_SIZE; i++) {
        const struct update_map *m = &update_map[i];
        if (m->kind == F_DURATION) {
            if (d->time_limit != NO_VAL)
                json_object_set_new (u, m->key,
                                     json_real (d->time_limit == INFINITE
                                                    ? 0.
                                                    : d->time_limit * 60.));
        } else if (m->kind != F_CONSTRAINTS) {
            const char *v = *(char *const *)((const char *)d + m->offset);
            if (v)
                json_object_set_new (u, m->key,
                                     m->kind == F_LOWER
                                         ? lowercase_string (v)
                                         : json_string (v));
        }
    }
    return u;
}

static const struct update_map *lookup_update (const char *key)
{
    for (size_t i = 0; i < UPDATE_MAP_SIZE; i++)
        if (!strcmp (update_map[i].key, key))
            return &update_map[i];
    return NULL;
}

/* "a&b" from {"properties": ["a", "b"]}, or NULL if not that shape. */
static char *features_from_constraints (json_t *c)
{
    json_t *props = json_object_get (c, "properties");
    char *s = NULL;
    size_t i;
    json_t *v;

    if (!json_is_array (props) || json_object_size (c) != 1)
        return NULL;
    json_array_foreach (props, i, v)
    {
        if (!json_is_string (v)) {
            xfree (s);
            return NULL;
        }
        xstrfmtcat (s, "%s%s", i ? "&" : "", json_string_value (v));
    }
    return s ? s : xstrdup ("");
}

/* Expand a nested update such as {"attributes.system.job": {"name": x}}
 * into the dotted keys we map ("attributes.system.job.name"). */
static void flatten (json_t *out, const char *prefix, json_t *v)
{
    if (json_is_object (v) && !lookup_update (prefix)) {
        const char *k;
        json_t *child;
        json_object_foreach (v, k, child)
        {
            char *key = xstrdup_printf ("%s.%s", prefix, k);
            flatten (out, key, child);
            xfree (key);
        }
    } else
        json_object_set (out, prefix, v);
}

int jobspec_apply_updates (job_desc_msg_t *desc, json_t *updates,
                           char **errmsg)
{
    json_t *flat = json_object ();
    const char *key;
    json_t *v;
    int rc = -1;

    json_object_foreach (updates, key, v) flatten (flat, key, v);

    /* Check everything first so a bad key leaves the job untouched. */
    json_object_foreach (flat, key, v)
    {
        const struct update_map *m = lookup_update (key);
        bool ok;
        if (!m) {
            *errmsg = xstrdup_printf ("jobtap: jobspec update of %s has no "
                                      "Slurm equivalent",
                                      key);
            goto out;
        }
        if (m->kind == F_DURATION)
            ok = json_is_number (v) && json_number_value (v) >= 0;
        else if (m->kind == F_CONSTRAINTS) {
            char *s = features_from_constraints (v);
            ok = s != NULL;
            xfree (s);
        } else
            ok = json_is_string (v);
        if (!ok) {
            char *val = json_dumps (v, JSON_ENCODE_ANY | JSON_COMPACT);
            *errmsg = xstrdup_printf ("jobtap: jobspec update of %s: "
                                      "invalid value %s",
                                      key, val ? val : "?");
            free (val);
            goto out;
        }
    }
    json_object_foreach (flat, key, v)
    {
        const struct update_map *m = lookup_update (key);
        if (m->kind == F_DURATION) {
            double d = json_number_value (v);
            /* Slurm counts whole minutes; never round a limit down to 0,
             * which would mean "unlimited". */
            desc->time_limit = d == 0 ? INFINITE
                                      : (uint32_t)MAX (1, ceil (d / 60.));
        } else {
            char **field = (char **)((char *)desc + m->offset);
            xfree (*field);
            *field = m->kind == F_CONSTRAINTS
                         ? features_from_constraints (v)
                         : xstrdup (json_string_value (v));
        }
    }
    rc = 0;
out:
    json_decref (flat);
    return rc;
}
