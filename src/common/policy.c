/* Flux's [policy] and [queues] tables: see policy.h.  The checks and
 * their messages follow flux-core's conf_policy_validate (RFC 33),
 * including where it names a table: a bad job-size.min is reported in
 * "[policy.limits.min]", as Flux does. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsd.h"
#include "host_error.h"
#include "log.h"
#include "policy.h"

struct policy_queue {
    char *name;
    struct policy_limits limits; /* its own over its parent's; UNSET: none */
    double default_duration;     /* likewise */
};

struct policy {
    struct policy_limits general;
    double default_duration;
    char *default_queue;
    struct policy_queue *queues;
    size_t nqueues;
    char **unapplied; /* NULL-terminated */
    size_t nunapplied;
};

/* An error about table 'table' (copied to where). Returns -1. */
static int fail (char *where,
                 size_t where_len,
                 const char *table,
                 jobtap_host_error_t *err,
                 const char *fmt,
                 ...) __attribute__ ((format (printf, 5, 6)));

static int fail (char *where,
                 size_t where_len,
                 const char *table,
                 jobtap_host_error_t *err,
                 const char *fmt,
                 ...)
{
    char msg[sizeof (err->text)];
    va_list ap;

    va_start (ap, fmt);
    vsnprintf (msg, sizeof (msg), fmt, ap);
    va_end (ap);
    if (where && where_len)
        snprintf (where, where_len, "%s", table);
    errprintf (err, "%s", msg);
    errno = EINVAL;
    return -1;
}

/* Where the checks report: the table named in the message, for jobtap_conf.c's
 * line lookup. */
struct check {
    char *where;
    size_t where_len;
    jobtap_host_error_t *err;
};

static void limits_clear (struct policy_limits *l)
{
    l->duration = POLICY_DURATION_UNSET;
    l->max.nnodes = l->max.ncores = l->max.ngpus = POLICY_SIZE_UNSET;
    l->min = l->max;
}

static void size_over (struct policy_size *s, const struct policy_size *o)
{
    if (o->nnodes != POLICY_SIZE_UNSET)
        s->nnodes = o->nnodes;
    if (o->ncores != POLICY_SIZE_UNSET)
        s->ncores = o->ncores;
    if (o->ngpus != POLICY_SIZE_UNSET)
        s->ngpus = o->ngpus;
}

/* l's values overlaid by o's set ones. */
static void limits_over (struct policy_limits *l, const struct policy_limits *o)
{
    if (o->duration != POLICY_DURATION_UNSET)
        l->duration = o->duration;
    size_over (&l->max, &o->max);
    size_over (&l->min, &o->min);
}

static bool is_string_array (json_t *o, const char *banned)
{
    size_t i;
    json_t *v;

    if (!json_is_array (o))
        return false;
    json_array_foreach (o, i, v)
    {
        if (!json_is_string (v)
            || (banned && strpbrk (json_string_value (v), banned)))
            return false;
    }
    return true;
}

static int duration_of (json_t *v, double *d)
{
    return json_is_string (v) ? fsd_parse (json_string_value (v), d) : -1;
}

static int read_size (json_t *o,
                      const char *key,
                      const char *which,
                      struct policy_size *s,
                      struct check *c)
{
    char table[512], line_table[512];
    json_error_t je;

    snprintf (table, sizeof (table), "%.400s.%s", key, which);
    snprintf (line_table, sizeof (line_table), "%.400s.job-size.%s", key,
              which);
    /* absent keys read as -1 for the check, and stay unset in s */
    struct policy_size given = {-1, -1, -1};
    if (json_unpack_ex (o, &je, 0, "{s?i s?i s?i !}", "nnodes", &given.nnodes,
                        "ncores", &given.ncores, "ngpus", &given.ngpus)
        < 0)
        return fail (c->where, c->where_len, line_table, c->err,
                     "error parsing [%s] config table: %s", table, je.text);
    if (given.nnodes < -1 || given.ncores < -1 || given.ngpus < -1)
        return fail (c->where, c->where_len, line_table, c->err,
                     "error parsing [%s] config table: values must be >= -1",
                     table);
    (void)json_unpack (o, "{s?i s?i s?i}", "nnodes", &s->nnodes, "ncores",
                       &s->ncores, "ngpus", &s->ngpus);
    return 0;
}

