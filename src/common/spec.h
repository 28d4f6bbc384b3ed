/* Jobspec storage: a job's jobspec as a tree while plugins read it; at
 * rest (the SPEC_HOT most recently used trees stay) as the host's recipe
 * for it and the updates applied since, or else as compact text; and
 * changes to it: dotted-key updates, copied on write where someone else
 * holds the objects.  Called by the modules above job.c; calls job.c,
 * compact.c, update_memo.c (an update's text written once), jsonpool and
 * log.c only. */
#ifndef JOBTAP_SPEC_H
#define JOBTAP_SPEC_H

#include <stdbool.h>
#include <jansson.h>

struct job;
struct runtime;
struct jobtap_spec_scalar;

/* A job keeps the tree through submit and job.new, where plugins read it,
 * then only the host's recipe and the updates since, or the text
 * (job_spec_rest, never on the submit path).  A later reader has the host
 * build it again and the updates replayed, or parses the text again; the
 * SPEC_HOT (job.h) most recently read or updated trees stay. */

/* The job's jobspec tree (borrowed; incref it to hold it across anything
 * that may call plugins, which may push it out of the hot set). */
json_t *job_jobspec (struct job *job);
/* Replace the jobspec (steals 'spec' and 'text'; text may be NULL): the
 * host's recipe goes, and the updates are listed anew from here. */
void job_set_jobspec (struct job *job, json_t *spec, char *text);
/* The job's jobspec is the one the host's recipe 'data' (stolen) makes,
 * made when a reader needs the tree; -1 (data freed, EINVAL) if the host
 * cannot make it or len is too large. */
int job_spec_from_source (struct job *job, void *data, size_t len);
/* What the job's jobspec has at 'path' (depth keys), told without making
 * its tree: JOBTAP_SPEC_* (host.h), a scalar in *value (new reference)
 * with JOBTAP_SPEC_VALUE or, when 'scalar' is not NULL, in *scalar with
 * JOBTAP_SPEC_SCALAR (its string the recipe's: to be copied before the
 * job changes).  UNKNOWN whenever only the tree tells: it is made, an
 * update since the recipe may have changed what is there, or the host
 * cannot tell. */
int spec_find (struct job *job,
               const char *const *path,
               int depth,
               json_t **value,
               struct jobtap_spec_scalar *scalar);
/* Whether updates were applied since the recipe was given. */
bool spec_updated (struct job *job);
/* The host's recipe for the jobspec the job was created with, or last
 * given whole (steals 'data'); it takes the place of the jobspec's text.
 * Freed at once if the job has one already, if the host cannot rebuild,
 * or if an update since could not be listed or rests in the text. */
void job_spec_source (struct job *job, void *data, size_t len);
/* The job is past job.new: from now on keep only what gives its jobspec
 * back, now or, with ops.compact_later, at spec_compact_resting. */
void job_spec_rest (struct job *job);
void spec_compact_resting (struct runtime *rt);
/* attributes.system.dependencies of the job's jobspec (new reference, so
 * it outlives the tree while plugins are called), or NULL. */
json_t *job_dependencies (struct job *job);
/* Let go of what job_dependencies kept of the last updates it was asked
 * of (the runtime's fini). */
void spec_memo_clear (struct runtime *rt);

/* An object ready to change: 'o' itself when nobody but its holder holds
 * it, else a copy, or a new object if 'o' is none; a new reference, NULL
 * if out of memory. */
json_t *own_object (json_t *o);
/* job->all_updates ready to change (made on first use). */
json_t *updates_own (struct job *job);
/* Updates tried on the job's jobspec and then undone (job.validate on
 * the updated jobspec): between begin and end, changes are made as
 * usual; end puts back the tree, its text and the list of updates as
 * begin found them. */
struct spec_trial {
    json_t *tree;
    char *text;
    size_t replay_len;
};
void spec_trial_begin (struct job *job, struct spec_trial *t);
void spec_trial_end (struct job *job, struct spec_trial *t);
/* Apply dotted-key updates to the job's jobspec; a null value deletes.
 * Updates that stay (not a trial's) go to job->all_updates too, which
 * spec_find reads to tell which members they changed. */
int spec_apply_updates (struct job *job, json_t *updates);
/* 0 if 'updates' is an object whose keys all start with attributes,
 * resources or tasks; -1 otherwise. */
int validate_updates (json_t *updates);

#endif
