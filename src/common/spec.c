/* Jobspec storage and updates (spec.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <flux/core.h>

#include "compact.h"
#include "host.h"
#include "job.h"
#include "log.h"
#include "runtime.h"
#include "spec.h"
#include "strbuf.h"
#include "update_memo.h"

/* The updates' objects let go: from now on they are read from the list's
 * text. */
static void spec_live_drop (struct job *job)
{
    json_decref (job->spec_live);
    job->spec_live = NULL;
}

/* Let the host's recipe and the list of updates go. */
static void spec_source_drop (struct job *job)
{
    spec_live_drop (job);
    strbuf_destroy (job->spec_replay);
    job->spec_replay = NULL;
    job->spec_replay_last_of = NULL;
    free (job->spec_source);
    job->spec_source = NULL;
}

/* The host's recipe and the updates since no longer give the tree (the
 * text does from now on, or an update could not be listed). */
static void spec_unsource (struct job *job)
{
    spec_source_drop (job);
    job->spec_unreplayable = true;
}

/* Whether the host's recipe and the updates since give the job's tree. */
static bool spec_rebuildable (struct job *job)
{
    return job->spec_source != NULL;
}

/* Keep only what gives the tree back: the host's recipe and the updates
 * since, or else the tree's text (made now if the tree changed). */
static void spec_compact (struct job *job)
{
    job_hot_leave (job);
    spec_live_drop (job);
    if (!job->jobspec)
        return;
    if (spec_rebuildable (job)) {
        json_decref (job->jobspec);
        job->jobspec = NULL;
        return;
    }
    /* The text keeps it from now on.  With no update made since it was
     * given, a recipe given later still describes it. */
    if (job->spec_replay)
        spec_unsource (job);
    if (!job->jobspec_text)
        job->jobspec_text = compact_dumps (job->rt->compact_memo, job->jobspec);
    if (job->jobspec_text) { /* else out of memory: keep the tree */
        json_decref (job->jobspec);
        job->jobspec = NULL;
    }
}

/* The job's tree stays, in the ring's next slot: its holder gives it up. */
static void spec_hot_add (struct job *job)
{
    struct job *victim;

    if (job->hot_slot)
        return;
    if ((victim = job_hot_next_victim (job->rt)))
        spec_compact (victim);
    job_hot_enter (job);
}

static int apply_dotted (json_t *root, json_t *updates);

/* The updates of the job's replay list applied to spec, in order; -1
 * with e set if one cannot be read or applied. */
static int spec_replay_apply (struct job *job, json_t *spec, json_error_t *e)
{
    const struct strbuf *b = job->spec_replay;
    size_t off = 0;

    if (json_is_object (job->spec_live)) /* the one update */
        return apply_dotted (spec, job->spec_live);
    if (job->spec_live) {
        size_t i;
        json_t *u;
        json_array_foreach (job->spec_live, i, u) {
            if (apply_dotted (spec, u) < 0)
                return -1;
        }
        return 0;
    }

    while (b && off < b->len) {
        /* one value at a time: e->position says where it ended */
        json_t *u = json_loadb (b->data + off, b->len - off,
                                JSON_DISABLE_EOF_CHECK, e);
        int rc = u ? apply_dotted (spec, u) : -1;
        json_decref (u);
        if (rc < 0 || e->position <= 0)
            return -1;
        off += (size_t)e->position;
    }
    return 0;
}

/* The tree again from the host's recipe, and the updates applied since
 * replayed in their order. */
static json_t *spec_rebuild (struct job *job)
{
    struct runtime *rt = job->rt;
    json_error_t e = { .text = "the host's recipe gave none" };
    json_t *spec;

    jobtap_host_json_pool_begin ();
    spec = rt->ops->jobspec_rebuild (job->spec_source, job->spec_source_len,
                                     rt->ops_arg);
    if (spec && spec_replay_apply (job, spec, &e) < 0) {
        json_decref (spec);
        spec = NULL;
    }
    jobtap_host_json_pool_end ();
    if (!spec)
        runtime_log (LOG_ERR, "jobtap: job %ju: jobspec not rebuilt: %s",
                     (uintmax_t)job->id, e.text);
    return spec;
}

