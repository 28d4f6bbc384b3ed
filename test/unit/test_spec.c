/* spec.c: a job's jobspec as tree and text, the host's recipe and the
 * updates replayed on it, the hot set, dotted-key updates copied on write,
 * redaction and dependencies, on a runtime made here. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <flux/jobtap.h>

#include "compact.h"
#include "host.h"
#include "job.h"
#include "runtime.h"
#include "spec.h"
#include "strbuf.h"
#include "core_util.h"
#include "find_json.h"
#include "tap.h"

static struct runtime rt;
static struct jobtap_host_ops ops;

static json_t *spec_sample (void)
{
    return json_pack ("{s:i s:[{s:s s:i}] s:[{s:[s]}] s:{s:{s:f s:s}}}",
                      "version", 1,
                      "resources", "type", "slot", "count", 2,
                      "tasks", "command", "hostname",
                      "attributes", "system", "duration", 60.0,
                      "cwd", "/tmp");
}

static struct job *job_make (json_t *spec)
{
    struct job *job = job_create (&rt, spec, 1000, 16, 1.0);
    if (!job)
        bail_out ("job_create failed");
    return job;
}

static json_t *get_path (json_t *o, const char *path)
{
    char *copy = strdup (path), *save = NULL;
    for (char *t = strtok_r (copy, ".", &save); t && o;
         t = strtok_r (NULL, ".", &save))
        o = json_object_get (o, t);
    free (copy);
    return o;
}

static void test_get_set (void)
{
    json_t *spec = spec_sample ();
    json_t *other = json_pack ("{s:i}", "version", 2);
    struct job *job = job_make (spec);

    ok (job_jobspec (job) == spec, "job_jobspec gives the tree it holds");
    job_set_jobspec (job, json_incref (other), strdup ("{\"version\":2}"));
    ok (job_jobspec (job) == other && job->jobspec_text
            && !strcmp (job->jobspec_text, "{\"version\":2}"),
        "job_set_jobspec replaces tree and text");
    isint (spec->refcount, 1, "the old tree is let go");
    ok (job->hot_slot == 0, "a job not resting stays out of the hot set");
    job_decref (job);
    json_decref (spec);
    json_decref (other);
}

static void test_rest_now (void)
{
    json_t *spec = spec_sample ();
    json_t *want = json_deep_copy (spec);
    struct job *job = job_make (spec);
    json_t *again;

    json_decref (spec); /* the job's alone now */
    ops.compact_later = false;
    job_spec_rest (job);
    ok (job->spec_resting, "job_spec_rest marks the job resting");
    ok (job->jobspec == NULL, "without compact_later the tree is dropped");
    ok (job->jobspec_text != NULL, "and the text kept");
    ok (rt.jobs->fifo[FIFO_REST].count == 0, "nothing waits in FIFO_REST");
    again = job_jobspec (job);
    ok (again != NULL && json_equal (again, want),
        "job_jobspec reads it back equal");
    isint (job->hot_slot, 1, "read back, it enters the hot set");
    ok (rt.jobs->hot[0] == job, "...in the first slot");
    job_decref (job);
    ok (rt.jobs->hot[0] == NULL, "a freed job leaves the hot set");
    json_decref (want);
}

static void test_rest_later (void)
{
    json_t *spec = spec_sample ();
    struct job *a = job_make (spec), *b = job_make (spec);

    json_decref (spec);
    ops.compact_later = true;
    job_spec_rest (a);
    job_spec_rest (b);
    ok (a->jobspec && b->jobspec, "with compact_later the trees stay");
    ok (rt.jobs->fifo[FIFO_REST].count == 2 && rt.jobs->fifo[FIFO_REST].head == a,
        "the jobs wait in FIFO_REST in order");
    job_jobspec (b); /* read since: b is in the hot set now */
    spec_compact_resting (&rt);
    ok (rt.jobs->fifo[FIFO_REST].count == 0, "spec_compact_resting empties it");
    ok (a->jobspec == NULL && a->jobspec_text,
        "a job not read since keeps only text");
    ok (b->jobspec != NULL && b->hot_slot,
        "a job in the hot set keeps its tree");
    job_decref (a);
    job_decref (b);
    ops.compact_later = false;
}