static int read_limits (json_t *o,
                        const char *key,
                        struct policy_limits *l,
                        struct check *c)
{
    json_t *job_size = NULL, *duration = NULL, *min = NULL, *max = NULL;
    char table[512];
    json_error_t je;

    if (json_unpack_ex (o, &je, 0, "{s?o s?o !}", "job-size", &job_size,
                        "duration", &duration)
        < 0)
        return fail (c->where, c->where_len, key, c->err,
                     "error parsing [%s] config table: %s", key, je.text);
    if (duration && duration_of (duration, &l->duration) < 0)
        return fail (c->where, c->where_len, key, c->err,
                     "error parsing [%s] config table: 'duration' is not a "
                     "valid FSD",
                     key);
    if (!job_size)
        return 0;
    snprintf (table, sizeof (table), "%.400s.job-size", key);
    if (json_unpack_ex (job_size, &je, 0, "{s?o s?o !}", "min", &min, "max",
                        &max)
        < 0)
        return fail (c->where, c->where_len, table, c->err,
                     "error parsing [%s] config table: %s", table, je.text);
    if ((min && read_size (min, key, "min", &l->min, c) < 0)
        || (max && read_size (max, key, "max", &l->max, c) < 0))
        return -1;
    return 0;
}

static int read_defaults (json_t *o,
                          const char *key,
                          double *duration,
                          const char **queue,
                          struct check *c)
{
    json_t *d = NULL, *q = NULL;
    json_error_t je;

    if (json_unpack_ex (o, &je, 0, "{s?{s?{s?o s?o !} !} !}", "defaults",
                        "system", "duration", &d, "queue", &q)
        < 0)
        return fail (c->where, c->where_len, key, c->err,
                     "error parsing [%s] config table: %s", key, je.text);
    if (d && duration_of (d, duration) < 0)
        return fail (c->where, c->where_len, key, c->err,
                     "error parsing [%s] config table: "
                     "'defaults.system.duration' is not a valid FSD",
                     key);
    if (q && !json_is_string (q))
        return fail (c->where, c->where_len, key, c->err,
                     "error parsing [%s] config table: "
                     "'defaults.system.queue' is not a string",
                     key);
    *queue = q ? json_string_value (q) : NULL;
    return 0;
}

static int unapplied_add (struct policy *p, const char *fmt, const char *a)
{
    char name[512];
    char **u = realloc (p->unapplied, (p->nunapplied + 2) * sizeof (*u));

    if (!u)
        return -1;
    p->unapplied = u;
    snprintf (name, sizeof (name), fmt, a);
    if (!(u[p->nunapplied] = strdup (name)))
        return -1;
    u[++p->nunapplied] = NULL;
    return 0;
}

/* A [policy] table (the general one, or a queue's at key). */
static int read_policy (struct policy *p,
                        json_t *o,
                        const char *key,
                        struct policy_limits *limits,
                        double *default_duration,
                        const char **default_queue,
                        json_t **scheduler,
                        struct check *c)
{
    json_t *jobspec = NULL, *lim = NULL, *access = NULL;
    char table[512];
    json_error_t je;