/* The job's jobspec tree (borrowed; incref it to hold it across anything
 * that may call plugins, which may push it out of the hot set). */
json_t *job_jobspec (struct job *job)
{
    if (!job->jobspec && spec_rebuildable (job))
        job->jobspec = spec_rebuild (job);
    else if (!job->jobspec && job->jobspec_text) {
        json_error_t e;
        jobtap_host_json_pool_begin ();
        job->jobspec = json_loads (job->jobspec_text, 0, &e);
        jobtap_host_json_pool_end ();
        if (!job->jobspec) {
            runtime_log (LOG_ERR,
                         "jobtap: job %ju: stored jobspec unreadable: %s",
                         (uintmax_t)job->id,
                         e.text);
            return NULL;
        }
    }
    if (job->jobspec && job->spec_resting)
        spec_hot_add (job);
    return job->jobspec;
}

/* The job's tree is now 'spec' (stolen) with 'text' (stolen, may be
 * NULL). */
static void spec_take (struct job *job, json_t *spec, char *text)
{
    json_decref (job->jobspec);
    free (job->jobspec_text);
    job->jobspec = spec;
    job->jobspec_text = text;
    if (spec && job->spec_resting)
        spec_hot_add (job);
}

void job_set_jobspec (struct job *job, json_t *spec, char *text)
{
    /* a new jobspec: the updates from now on are what a recipe for it,
     * given next, needs */
    spec_source_drop (job);
    job->spec_unreplayable = false;
    spec_take (job, spec, text);
}

void spec_trial_begin (struct job *job, struct spec_trial *t)
{
    t->tree = json_incref (job_jobspec (job));
    t->text = job->jobspec_text; /* kept aside: the trial changes the tree */
    job->jobspec_text = NULL;
    t->replay_len = job->spec_replay ? job->spec_replay->len : 0;
    spec_live_drop (job); /* the list's text alone is put back */
}

void spec_trial_end (struct job *job, struct spec_trial *t)
{
    spec_live_drop (job); /* it may have the trial's updates */
    spec_take (job, t->tree, t->text);
    job->spec_replay_last_of = NULL;
    /* the trial's updates leave the list (if one could not be listed,
     * the recipe went, and stays gone) */
    if (job->spec_replay && t->replay_len == 0) {
        strbuf_destroy (job->spec_replay);
        job->spec_replay = NULL;
    }
    else if (job->spec_replay) {
        job->spec_replay->len = t->replay_len;
        job->spec_replay->data[t->replay_len] = '\0';
    }
}

int job_spec_from_source (struct job *job, void *data, size_t len)
{
    if (len > UINT32_MAX || !job->rt->ops->jobspec_rebuild) {
        free (data);
        errno = EINVAL;
        return -1;
    }
    job_set_jobspec (job, NULL, NULL);
    job->spec_source = data;
    job->spec_source_len = (uint32_t)len;
    return 0;
}

/* Where the dotted update key k lies against path (depth keys). */
enum key_place {
    KEY_APART,  /* neither on the way to path nor below it */
    KEY_ABOVE,  /* names path or a member on the way to it */
    KEY_BELOW,  /* names a member below path: path is an object */
};

static enum key_place key_against_path (const char *k,
                                        const char *const *path,
                                        int depth)
{
    for (int i = 0; i < depth; i++) {
        const char *p = path[i];
        for (; *p && *p == *k; p++, k++) {
            if (*p == '.')
                return KEY_ABOVE; /* a key no update can name: say the worst */
        }
        if (*p) /* k parts from path[i] (or ends) */
            return strchr (p, '.') ? KEY_ABOVE : KEY_APART;
        if (*k == '\0')
            return KEY_ABOVE;
        if (*k != '.')
            return KEY_APART;
        k++;
    }
    return KEY_BELOW;
}