static void test_hot_set (void)
{
    enum { N = SPEC_HOT + 3 };
    static struct job *jobs[N];
    int trees = 0, wrong = 0;

    memset (rt.jobs->hot, 0, sizeof (rt.jobs->hot));
    rt.jobs->hot_next = 0;
    for (int i = 0; i < N; i++) {
        json_t *spec = json_pack ("{s:i s:{s:{s:i}}}", "version", 1,
                                  "attributes", "user", "n", i);
        jobs[i] = job_make (spec);
        json_decref (spec);
        job_spec_rest (jobs[i]); /* dropped to text now */
    }
    for (int i = 0; i < N; i++) {
        json_t *s = job_jobspec (jobs[i]);
        if (json_integer_value (get_path (s, "attributes.user.n")) != i)
            wrong++;
    }
    isint (wrong, 0, "each job reads back its own jobspec");
    for (int i = 0; i < N; i++) {
        if (jobs[i]->jobspec)
            trees++;
    }
    isint (trees, SPEC_HOT, "only SPEC_HOT trees are kept");
    ok (!jobs[0]->jobspec && !jobs[1]->jobspec && !jobs[2]->jobspec
            && jobs[0]->jobspec_text && !jobs[0]->hot_slot,
        "the 3 least recently read went back to text");
    ok (jobs[3]->jobspec && jobs[N - 1]->jobspec,
        "the most recent SPEC_HOT keep their trees");
    job_jobspec (jobs[0]);
    ok (jobs[0]->jobspec && !jobs[3]->jobspec,
        "reading an old one again pushes out the oldest tree");
    for (int i = 0; i < N; i++)
        job_decref (jobs[i]);
    trees = 0;
    for (int i = 0; i < SPEC_HOT; i++)
        if (rt.jobs->hot[i])
            trees++;
    isint (trees, 0, "the hot set is empty once the jobs are freed");
}

static void test_apply (void)
{
    json_t *spec = spec_sample ();
    struct job *job = job_make (spec);
    json_t *attrs = json_object_get (spec, "attributes");
    json_t *u;

    /* the test holds the root: it is copied, and so is anything under */
    json_incref (attrs);
    job->jobspec_text = strdup ("stale");
    u = json_pack ("{s:i s:n s:s}",
                   "attributes.system.new.deep.key", 7,
                   "attributes.system.cwd",
                   "tasks", "replaced");
    ok (spec_apply_updates (job, u) == 0, "spec_apply_updates works");
    json_decref (u);
    ok (job->jobspec != spec, "a root someone else holds is copied");
    isint (json_integer_value (get_path (job->jobspec,
                                         "attributes.system.new.deep.key")),
           7, "dotted keys create the intermediate objects");
    ok (get_path (job->jobspec, "attributes.system.cwd") == NULL,
        "a null value deletes the key");
    ok (json_real_value (get_path (job->jobspec, "attributes.system.duration"))
            == 60.0,
        "keys not named stay");
    is (json_string_value (json_object_get (job->jobspec, "tasks")),
        "replaced", "a key without dots replaces the top-level value");
    ok (get_path (spec, "attributes.system.new") == NULL
            && get_path (spec, "attributes.system.cwd") != NULL
            && json_is_array (json_object_get (spec, "tasks")),
        "the held root still shows what it showed");
    ok (json_object_get (job->jobspec, "attributes") != attrs
            && get_path (attrs, "system.new") == NULL,
        "a held subtree is copied, not changed");
    ok (job->jobspec_text == NULL, "the stale text is dropped");
    json_decref (attrs);
    json_decref (spec);

    /* now nobody else holds the tree: changed in place */
    spec = job->jobspec;
    attrs = json_object_get (spec, "attributes");
    u = json_pack ("{s:i}", "attributes.system.duration", 5);
    ok (spec_apply_updates (job, u) == 0, "a second update works");
    json_decref (u);
    ok (job->jobspec == spec && json_object_get (spec, "attributes") == attrs,
        "an unshared tree is changed in place");
    isint (json_integer_value (get_path (spec, "attributes.system.duration")),
           5, "...with the new value");
    isint (spec->refcount, 1, "and the job holds it once");
    job_decref (job);
}