    *default_queue = NULL;
    if (json_unpack_ex (o, &je, 0, "{s?o s?o s?o s?o !}", "jobspec", &jobspec,
                        "limits", &lim, "access", &access, "scheduler",
                        scheduler)
        < 0)
        return fail (c->where, c->where_len, key, c->err,
                     "error parsing [%s] config table: %s", key, je.text);
    snprintf (table, sizeof (table), "%.400s.jobspec", key);
    if (jobspec
        && read_defaults (jobspec, table, default_duration, default_queue, c)
               < 0)
        return -1;
    snprintf (table, sizeof (table), "%.400s.limits", key);
    if (lim && read_limits (lim, table, limits, c) < 0)
        return -1;
    if (access) {
        json_t *users = NULL, *groups = NULL;
        snprintf (table, sizeof (table), "%.400s.access", key);
        if (json_unpack_ex (access, &je, 0, "{s?o s?o !}", "allow-user",
                            &users, "allow-group", &groups)
            < 0)
            return fail (c->where, c->where_len, table, c->err,
                         "error parsing [%s] config table: %s", table,
                         je.text);
        if (users && !is_string_array (users, NULL))
            return fail (c->where, c->where_len, table, c->err,
                         "error parsing [%s] config table: 'allow-user' "
                         "must be a string array",
                         table);
        if (groups && !is_string_array (groups, NULL))
            return fail (c->where, c->where_len, table, c->err,
                         "error parsing [%s] config table: 'allow-group' "
                         "must be a string array",
                         table);
        if (unapplied_add (p, "%s.access", key) < 0)
            return errprintf (c->err, "out of memory");
    }
    if (*scheduler && unapplied_add (p, "%s.scheduler", key) < 0)
        return errprintf (c->err, "out of memory");
    return 0;
}

static struct policy_queue *queue_find (const struct policy *p,
                                        const char *name)
{
    for (size_t i = 0; name && i < p->nqueues; i++)
        if (!strcmp (p->queues[i].name, name))
            return &p->queues[i];
    return NULL;
}

/* One [queues.NAME] entry, alone: its own limits and defaults. */
static int read_queue (struct policy *p,
                       const char *name,
                       json_t *entry,
                       struct policy_queue *q,
                       struct check *c)
{
    json_t *pol = NULL, *requires = NULL, *parent = NULL, *scheduler = NULL;
    const char *defqueue = NULL;
    char table[512];
    json_error_t je;

    snprintf (table, sizeof (table), "queues.%.400s", name);
    limits_clear (&q->limits);
    q->default_duration = POLICY_DURATION_UNSET;
    if (!(q->name = strdup (name)))
        return errprintf (c->err, "out of memory");
    if (json_unpack_ex (entry, &je, 0, "{s?o s?o s?o !}", "policy", &pol,
                        "requires", &requires, "parent", &parent)
        < 0)
        return fail (c->where, c->where_len, table, c->err,
                     "error parsing [%s] config table: %s", table, je.text);
    if (parent && !json_is_string (parent))
        return fail (c->where, c->where_len, table, c->err,
                     "error parsing [%s] config table: 'parent' must be a "
                     "string",
                     table);
    if (pol) {
        char key[600];
        snprintf (key, sizeof (key), "%.500s.policy", table);
        if (read_policy (p, pol, key, &q->limits, &q->default_duration,
                         &defqueue, &scheduler, c)
            < 0)
            return -1;
        if (defqueue)
            return fail (c->where, c->where_len, table, c->err,
                         "error parsing [%s] config table: 'policy' must "
                         "not define a default queue!",
                         table);
        if (parent && scheduler)
            return fail (c->where, c->where_len, table, c->err,
                         "error parsing [%s] config table: a virtual queue "
                         "must not set 'policy.scheduler'",
                         table);
    }
    if (requires) {
        if (parent)
            return fail (c->where, c->where_len, table, c->err,
                         "error parsing [%s] config table: a virtual queue "
                         "must not set 'requires'",
                         table);
        if (!is_string_array (requires, " \t!&'\"`|()"))
            return fail (c->where, c->where_len, table, c->err,
                         "error parsing [%s] config table: 'requires' must "
                         "be an array of property strings (RFC 20)",
                         table);
        if (unapplied_add (p, "%s.requires", table) < 0)
            return errprintf (c->err, "out of memory");
    }
    return 0;
}

/* RFC 33 virtual queues: one level, the parent a queue of its own. */
static const char *parent_of (json_t *entry)
{
    return json_string_value (json_object_get (entry, "parent"));
}