/* What the updates listed since the recipe do to path: KEY_ABOVE if one
 * may have changed it, KEY_BELOW if it is an object now, else KEY_APART.
 * job->all_updates has every key of the list (and earlier ones). */
static enum key_place updates_against_path (struct job *job,
                                            const char *const *path,
                                            int depth)
{
    enum key_place worst = KEY_APART;
    const char *key;
    json_t *val;

    if (!job->spec_replay || job->spec_replay->len == 0)
        return KEY_APART;
    if (!json_is_object (job->all_updates))
        return KEY_ABOVE;
    json_object_foreach (job->all_updates, key, val) {
        enum key_place place = key_against_path (key, path, depth);
        if (place == KEY_ABOVE)
            return KEY_ABOVE;
        if (place == KEY_BELOW)
            worst = KEY_BELOW;
    }
    return worst;
}

bool spec_updated (struct job *job)
{
    return job->spec_replay && job->spec_replay->len > 0;
}

/* What the host's recipe tells at path, given what the updates listed
 * since it did there ('updated', updates_against_path). */
static int find_in_source (struct job *job,
                           const char *const *path,
                           int depth,
                           json_t **value,
                           struct jobtap_spec_scalar *scalar,
                           enum key_place updated)
{
    int kind;

    /* an update listed since the recipe is only in the tree made from
     * both, unless it is elsewhere */
    if (updated == KEY_ABOVE)
        return JOBTAP_SPEC_UNKNOWN;
    kind = job->rt->ops->jobspec_find (job->spec_source, job->spec_source_len,
                                       path, depth, value, scalar,
                                       job->rt->ops_arg);
    if (((kind == JOBTAP_SPEC_VALUE && *value)
         || (kind == JOBTAP_SPEC_SCALAR && scalar))
        && updated == KEY_APART)
        return kind;
    json_decref (*value);
    *value = NULL;
    if (kind == JOBTAP_SPEC_OBJECT
        || (kind == JOBTAP_SPEC_ABSENT && updated == KEY_APART))
        return kind;
    return JOBTAP_SPEC_UNKNOWN;
}

/* Whether the recipe may answer: a tree at hand is read as it is. */
static bool source_readable (struct job *job)
{
    return !job->jobspec && spec_rebuildable (job)
           && job->rt->ops->jobspec_find;
}

int spec_find (struct job *job,
               const char *const *path,
               int depth,
               json_t **value,
               struct jobtap_spec_scalar *scalar)
{
    *value = NULL;
    if (!source_readable (job))
        return JOBTAP_SPEC_UNKNOWN;
    return find_in_source (job, path, depth, value, scalar,
                           updates_against_path (job, path, depth));
}

void job_spec_source (struct job *job, void *data, size_t len)
{
    if (job->spec_unreplayable || job->spec_source || len > UINT32_MAX
        || !job->rt->ops->jobspec_rebuild) {
        free (data);
        return;
    }
    job->spec_source = data;
    job->spec_source_len = (uint32_t)len;
    free (job->jobspec_text); /* the recipe and the updates give it now */
    job->jobspec_text = NULL;
}

/* The job is past job.new: from now on keep only what gives its jobspec
 * back (spec_compact), now or, with ops.compact_later, at the host's next
 * jobtap_host_compact(). */
void job_spec_rest (struct job *job)
{
    struct runtime *rt = job->rt;

    job->spec_resting = true;
    if (!rt->ops->compact_later) {
        spec_compact (job);
        return;
    }
    if (job->jobspec)
        fifo_push (rt->jobs->fifo, FIFO_REST, job);
}