static void test_validate (void)
{
    const char *good[] = {
        "{\"attributes.system.duration\": 1}",
        "{\"attributes\": {}}",
        "{\"resources\": []}",
        "{\"tasks.0\": 1, \"resources.x\": 2}",
        "{}",
    };
    const char *bad[] = {
        "{\"attributesx\": 1}",
        "{\"version\": 2}",
        "{\"attributes.x\": 1, \"foo.bar\": 2}",
        "{\"task\": 1}",
        "[]",
        "\"attributes\"",
    };
    for (size_t i = 0; i < sizeof (good) / sizeof (good[0]); i++) {
        json_t *u = json_loads (good[i], JSON_DECODE_ANY, NULL);
        isint (validate_updates (u), 0, "validate_updates accepts %s",
               good[i]);
        json_decref (u);
    }
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        json_t *u = json_loads (bad[i], JSON_DECODE_ANY, NULL);
        isint (validate_updates (u), -1, "validate_updates rejects %s",
               bad[i]);
        json_decref (u);
    }
    isint (validate_updates (NULL), -1, "validate_updates rejects NULL");
}

static void test_redacted (void)
{
    json_t *spec = json_pack ("{s:i s:{s:{s:{s:s} s:f}}}", "version", 1,
                              "attributes", "system", "environment",
                              "HOME", "/root", "duration", 10.0);
    json_t *plain = spec_sample ();
    json_t *r = jobspec_redacted (spec);
    struct job *job;

    ok (r != spec, "a jobspec with an environment is copied");
    ok (get_path (r, "attributes.system.environment") == NULL,
        "the copy has no attributes.system.environment");
    ok (json_real_value (get_path (r, "attributes.system.duration")) == 10.0,
        "the rest of attributes.system stays");
    ok (get_path (spec, "attributes.system.environment.HOME") != NULL,
        "the caller's object is unchanged");
    json_decref (r);

    r = jobspec_redacted (plain);
    ok (r == plain && plain->refcount == 2,
        "without an environment: the same object, one more reference");
    json_decref (r);

    job = job_make (spec);
    ok (job->jobspec != spec
            && !get_path (job->jobspec, "attributes.system.environment"),
        "job_create keeps the redacted jobspec");
    job_decref (job);
    json_decref (spec);
    json_decref (plain);
}

static void test_dependencies (void)
{
    json_t *spec = json_pack ("{s:{s:{s:[{s:s s:s}]}}}", "attributes",
                              "system", "dependencies", "scheme", "afterok",
                              "value", "12");
    json_t *plain = spec_sample ();
    struct job *job = job_make (spec), *job2 = job_make (plain);
    json_t *deps = job_dependencies (job);

    ok (json_is_array (deps) && json_array_size (deps) == 1,
        "job_dependencies gives attributes.system.dependencies");
    ok (deps == get_path (spec, "attributes.system.dependencies")
            && deps->refcount == 2,
        "...a new reference to the job's own array");
    is (json_string_value (json_object_get (json_array_get (deps, 0),
                                            "scheme")),
        "afterok", "...with its entries");
    json_decref (deps);
    ok (job_dependencies (job2) == NULL, "no dependencies: NULL");
    job_decref (job);
    job_decref (job2);
    json_decref (spec);
    json_decref (plain);
}