static int read_queues (struct policy *p, json_t *queues, struct check *c)
{
    const char *name;
    json_t *entry;
    size_t i = 0;

    if (!json_is_object (queues))
        return fail (c->where, c->where_len, "queues", c->err,
                     "error parsing [queues] config table: not a table");
    if (!(p->queues = calloc (json_object_size (queues) + 1,
                              sizeof (*p->queues))))
        return errprintf (c->err, "out of memory");
    json_object_foreach (queues, name, entry)
    {
        p->nqueues = i + 1;
        if (read_queue (p, name, entry, &p->queues[i++], c) < 0)
            return -1;
    }
    json_object_foreach (queues, name, entry)
    {
        const char *parent = parent_of (entry);
        char table[512];
        json_t *pentry;

        if (!parent)
            continue;
        snprintf (table, sizeof (table), "queues.%.400s", name);
        if (!strcmp (parent, name))
            return fail (c->where, c->where_len, table, c->err,
                         "error parsing [%s] config table: parent queue is "
                         "itself",
                         table);
        if (!(pentry = json_object_get (queues, parent)))
            return fail (c->where, c->where_len, table, c->err,
                         "error parsing [%s] config table: parent queue "
                         "'%s' is not configured",
                         table, parent);
        if (parent_of (pentry))
            return fail (c->where, c->where_len, table, c->err,
                         "error parsing [%s] config table: parent queue "
                         "'%s' is itself a virtual queue",
                         table, parent);
    }
    /* A virtual queue's effective values: its parent's own, overlaid by
     * its own (read after every entry: the parent may come later). */
    json_object_foreach (queues, name, entry)
    {
        struct policy_queue *q = queue_find (p, name);
        const struct policy_queue *pq = queue_find (p, parent_of (entry));
        if (!pq)
            continue;
        struct policy_limits l = pq->limits;
        limits_over (&l, &q->limits);
        q->limits = l;
        if (q->default_duration == POLICY_DURATION_UNSET)
            q->default_duration = pq->default_duration;
    }
    return 0;
}

struct policy *policy_create (json_t *config,
                              char *where,
                              size_t where_len,
                              jobtap_host_error_t *err)
{
    struct check c = {.where = where, .where_len = where_len, .err = err};
    struct policy *p = calloc (1, sizeof (*p));
    json_t *general = json_object_get (config, "policy");
    json_t *queues = json_object_get (config, "queues");
    const char *defqueue = NULL;
    json_t *scheduler = NULL;

    if (where && where_len)
        where[0] = '\0';
    if (!p) {
        errprintf (err, "out of memory");
        return NULL;
    }
    limits_clear (&p->general);
    p->default_duration = POLICY_DURATION_UNSET;
    if (general
        && read_policy (p, general, "policy", &p->general, &p->default_duration,
                        &defqueue, &scheduler, &c)
               < 0)
        goto error;
    if (defqueue && !(p->default_queue = strdup (defqueue))) {
        errprintf (err, "out of memory");
        goto error;
    }
    if (queues && read_queues (p, queues, &c) < 0)
        goto error;
    if (defqueue && !queue_find (p, defqueue)) {
        fail (where, where_len, "policy.jobspec", err,
              "the [policy] config table defines a default queue %s that is "
              "not in [queues] table",
              defqueue);
        goto error;
    }
    return p;
error:
    policy_destroy (p);
    errno = EINVAL;
    return NULL;
}

void policy_destroy (struct policy *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->nqueues; i++)
        free (p->queues[i].name);
    for (size_t i = 0; i < p->nunapplied; i++)
        free (p->unapplied[i]);
    free (p->unapplied);
    free (p->queues);
    free (p->default_queue);
    free (p);
}

bool policy_limits_duration (const struct policy *p)
{
    if (!p)
        return false;
    if (p->general.duration > 0.)
        return true;
    for (size_t i = 0; i < p->nqueues; i++)
        if (p->queues[i].limits.duration > 0.)
            return true;
    return false;
}