void spec_compact_resting (struct runtime *rt)
{
    for (;;) {
        struct job *job;
        runtime_lock ();
        if ((job = rt->jobs->fifo[FIFO_REST].head)) {
            fifo_unlink (rt->jobs->fifo, FIFO_REST, job);
            if (!job->hot_slot) /* read again since: the hot set has it */
                spec_compact (job);
        }
        runtime_unlock ();
        if (!job)
            break;
    }
}

/* An object ready to change: 'o' itself when nobody but its holder (the
 * one about to change it) holds it, else a copy, or a new object if 'o'
 * is none; a new reference, NULL if out of memory.  Jobspecs and submit
 * updates are shared, not copied, and copied on write this way. */
json_t *own_object (json_t *o)
{
    if (!json_is_object (o))
        return json_object ();
    return o->refcount == 1 ? json_incref (o) : json_copy (o);
}

/* job->all_updates ready to change: made on first use, copied first if
 * the caller of jobtap_host_submit still holds it.  NULL if out of
 * memory. */
json_t *updates_own (struct job *job)
{
    json_t *o = own_object (job->all_updates);

    if (o) {
        json_decref (job->all_updates);
        job->all_updates = o;
    }
    return o;
}

/* Apply dotted-key updates to root, which its caller owns; a null value
 * deletes the key.  Objects along each updated path that someone else
 * holds (a callback's args, the submitter, a subtree shared between jobs,
 * the compaction memory) are copied, and keep showing what they showed
 * (the jobspec is unchanged during a callback); the others are changed in
 * place.  Out of memory part way, the updates before stay applied. */
static int apply_dotted (json_t *root, json_t *updates)
{
    const char *key;
    json_t *val;

    json_object_foreach (updates, key, val) {
        char *path = strdup (key);
        char *saveptr = NULL;
        char *tok, *next;
        json_t *o = root;
        if (!path)
            return -1;
        tok = strtok_r (path, ".", &saveptr);
        while (tok && (next = strtok_r (NULL, ".", &saveptr))) {
            json_t *cur = json_object_get (o, tok);
            json_t *child = own_object (cur);
            if (child && child == cur)
                json_decref (child); /* o's own: changed in place */
            else if (!child || json_object_set_new (o, tok, child) < 0) {
                free (path);
                return -1;
            }
            o = child;
            tok = next;
        }
        if (tok) {
            if (json_is_null (val))
                json_object_del (o, tok);
            else
                json_object_set (o, tok, val);
        }
        free (path);
    }
    return 0;
}

/* The updates in the job's list of those applied since its jobspec was
 * given (created or replaced whole), which with the host's recipe give
 * the tree back (spec_rebuild).  -1 if out of memory: the list is as it
 * was. */
static int spec_replay_add (struct job *job, json_t *updates)
{
    struct strbuf *b = job->spec_replay;
    bool first;

    /* a host that cannot rebuild never gives a recipe to replay on */
    if (job->spec_unreplayable || !job->rt->ops->jobspec_rebuild)
        return 0;
    if (!b && !(b = job->spec_replay = strbuf_new ()))
        return -1;
    first = b->len == 0;
    size_t start = b->len;
    size_t kept_len;
    const char *kept = update_memo_text (job->rt->update_memo, updates,
                                         &kept_len);
    if (kept) {
        /* written once for every job that packed the same update; a
         * first one in a block of its exact size, as compact_append
         * makes it */
        if (!b->data && (b->data = malloc (kept_len + 1)))
            b->cap = kept_len + 1;
        if (kept_len >= b->cap - b->len && strbuf_grow (b, kept_len) < 0)
            return -1; /* (the list as it was) */
        strbuf_put (b, kept, kept_len);
    }
    else if (compact_append (NULL, updates, &b->data, &b->len, &b->cap) < 0)
        return -1;
    job->spec_replay_last = start;
    job->spec_replay_last_of = updates;
    /* objects too while the job is not at rest, if they are all there:
     * the first alone, an array of them from the second on */
    if (first && !job->spec_resting && !job->spec_live) {
        job->spec_live = json_incref (updates);
        return 0;
    }
    if (!job->spec_live)
        return 0;
    if (json_is_object (job->spec_live)) {
        json_t *one = job->spec_live, *list = json_array ();
        job->spec_live = NULL;
        /* (the append takes 'one' also when it fails) */
        if (json_array_append_new (list, one) < 0) {
            json_decref (list);
            return 0;
        }
        job->spec_live = list;
    }
    if (json_array_append (job->spec_live, updates) < 0)
        spec_live_drop (job);
    return 0;
}