static void test_own (void)
{
    json_t *o = json_pack ("{s:i}", "a", 1);
    json_t *r = own_object (o);
    struct job *job;

    ok (r == o && o->refcount == 2, "own_object of an unshared object: it");
    json_decref (r);
    json_incref (o);
    r = own_object (o);
    ok (r != o && json_equal (r, o) && r->refcount == 1,
        "own_object of a shared object: an equal copy");
    json_decref (r);
    r = own_object (NULL);
    ok (json_is_object (r) && json_object_size (r) == 0,
        "own_object of nothing: a new empty object");
    json_decref (r);
    r = own_object (json_object_get (o, "a"));
    ok (json_is_object (r) && json_object_size (r) == 0,
        "own_object of a non-object: a new empty object");
    json_decref (r);

    job = job_make (NULL);
    ok (updates_own (job) == job->all_updates && json_is_object
                                                     (job->all_updates),
        "updates_own makes all_updates on first use");
    json_decref (job->all_updates);
    job->all_updates = o; /* the test still holds o: shared */
    ok (updates_own (job) != o && json_equal (job->all_updates, o),
        "updates_own copies updates someone else holds");
    ok (json_integer_value (json_object_get (o, "a")) == 1 && o->refcount == 1,
        "the caller's object is untouched, the job's reference let go");
    job_decref (job);
    json_decref (o);
}

static json_t *rebuild_fails (const void *source, size_t len, void *arg)
{
    (void)source;
    (void)len;
    (void)arg;
    recipe_rebuilds++;
    return NULL;
}

static struct job *job_sourced (json_t *spec)
{
    struct job *job = job_make (spec);
    char *text = json_dumps (spec, JSON_COMPACT);
    job_spec_source (job, text, strlen (text));
    return job;
}

/* The job's jobspec read after it rests: recipe_rebuilds counts from 0. */
static json_t *read_after_rest (struct job *job)
{
    job_spec_rest (job);
    recipe_rebuilds = 0;
    return job_jobspec (job);
}

/* An update applied as the jobspec-update event applies it. */
static int update (struct job *job, const char *text)
{
    json_t *u = json_loads (text, 0, NULL);
    int rc = spec_apply_updates (job, u);
    if (rc == 0 && updates_own (job))
        json_object_update (job->all_updates, u);
    json_decref (u);
    return rc;
}

