/* Jobspec storage and updates (spec.h). */
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

/* Keep only the text of a job's jobspec (made now if the tree changed). */
static void spec_compact (struct job *job)
{
    job_hot_leave (job);
    if (!job->jobspec)
        return;
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

/* The job's jobspec tree (borrowed; incref it to hold it across anything
 * that may call plugins, which may push it out of the hot set). */
json_t *job_jobspec (struct job *job)
{
    if (!job->jobspec && job->jobspec_text) {
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

/* Replace the jobspec (steals 'spec' and 'text'; text may be NULL). */
void job_set_jobspec (struct job *job, json_t *spec, char *text)
{
    json_decref (job->jobspec);
    free (job->jobspec_text);
    job->jobspec = spec;
    job->jobspec_text = text;
    if (spec && job->spec_resting)
        spec_hot_add (job);
}

/* The job is past job.new: from now on keep its jobspec as text, now or,
 * with ops.compact_later, at the host's next jobtap_host_compact(). */
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

/* The jobspec a job keeps: the caller's object itself (updates change in
 * place only what nobody else holds, own_object), or a copy without
 * attributes.system.environment, which plugins never see (Flux redacts
 * it too). New reference. */
/* Apply dotted-key updates to a job's jobspec; a null value deletes the
 * key.  Objects along each updated path that someone else holds (a
 * callback's args, the submitter, a subtree shared between jobs, the
 * compaction memory) are copied, and keep showing what they showed (the
 * jobspec is unchanged during a callback); the others are changed in
 * place.  Out of memory part way, the updates before stay applied. */
static int spec_apply_pooled (struct job *job, json_t *updates)
{
    json_t *spec = job_jobspec (job);
    json_t *root = spec ? own_object (spec) : NULL;
    const char *key;
    json_t *val;
    int rc = -1;

    if (!root)
        return -1;
    json_object_foreach (updates, key, val) {
        char *path = strdup (key);
        char *saveptr = NULL;
        char *tok, *next;
        json_t *o = root;
        if (!path)
            goto done;
        tok = strtok_r (path, ".", &saveptr);
        while (tok && (next = strtok_r (NULL, ".", &saveptr))) {
            json_t *cur = json_object_get (o, tok);
            json_t *child = own_object (cur);
            if (child && child == cur)
                json_decref (child); /* o's own: changed in place */
            else if (!child || json_object_set_new (o, tok, child) < 0) {
                free (path);
                goto done;
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
    rc = 0;
done:
    job_set_jobspec (job, root, NULL); /* the text kept at rest is stale */
    return rc;
}

int spec_apply_updates (struct job *job, json_t *updates)
{
    int rc;

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

/* attributes.system.dependencies of a job's jobspec: a new reference,
 * so it outlives the jobspec tree while plugins are called. */
json_t *job_dependencies (struct job *job)
{
    return json_incref (
        json_object_get (json_object_get (json_object_get (job_jobspec (job),
                                                           "attributes"),
                                          "system"),
                         "dependencies"));
}