static int spec_apply_pooled (struct job *job, json_t *updates)
{
    /* a tree not made yet is made with the updates when a reader needs
     * it: listing them is enough */
    if (!job->jobspec && spec_rebuildable (job)
        && spec_replay_add (job, updates) == 0)
        return 0;

    json_t *spec = job_jobspec (job);
    json_t *root = spec ? own_object (spec) : NULL;
    int rc;

    if (!root)
        return -1;
    if ((rc = apply_dotted (root, updates)) < 0
        || spec_replay_add (job, updates) < 0)
        spec_unsource (job); /* the tree has what the list cannot give */
    spec_take (job, root, NULL); /* the text kept at rest is stale */
    return rc;
}

int spec_apply_updates (struct job *job, json_t *updates)
{
    int rc;

    job->spec_replay_last_of = NULL;
    jobtap_host_json_pool_begin ();
    rc = spec_apply_pooled (job, updates);
    jobtap_host_json_pool_end ();
    return rc;
}

static bool valid_update_key (const char *key)
{
    static const char *roots[] = { "attributes", "resources", "tasks" };
    for (size_t i = 0; i < 3; i++) {
        size_t n = strlen (roots[i]);
        if (!strncmp (key, roots[i], n) && (key[n] == '\0' || key[n] == '.'))
            return true;
    }
    return false;
}

int validate_updates (json_t *updates)
{
    const char *key;
    json_t *val;
    if (!json_is_object (updates))
        return -1;
    json_object_foreach (updates, key, val) {
        if (!valid_update_key (key))
            return -1;
    }
    return 0;
}

/* updates_against_path for the dependencies' path, kept for the
 * updates object it was asked of, which rt holds (own_object copies an
 * object someone else holds before changing it): a policy that gives
 * jobs the same default gives them one object, so most submissions ask
 * of the same one.  Runtime lock. */
static enum key_place deps_against_updates (struct job *job,
                                            const char *const *path)
{
    struct runtime *rt = job->rt;
    enum key_place place;

    if (!spec_updated (job) || !json_is_object (job->all_updates))
        return updates_against_path (job, path, 3);
    if (job->all_updates == rt->deps_updates)
        return (enum key_place)rt->deps_place;
    place = updates_against_path (job, path, 3);
    json_decref (rt->deps_updates);
    rt->deps_updates = json_incref (job->all_updates);
    rt->deps_place = (int)place;
    return place;
}

void spec_memo_clear (struct runtime *rt)
{
    json_decref (rt->deps_updates);
    rt->deps_updates = NULL;
}

/* attributes.system.dependencies of a job's jobspec: a new reference,
 * so it outlives the jobspec tree while plugins are called. */
json_t *job_dependencies (struct job *job)
{
    static const char *const path[] = {"attributes", "system",
                                       "dependencies"};
    json_t *v = NULL;

    if (source_readable (job)) {
        switch (find_in_source (job, path, 3, &v, NULL,
                                deps_against_updates (job, path))) {
        case JOBTAP_SPEC_ABSENT:
            return NULL;
        case JOBTAP_SPEC_VALUE:
            return v;
        }
    }
    return json_incref (
        json_object_get (json_object_get (json_object_get (job_jobspec (job),
                                                           "attributes"),
                                          "system"),
                         "dependencies"));
}