static void test_source (void)
{
    json_t *spec = spec_sample ();
    struct job *job;
    json_t *want, *got;

    ops.compact_later = false;
    ops.jobspec_rebuild = recipe_rebuild;
    recipe_rebuilds = 0;
    job = job_sourced (spec);
    ok (job->spec_source != NULL, "a job keeps the host's recipe");
    /* the same key, then its parent whole, then the key again: replayed
     * in another order, the parent would win */
    ok (update (job, "{\"attributes.user.a.b\":1}") == 0
            && update (job, "{\"attributes.user.a\":{\"c\":1}}") == 0
            && update (job, "{\"attributes.user.a.b\":2,"
                            "\"attributes.system.cwd\":null}") == 0,
        "three updates applied");
    want = json_deep_copy (job_jobspec (job));
    is (job->spec_replay ? job->spec_replay->data : NULL,
        "{\"attributes.user.a.b\":1}{\"attributes.user.a\":{\"c\":1}}"
        "{\"attributes.user.a.b\":2,\"attributes.system.cwd\":null}",
        "the updates are kept in order, as text");
    job_spec_rest (job);
    ok (job->jobspec == NULL && job->jobspec_text == NULL,
        "at rest: neither tree nor text");
    ok (job->spec_replay && job->spec_source,
        "the recipe and the updates stay");
    isint (recipe_rebuilds, 0, "nothing rebuilt yet");
    got = job_jobspec (job);
    isint (recipe_rebuilds, 1, "a reader has the host build it again");
    ok (got && json_equal (got, want), "the updates replayed in their order");
    ok (json_integer_value (get_path (got, "attributes.user.a.b")) == 2
            && json_integer_value (get_path (got, "attributes.user.a.c")) == 1
            && !get_path (got, "attributes.system.cwd"),
        "a.b 2, a.c 1, cwd deleted");
    ok (update (job, "{\"attributes.system.queue\":\"q\"}") == 0,
        "an update after a rebuild");
    json_object_set_new (get_path (want, "attributes.system"), "queue",
                         json_string ("q"));
    job_decref (job);

    /* the same four updates on a fresh job, read only once it rests */
    job = job_sourced (spec);
    update (job, "{\"attributes.user.a.b\":1}");
    update (job, "{\"attributes.user.a\":{\"c\":1}}");
    update (job, "{\"attributes.user.a.b\":2,\"attributes.system.cwd\":null}");
    update (job, "{\"attributes.system.queue\":\"q\"}");
    got = read_after_rest (job);
    ok (got && json_equal (got, want) && recipe_rebuilds == 1,
        "four updates, two of them on one key, rebuilt equal");
    json_decref (want);
    job_decref (job);

    job = job_sourced (spec);
    want = json_deep_copy (spec);
    job_spec_rest (job);
    ok (job->jobspec == NULL && job->spec_source && !job->spec_replay,
        "no update: the recipe alone");
    got = job_jobspec (job);
    ok (got && json_equal (got, want), "and it gives the jobspec back");
    json_decref (want);
    job_decref (job);

    job = job_sourced (spec);
    update (job, "{\"attributes.user.x\":1}");
    job_set_jobspec (job, json_pack ("{s:i}", "version", 7), NULL);
    ok (job->spec_source == NULL && job->spec_replay == NULL,
        "a jobspec replaced whole lets the recipe and the updates go");
    job_spec_rest (job);
    ok (job->jobspec == NULL && job->jobspec_text
            && !strcmp (job->jobspec_text, "{\"version\":7}"),
        "with no recipe for the new one, the job rests as text");
    job_spec_source (job, strdup ("{\"version\":7}"), 13);
    ok (job->spec_source && !job->jobspec_text,
        "a recipe given then takes the text's place (no update since)");
    recipe_rebuilds = 0;
    got = job_jobspec (job);
    ok (got && recipe_rebuilds == 1
            && json_integer_value (get_path (got, "version")) == 7,
        "and gives the jobspec back");
    job_decref (job);

    job = job_make (spec);
    update (job, "{\"attributes.user.x\":3}");
    job_spec_rest (job);
    ok (job->jobspec_text && !job->spec_replay,
        "a job with an update and no recipe rests as text");
    job_spec_source (job, strdup ("{}"), 2);
    ok (job->spec_source == NULL && job->jobspec_text,
        "a recipe given then is refused: the update is only in the text");
    job_decref (job);

    job = job_sourced (spec);
    job_set_jobspec (job, json_pack ("{s:i}", "version", 7), NULL);
    update (job, "{\"attributes.user.x\":2}");
    job_spec_source (job, strdup ("{\"version\":7}"), 13);
    ok (job->spec_source != NULL,
        "a recipe for the new jobspec is taken");
    got = read_after_rest (job);
    ok (got && recipe_rebuilds == 1
            && json_integer_value (get_path (got, "version")) == 7
            && json_integer_value (get_path (got, "attributes.user.x")) == 2,
        "and gives it back with the update made after the replacement");
    job_decref (job);

    /* a trial (job.validate on an update, then undone) keeps the recipe */
    job = job_sourced (spec);
    update (job, "{\"attributes.user.a\":1}");
    want = json_deep_copy (job_jobspec (job));
    struct spec_trial trial;
    spec_trial_begin (job, &trial);
    update (job, "{\"attributes.user.a\":2,\"attributes.user.b\":2}");
    ok (json_integer_value (get_path (job_jobspec (job), "attributes.user.a"))
            == 2,
        "during a trial the jobspec has the tried update");
    spec_trial_end (job, &trial);
    ok (json_equal (job_jobspec (job), want) && job->spec_source
            && !strcmp (job->spec_replay->data, "{\"attributes.user.a\":1}"),
        "after it: the jobspec, the recipe and the list as before");
    got = read_after_rest (job);
    ok (got && json_equal (got, want) && recipe_rebuilds == 1,
        "and the rebuilt jobspec has no trace of the trial");
    json_decref (want);
    job_decref (job);

    ops.jobspec_rebuild = NULL;
    job = job_sourced (spec);
    ok (job->spec_source == NULL,
        "a host that cannot rebuild gets no recipe kept");
    update (job, "{\"attributes.user.x\":1}");
    job_spec_rest (job);
    ok (job->jobspec_text && !job->spec_replay,
        "its job rests as text, the list of updates let go");
    job_decref (job);

    ops.jobspec_rebuild = rebuild_fails;
    job = job_sourced (spec);
    ok (read_after_rest (job) == NULL && recipe_rebuilds == 1,
        "a recipe the host cannot build again: no jobspec (logged)");
    job_decref (job);

    ops.jobspec_rebuild = NULL;
    json_decref (spec);
}