static bool size_set (const struct policy_size *s)
{
    return s->nnodes >= 0 || s->ncores >= 0 || s->ngpus >= 0;
}

bool policy_limits_size (const struct policy *p)
{
    if (!p)
        return false;
    if (size_set (&p->general.max) || size_set (&p->general.min))
        return true;
    for (size_t i = 0; i < p->nqueues; i++)
        if (size_set (&p->queues[i].limits.max)
            || size_set (&p->queues[i].limits.min))
            return true;
    return false;
}

/* The limits for a job of 'queue': the general ones overlaid by its
 * queue's. */
static struct policy_limits effective (const struct policy *p,
                                       const char *queue)
{
    struct policy_limits l = p->general;
    const struct policy_queue *q = queue_find (p, queue);
    if (q)
        limits_over (&l, &q->limits);
    return l;
}

int policy_check_duration (const struct policy *p,
                           const struct policy_request *r,
                           jobtap_host_error_t *err)
{
    double limit = effective (p, r->queue).duration;
    bool unlimited = r->duration == 0.;
    char requested[64] = "unlimited", allowed[64];

    if (limit <= 0. || (r->duration <= limit && !unlimited))
        return 0;
    if (!unlimited)
        fsd_format (requested, sizeof (requested), r->duration, 2);
    fsd_format (allowed, sizeof (allowed), limit, 2);
    errno = EINVAL;
    return errprintf (err, "requested duration (%s) exceeds policy limit of "
                      "%s%s%s",
                      requested, allowed, r->queue ? " for queue " : "",
                      r->queue ? r->queue : "");
}

static int check_one (const char *queue,
                      const char *resource,
                      bool over,
                      int limit,
                      int value,
                      jobtap_host_error_t *err)
{
    if (limit < 0 || (over ? value <= limit : value >= limit))
        return 0;
    errno = EINVAL;
    return errprintf (err, "requested %s (%d) %s policy limit of %d%s%s",
                      resource, value, over ? "exceeds" : "is under", limit,
                      queue ? " for queue " : "", queue ? queue : "");
}

int policy_check_size (const struct policy *p,
                       const struct policy_request *r,
                       jobtap_host_error_t *err)
{
    struct policy_limits l = effective (p, r->queue);
    const char *q = r->queue;

    if (check_one (q, "nnodes", true, l.max.nnodes, r->nnodes, err) < 0
        || check_one (q, "ncores", true, l.max.ncores, r->ncores, err) < 0
        || check_one (q, "ngpus", true, l.max.ngpus, r->ngpus, err) < 0
        || check_one (q, "nnodes", false, l.min.nnodes, r->nnodes, err) < 0
        || check_one (q, "ncores", false, l.min.ncores, r->ncores, err) < 0
        || check_one (q, "ngpus", false, l.min.ngpus, r->ngpus, err) < 0)
        return -1;
    return 0;
}

const char *policy_default_queue (const struct policy *p)
{
    return p ? p->default_queue : NULL;
}

double policy_default_duration (const struct policy *p, const char *queue)
{
    const struct policy_queue *q;

    if (!p)
        return POLICY_DURATION_UNSET;
    if ((q = queue_find (p, queue))
        && q->default_duration != POLICY_DURATION_UNSET)
        return q->default_duration;
    return p->default_duration;
}

bool policy_has_defaults (const struct policy *p)
{
    if (!p)
        return false;
    if (p->default_queue || p->default_duration != POLICY_DURATION_UNSET)
        return true;
    for (size_t i = 0; i < p->nqueues; i++)
        if (p->queues[i].default_duration != POLICY_DURATION_UNSET)
            return true;
    return false;
}

size_t policy_queue_count (const struct policy *p)
{
    return p ? p->nqueues : 0;
}

const char *policy_queue_name (const struct policy *p, size_t i)
{
    return p && i < p->nqueues ? p->queues[i].name : NULL;
}

const char *policy_unapplied (const struct policy *p, size_t i)
{
    return p && i < p->nunapplied ? p->unapplied[i] : NULL;
}