/* spec_find of a dotted path ("" for the root), the value's text in
 * *text (static) when it gives one; with 'told', scalars may be told
 * as such (their text made here). */
static int find_as (struct job *job,
                    const char *dotted,
                    const char **text,
                    bool told)
{
    static char buf[256];
    char copy[256];
    const char *path[8];
    int depth = 0;
    json_t *v = NULL;
    struct jobtap_spec_scalar scalar;
    int kind;

    snprintf (copy, sizeof (copy), "%s", dotted);
    for (char *save, *k = strtok_r (copy, ".", &save); k && depth < 8;
         k = strtok_r (NULL, ".", &save))
        path[depth++] = k;
    kind = spec_find (job, path, depth, &v, told ? &scalar : NULL);
    if (kind == JOBTAP_SPEC_SCALAR)
        v = scalar.type == JSON_STRING ? json_string (scalar.string)
            : scalar.type == JSON_INTEGER ? json_integer (scalar.integer)
                                          : json_real (scalar.real);
    if (text) {
        char *t = v ? json_dumps (v, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
        snprintf (buf, sizeof (buf), "%s", t ? t : "");
        free (t);
        *text = buf;
    }
    json_decref (v);
    return kind;
}

static int find (struct job *job, const char *dotted, const char **text)
{
    return find_as (job, dotted, text, false);
}

/* A job whose jobspec is made from the host's recipe when read, and what
 * is told without making it. */
static void test_from_source (void)
{
    json_t *spec = spec_sample ();
    char *text = json_dumps (spec, JSON_COMPACT);
    const char *v = NULL;
    struct job *job;

    ops.compact_later = false;
    ops.jobspec_rebuild = recipe_rebuild;
    ops.jobspec_find = recipe_find;
    recipe_rebuilds = recipe_finds = 0;
    job = job_make (NULL);
    ok (job_spec_from_source (job, text, strlen (text)) == 0
            && job->jobspec == NULL && job->spec_source == text,
        "from a recipe: no tree yet");
    ok (find (job, "", NULL) == JOBTAP_SPEC_OBJECT
            && find (job, "attributes.system", NULL) == JOBTAP_SPEC_OBJECT
            && find (job, "attributes.system.cwd", &v) == JOBTAP_SPEC_VALUE
            && !strcmp (v, "\"/tmp\"")
            && find (job, "attributes.system.queue", NULL)
                   == JOBTAP_SPEC_ABSENT
            && recipe_finds == 4 && recipe_rebuilds == 0,
        "members are told by the host, no tree made");
    ok (find_as (job, "attributes.system.cwd", &v, true)
                == JOBTAP_SPEC_SCALAR
            && !strcmp (v, "\"/tmp\"")
            && find_as (job, "version", &v, true) == JOBTAP_SPEC_SCALAR
            && !strcmp (v, "1")
            && find_as (job, "attributes.system", NULL, true)
                   == JOBTAP_SPEC_OBJECT
            && recipe_rebuilds == 0,
        "asked for scalars, the host's scalars come as such");
    ok (job_dependencies (job) == NULL && recipe_rebuilds == 0,
        "no dependencies, told without a tree");
    ok (update (job, "{\"attributes.system.queue\":\"q\"}") == 0
            && job->jobspec == NULL && recipe_rebuilds == 0,
        "an update is listed, no tree made");
    recipe_finds = 0;
    ok (find (job, "attributes.system.queue", NULL) == JOBTAP_SPEC_UNKNOWN
            && find_as (job, "attributes.system.queue", NULL, true)
                   == JOBTAP_SPEC_UNKNOWN
            && find (job, "attributes.system.queue.x", NULL)
                   == JOBTAP_SPEC_UNKNOWN
            && recipe_finds == 0,
        "the updated member, and below it: only the tree tells");
    ok (find_as (job, "attributes.system.cwd", &v, true)
                == JOBTAP_SPEC_SCALAR
            && !strcmp (v, "\"/tmp\""),
        "a scalar beside it is still told as one");
    ok (find (job, "attributes.system.cwd", &v) == JOBTAP_SPEC_VALUE
            && !strcmp (v, "\"/tmp\"")
            && find (job, "attributes.system", NULL) == JOBTAP_SPEC_OBJECT
            && find (job, "attributes.system.queued", NULL)
                   == JOBTAP_SPEC_ABSENT,
        "members beside it are still told, its parents are objects");
    ok (update (job, "{\"attributes.user.a.b\":1}") == 0
            && find (job, "attributes.user", NULL) == JOBTAP_SPEC_UNKNOWN
            && find (job, "attributes.user.a.b", NULL) == JOBTAP_SPEC_UNKNOWN,
        "a member the recipe lacks, made by an update: only the tree tells");
    ok (update (job, "{\"attributes.system\":{\"cwd\":\"/\"}}") == 0
            && find (job, "attributes.system.cwd", NULL)
                   == JOBTAP_SPEC_UNKNOWN,
        "an update of a parent whole: its members only from the tree");
    ok (recipe_rebuilds == 0, "three updates, still no tree");
    ok (job->spec_live && json_array_size (job->spec_live) == 3,
        "before rest, the updates are kept as objects too");
    json_t *got = job_jobspec (job);
    ok (got && recipe_rebuilds == 1
            && !strcmp (json_string_value (get_path (got, "attributes.system.cwd")),
                        "/")
            && !get_path (got, "attributes.system.queue")
            && json_integer_value (get_path (got, "attributes.user.a.b")) == 1,
        "the tree is made with the updates in their order");
    ok (find (job, "attributes.system.cwd", NULL) == JOBTAP_SPEC_UNKNOWN,
        "with a tree at hand, it is read instead");
    json_t *want = json_deep_copy (got);
    job_spec_rest (job);
    ok (!job->spec_live && job->jobspec == NULL,
        "at rest the objects and the tree go");
    got = job_jobspec (job);
    ok (got && json_equal (got, want) && recipe_rebuilds == 2,
        "made again from the updates' text: the same jobspec");
    json_decref (want);
    job_decref (job);

    /* one update, kept as it is */
    text = json_dumps (spec, JSON_COMPACT);
    job = job_make (NULL);
    job_spec_from_source (job, text, strlen (text));
    ok (update (job, "{\"attributes.system.queue\":\"q1\"}") == 0
            && json_is_object (job->spec_live),
        "a single update is kept as the update itself");
    got = job_jobspec (job);
    ok (got && !strcmp (json_string_value (
                            get_path (got, "attributes.system.queue")),
                        "q1"),
        "...and the tree made has it");
    job_decref (job);

    job = job_make (NULL);
    ops.jobspec_find = NULL;
    text = json_dumps (spec, JSON_COMPACT);
    ok (job_spec_from_source (job, text, strlen (text)) == 0
            && find (job, "attributes", NULL) == JOBTAP_SPEC_UNKNOWN,
        "a host that cannot tell: unknown");
    job_decref (job);

    ops.jobspec_rebuild = NULL;
    job = job_make (NULL);
    text = json_dumps (spec, JSON_COMPACT);
    errno = 0;
    ok (job_spec_from_source (job, text, strlen (text)) < 0 && errno == EINVAL
            && json_is_object (job->jobspec),
        "a host that cannot make it: refused (the recipe freed), the job as "
        "it was");
    job_decref (job);
    json_decref (spec);
}

/* A shared update (the first a job gets, as the jobspec-update event
 * applies it: the object itself, held). */
static void update_shared (struct job *job, json_t *u)
{
    ok (spec_apply_updates (job, u) == 0, "...the update applies");
    job->all_updates = json_incref (u);
}

static struct job *job_from_recipe (json_t *spec)
{
    struct job *job = job_make (NULL);
    char *text = json_dumps (spec, JSON_COMPACT);
    job_spec_from_source (job, text, strlen (text));
    return job;
}

/* job_dependencies keeps its answer for the updates object it was asked
 * of: jobs given one policy default share it. */
static void test_dependencies_shared (void)
{
    json_t *spec = spec_sample ();
    json_t *queue = json_pack ("{s:s}", "attributes.system.queue", "q");
    json_t *deps = json_pack ("{s:[{s:s s:s}]}",
                              "attributes.system.dependencies", "scheme",
                              "afterok", "value", "12");
    struct job *a, *b, *c, *d;
    json_t *got;

    ops.compact_later = false;
    ops.jobspec_rebuild = recipe_rebuild;
    ops.jobspec_find = recipe_find;
    a = job_from_recipe (spec);
    update_shared (a, queue);
    recipe_finds = recipe_rebuilds = 0;
    ok (job_dependencies (a) == NULL && recipe_finds == 1
            && recipe_rebuilds == 0 && rt.deps_updates == queue,
        "an update elsewhere: no dependencies, told by the recipe; the "
        "answer kept for its object");
    b = job_from_recipe (spec);
    update_shared (b, queue);
    ok (job_dependencies (b) == NULL && recipe_finds == 2
            && recipe_rebuilds == 0 && rt.deps_updates == queue,
        "another job given the same object: the same answer");
    c = job_from_recipe (spec);
    update_shared (c, deps);
    got = job_dependencies (c);
    ok (json_is_array (got) && json_array_size (got) == 1
            && recipe_rebuilds == 1 && rt.deps_updates == deps,
        "another object, which adds dependencies: read from the tree");
    json_decref (got);
    d = job_from_recipe (spec);
    update_shared (d, queue);
    ok (job_dependencies (d) == NULL && rt.deps_updates == queue,
        "the first object again: no dependencies");
    ok (update (d, "{\"attributes.system.dependencies\":[]}") == 0
            && d->all_updates != queue && json_object_size (queue) == 1,
        "a job's next update changes a copy, not the object the answer "
        "holds");
    got = job_dependencies (d);
    ok (json_is_array (got) && json_array_size (got) == 0,
        "...and its dependencies are the ones it was given");
    json_decref (got);
    job_decref (a);
    job_decref (b);
    job_decref (c);
    job_decref (d);
    spec_memo_clear (&rt);
    ok (rt.deps_updates == NULL && queue->refcount == 1
            && deps->refcount == 1,
        "cleared: the objects let go");
    ops.jobspec_rebuild = NULL;
    ops.jobspec_find = NULL;
    json_decref (queue);
    json_decref (deps);
    json_decref (spec);
}

int main (void)
{
    core_runtime_init (&rt, &ops);
    test_get_set ();
    test_rest_now ();
    test_rest_later ();
    test_hot_set ();
    test_apply ();
    test_validate ();
    test_redacted ();
    test_dependencies ();
    test_own ();
    test_source ();
    test_from_source ();
    test_dependencies_shared ();

    core_runtime_fini (&rt);
    done_testing ();
}
