/* The jobs' events kept across scheduler restarts (store.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <jansson.h>

#include "compact.h"
#include "host.h"
#include "host_error.h"
#include "job.h"
#include "log.h"
#include "runtime.h"
#include "state.h"
#include "store.h"
#include "store_file.h"
#include "strbuf.h"

/* A journal this large (and larger than the snapshot) is merged. */
#define JOURNAL_MERGE_BYTES (8u << 20)
/* What a store that cannot write keeps for the next try. */
#define UNWRITTEN_MAX (64u << 20)
/* Buffers up to this size are kept for the next records once written
 * (a hook flushes every submission's few hundred bytes). */
#define SPARE_MAX (64u << 10)

/* The seconds of the last timestamp written, as text: a job's events
 * come within the same second as a rule, so most timestamps write only
 * their microseconds.  Runtime lock. */
struct seconds_text {
    uint64_t sec;
    size_t len; /* 0: none yet */
    char digits[20];
};

/* A known event's name as a JSON string, copied whole: no strlen and no
 * copy of a length known only at run time for each entry. */
#define QUOTED_NAME_MAX 24
struct quoted_name {
    char text[QUOTED_NAME_MAX];
    size_t len;
};

struct store {
    char *dir;
    pthread_mutex_t io;   /* one writer of the files at a time */
    int fd;               /* journal.<gen>, append only */
    unsigned long gen;
    size_t journal_bytes; /* in journal.<gen> */
    size_t snapshot_bytes;
    bool merging;
    bool write_failed;    /* logged once until a write succeeds */
    bool record_dropped;  /* logged once until a record is kept */
    bool unsynced;        /* written since the last fdatasync */
    bool line_cut;        /* the journal ends in a line cut short whose
                             rest is not kept: the next write ends it */
    struct strbuf buf;    /* recorded, not written (runtime lock) */
    struct strbuf spare;  /* the last written buffer, emptied: the next
                             flush's buf (io lock) */
    /* The last line of buf is this job's events line, ending at
     * open_end: the job's next event joins it (0: no such line). */
    flux_jobid_t open_id;
    size_t open_end;
    struct seconds_text seconds; /* of the last timestamp recorded */
    struct quoted_name quoted[EV_NKNOWN]; /* the known events' names */
    struct strbuf *spare_pending; /* for the next provisional job */
    json_t *kept;         /* "<id>" -> entries, until restore takes them */
};

/* The most put_time_at writes. */
#define TIME_MAX 32

/* A timestamp to the microsecond, as Flux's eventlogs have them, written
 * at p; returns the end. */
static char *put_time_at (char *p, double t, struct seconds_text *last)
{
    static const char pairs[] = /* "00" to "99" */
        "0001020304050607080910111213141516171819"
        "2021222324252627282930313233343536373839"
        "4041424344454647484950515253545556575859"
        "6061626364656667686970717273747576777879"
        "8081828384858687888990919293949596979899";
    if (!(t >= 0 && t < 1e15))
        return memcpy (p, "0.0", 3), p + 3;
    uint64_t us = (uint64_t)(t * 1e6 + 0.5);
    uint64_t sec = us / 1000000;
    uint32_t f = (uint32_t)(us - sec * 1000000);
    if (!last->len || last->sec != sec) {
        last->sec = sec;
        last->len = (size_t)(put_u64_at (last->digits, sec) - last->digits);
    }
    memcpy (p, last->digits, sizeof (last->digits)); /* (TIME_MAX has room) */
    p += last->len;
    *p++ = '.';
    memcpy (p, pairs + 2 * (f / 10000), 2);
    memcpy (p + 2, pairs + 2 * (f / 100 % 100), 2);
    memcpy (p + 4, pairs + 2 * (f % 100), 2);
    return p + 6;
}

static void put_time (struct strbuf *b,
                      double t,
                      struct seconds_text *last)
{
    char *p = strbuf_room (b, TIME_MAX);
    if (p)
        strbuf_wrote (b, (size_t)(put_time_at (p, t, last) - p));
}

/* A string literal s written at p; the end. */
#define PUT_LITERAL(p, s)                                                      \
    ((char *)memcpy ((p), (s), sizeof (s) - 1) + sizeof (s) - 1)

/* A JSON string of len bytes written at p (room for 6 per byte and the
 * quotes); returns the end. Event names are the only text not from
 * compact.c. */
static char *put_string_at (char *p, const char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    *p++ = '"';
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            *p++ = '\\';
            *p++ = (char)c;
        }
        else if (c < 0x20) {
            memcpy (p, "\\u00", 4);
            p[4] = hex[c >> 4];
            p[5] = hex[c & 15];
            p += 6;
        }
        else
            *p++ = (char)c;
    }
    *p++ = '"';
    return p;
}

static char *put_i64_at (char *p, int64_t v)
{
    if (v < 0)
        *p++ = '-';
    return put_u64_at (p, v < 0 ? 0 - (uint64_t)v : (uint64_t)v);
}

/* A context of numbers (job.h), as event_context_of would make it. */
static void put_numbers_context (struct strbuf *b, const struct event *ev)
{
    const int64_t *n = ev->numbers;
    char *p = strbuf_room (b, 96), *start = p;
    if (!p)
        return;
    if (ev->numbers_of == NUMBERS_SUBMIT) {
        p = put_i64_at (PUT_LITERAL (p, "{\"userid\":"), n[0]);
        p = put_i64_at (PUT_LITERAL (p, ",\"urgency\":"), n[1]);
        if (n[2] >= 0)
            p = put_i64_at (PUT_LITERAL (p, ",\"flags\":"), n[2]);
    }
    else
        p = put_i64_at (PUT_LITERAL (p, "{\"priority\":"), n[0]);
    *p++ = '}';
    strbuf_wrote (b, (size_t)(p - start));
}

/* One entry, {"timestamp":T,"name":N,"context":C}, its head written in
 * place; the context from its numbers, as the text the job's update was
 * just listed as, or by the compact writer. */
static void put_entry (struct strbuf *b,
                       struct job *job,
                       const struct event *ev)
{
    struct runtime *rt = job->rt;
    static const char ts[] = "{\"timestamp\":", nm[] = ",\"name\":",
                      cx[] = ",\"context\":";
    const struct quoted_name *known =
        ev->kind >= 0 ? &rt->store->quoted[ev->kind] : NULL;
    size_t len = known ? 0 : strlen (ev->name);
    char *p = strbuf_room (b, sizeof (ts) + TIME_MAX + sizeof (nm)
                                  + (known ? QUOTED_NAME_MAX : 2 + 6 * len)
                                  + sizeof (cx));
    if (!p)
        return;
    char *start = p;
    memcpy (p, ts, sizeof (ts) - 1);
    p = put_time_at (p + sizeof (ts) - 1, ev->timestamp, &rt->store->seconds);
    memcpy (p, nm, sizeof (nm) - 1);
    p += sizeof (nm) - 1;
    if (known) /* nothing to escape (the room has QUOTED_NAME_MAX) */
        p = (char *)memcpy (p, known->text, QUOTED_NAME_MAX) + known->len;
    else
        p = put_string_at (p, ev->name, len);
    if (ev->context || ev->numbers_of != NUMBERS_NONE) {
        memcpy (p, cx, sizeof (cx) - 1);
        p += sizeof (cx) - 1;
    }
    strbuf_wrote (b, (size_t)(p - start));
    if (!ev->context && ev->numbers_of != NUMBERS_NONE)
        put_numbers_context (b, ev);
    else if (ev->kind == EV_JOBSPEC_UPDATE && ev->context
             && ev->context == job->spec_replay_last_of && job->spec_replay
             && job->spec_replay_last <= job->spec_replay->len)
        /* the text spec.c has just listed the update as */
        strbuf_put (b, job->spec_replay->data + job->spec_replay_last,
                    job->spec_replay->len - job->spec_replay_last);
    else if (ev->context
        && compact_append (rt->compact_memo, ev->context, &b->data, &b->len,
                           &b->cap)
               < 0)
        /* out of memory: an entry without its context would restore
         * wrong, so the record is not kept (record_end) */
        b->dropped = true;
    strbuf_put (b, "}", 1);
}

/* --- Recording (runtime lock held) -------------------------------------- */

/* A history begins with submit: the job's user, urgency and time. */
static void put_submit (struct strbuf *b, struct job *job)
{
    strbuf_puts (b, "{\"timestamp\":");
    put_time (b, job->t_submit, &job->rt->store->seconds);
    strbuf_puts (b, ",\"name\":\"submit\",\"context\":{\"userid\":");
    strbuf_put_u64 (b, job->userid);
    strbuf_puts (b, ",\"urgency\":");
    strbuf_put_u64 (b, (uint64_t)(job->urgency < 0 ? 0 : job->urgency));
    strbuf_puts (b, ",\"flags\":0}},");
}

static void line_begin (struct strbuf *b, flux_jobid_t id, const char *kind)
{
    strbuf_puts (b, "{\"id\":");
    strbuf_put_u64 (b, id);
    strbuf_puts (b, kind);
}

static void drop_kept_one (struct store *s, flux_jobid_t id)
{
    char key[24];
    if (!s->kept)
        return;
    snprintf (key, sizeof (key), "%" PRIu64, (uint64_t)id);
    json_object_del (s->kept, key);
}

/* A record written into b from 'start' on: true, or false when a write
 * of it was dropped (out of memory), and then none of it is kept: a
 * line cut short would make the rest of the journal unreadable. */
static bool record_end (struct store *s,
                        struct strbuf *b,
                        size_t start,
                        struct job *job,
                        const struct event *ev)
{
    if (!b->dropped) {
        s->record_dropped = false;
        return true;
    }
    strbuf_truncate (b, start);
    b->dropped = false;
    if (!s->record_dropped && job_is_bound (job))
        runtime_log (LOG_ERR, "jobtap: out of memory: JobId=%ju's %s entry "
                     "is not kept (a restart would not see it)",
                     (uintmax_t)job->id, ev ? ev->name : "forget");
    else if (!s->record_dropped)
        runtime_log (LOG_ERR, "jobtap: out of memory: a new job's %s entry "
                     "is not kept (a restart would not see it)", ev->name);
    s->record_dropped = true;
    return false;
}

/* The line just written to s->buf, job's events, may take more. */
static void line_open (struct store *s, struct job *job)
{
    s->open_id = job->id;
    s->open_end = s->buf.len;
}

void store_record_event (struct job *job, struct event *ev)
{
    struct store *s = job->rt->store;
    struct strbuf *b;

    if (!job_is_bound (job)) {
        /* kept with the job until it has its id */
        if (!job->store_pending && (job->store_pending = s->spare_pending))
            s->spare_pending = NULL;
        else if (!job->store_pending
                 && !(job->store_pending = strbuf_new ()))
            return;
        b = job->store_pending;
        if (!b->cap) /* room for a submission's few entries at once */
            (void)strbuf_room (b, 480);
        size_t start = b->len;
        if (b->len)
            strbuf_put (b, ",", 1);
        put_entry (b, job, ev);
        record_end (s, b, start, job, ev);
        return;
    }
    b = &s->buf;
    size_t start = b->len;
    if (!job->store_started) {
        /* the first line of a job's history replaces any earlier job of
         * that id (requeued, or lost by the scheduler) */
        line_begin (b, job->id, ",\"reset\":true,\"e\":[");
        /* a kept history of that id is a lost job's: dropped now, not
         * by a later forget line that would erase this job's history */
        drop_kept_one (s, job->id);
        if (job->store_pending && job->store_pending->len) {
            strbuf_put (b, job->store_pending->data, job->store_pending->len);
            strbuf_put (b, ",", 1);
        }
        else if (ev->kind != EV_SUBMIT)
            put_submit (b, job); /* submitted before the store opened */
        put_entry (b, job, ev);
        strbuf_puts (b, "]}\n");
        if (!record_end (s, b, start, job, ev))
            return; /* the history begins again with the next event */
        line_open (s, job);
        if (!s->spare_pending && job->store_pending
            && job->store_pending->data
            && job->store_pending->cap <= SPARE_MAX) {
            job->store_pending->len = 0;
            job->store_pending->data[0] = '\0';
            s->spare_pending = job->store_pending;
        }
        else
            strbuf_destroy (job->store_pending);
        job->store_pending = NULL;
        job->store_started = true;
        return;
    }
    if (s->open_end && s->open_end == b->len && s->open_id == job->id) {
        /* the events of one cascade share a line: its "]}\n" goes and
         * comes back after this entry */
        start = b->len - 3;
        strbuf_truncate (b, start);
        strbuf_put (b, ",", 1);
        put_entry (b, job, ev);
        strbuf_puts (b, "]}\n");
        if (!record_end (s, b, start, job, ev))
            strbuf_put (b, "]}\n", 3); /* (within the room it had) */
        s->open_end = b->len;
        return;
    }
    line_begin (b, job->id, ",\"e\":[");
    put_entry (b, job, ev);
    strbuf_puts (b, "]}\n");
    if (record_end (s, b, start, job, ev))
        line_open (s, job);
}

void store_forget_job (struct job *job)
{
    struct store *s = job->rt->store;
    if (!job_is_bound (job) || !job->store_started)
        return;
    size_t start = s->buf.len;
    s->open_end = 0;
    line_begin (&s->buf, job->id, ",\"forget\":true}\n");
    record_end (s, &s->buf, start, job, NULL);
    job->store_started = false;
}

void store_mark_kept (struct job *job)
{
    job->store_started = true;
}

json_t *store_take_kept (struct runtime *rt, flux_jobid_t id)
{
    struct store *s = rt->store;
    char key[24];
    json_t *log;

    if (!s || !s->kept)
        return NULL;
    snprintf (key, sizeof (key), "%" PRIu64, (uint64_t)id);
    if ((log = json_incref (json_object_get (s->kept, key))))
        json_object_del (s->kept, key);
    return log;
}

bool store_has_kept (struct runtime *rt, flux_jobid_t id)
{
    struct store *s = rt->store;
    char key[24];

    if (!s || !s->kept)
        return false;
    snprintf (key, sizeof (key), "%" PRIu64, (uint64_t)id);
    return json_object_get (s->kept, key) != NULL;
}

int store_drop_kept (struct runtime *rt)
{
    struct store *s = rt->store;
    const char *key;
    json_t *v;
    int n = 0;

    if (!s || !s->kept)
        return 0;
    s->open_end = 0;
    json_object_foreach (s->kept, key, v) {
        strbuf_puts (&s->buf, "{\"id\":");
        strbuf_puts (&s->buf, key);
        strbuf_puts (&s->buf, ",\"forget\":true}\n");
        n++;
    }
    json_decref (s->kept);
    s->kept = NULL;
    return n;
}

int store_drop_missing (struct runtime *rt,
                        bool (*exists) (uint64_t id, void *arg),
                        void *arg)
{
    struct store *s = rt->store;
    const char *key;
    json_t *v;
    void *tmp;
    int n = 0;

    if (!s || !s->kept)
        return 0;
    s->open_end = 0;
    json_object_foreach_safe (s->kept, tmp, key, v) {
        if (exists ((uint64_t)strtoull (key, NULL, 10), arg))
            continue;
        strbuf_puts (&s->buf, "{\"id\":");
        strbuf_puts (&s->buf, key);
        strbuf_puts (&s->buf, ",\"forget\":true}\n");
        json_object_del (s->kept, key);
        n++;
    }
    return n;
}

static int open_journal (struct store *s, jobtap_host_error_t *err)
{
    char name[40], *p;

    snprintf (name, sizeof (name), "journal.%lu", s->gen);
    if (!(p = store_path (s->dir, name)))
        return errprintf (err, "out of memory");
    s->fd = open (p, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (s->fd < 0) {
        errprintf (err, "%s: %s", p, strerror (errno));
        free (p);
        return -1;
    }
    free (p);
    s->journal_bytes = 0;
    return 0;
}

int store_open (struct runtime *rt, const char *dir, jobtap_host_error_t *err)
{
    struct store *s;
    unsigned long last = 0;

    if (rt->store) {
        errno = EEXIST;
        return errprintf (err, "the state store is already open");
    }
    if (mkdir (dir, 0700) < 0 && errno != EEXIST)
        return errprintf (err, "%s: %s", dir, strerror (errno));
    if (!(s = calloc (1, sizeof (*s))) || !(s->dir = strdup (dir))) {
        free (s);
        return errprintf (err, "out of memory");
    }
    s->fd = -1;
    pthread_mutex_init (&s->io, NULL);
    for (int kind = 0; kind < EV_NKNOWN; kind++) {
        struct quoted_name *q = &s->quoted[kind];
        q->len = (size_t)snprintf (q->text, sizeof (q->text), "\"%s\"",
                                   event_name (kind));
        if (q->len >= sizeof (q->text)) {
            errprintf (err, "event name %s is too long", event_name (kind));
            goto fail;
        }
    }
    /* Everything kept goes into a fresh snapshot now, so the journals it
     * came from go and this process starts a journal of its own. */
    if (!(s->kept = store_read_dir (dir, 0, &last, err)))
        goto fail;
    s->gen = last + 1;
    if (store_write_snapshot (dir, s->kept, s->gen, &s->snapshot_bytes, err) < 0)
        goto fail;
    store_unlink_journals_below (dir, s->gen);
    if (open_journal (s, err) < 0)
        goto fail;
    rt->store = s;
    return 0;
fail:
    json_decref (s->kept);
    pthread_mutex_destroy (&s->io);
    free (s->dir);
    free (s);
    return -1;
}

void store_close (struct runtime *rt)
{
    struct store *s = rt->store;
    if (!s)
        return;
    (void)store_flush (rt, false);
    rt->store = NULL;
    if (s->fd >= 0)
        close (s->fd);
    json_decref (s->kept);
    strbuf_free (&s->buf);
    strbuf_free (&s->spare);
    strbuf_destroy (s->spare_pending);
    pthread_mutex_destroy (&s->io);
    free (s->dir);
    free (s);
}

/* Ends the line a failed write cut short (its rest not kept), so the
 * lines written after it read back. */
static int end_cut_line (struct store *s)
{
    if (!s->line_cut)
        return 0;
    if (store_write_all (s->fd, "\n", 1, NULL) < 0)
        return -1;
    s->line_cut = false;
    s->journal_bytes++;
    return 0;
}

ssize_t store_flush (struct runtime *rt, bool sync)
{
    struct store *s = rt->store;
    struct strbuf b;
    ssize_t rc = 0;

    if (!s)
        return 0;
    pthread_mutex_lock (&s->io);
    runtime_lock ();
    b = s->buf;
    s->buf = s->spare;
    s->open_end = 0;
    runtime_unlock ();
    s->spare = (struct strbuf){0};
    if (b.len > 0) {
        size_t done = 0;
        if (end_cut_line (s) < 0
            || store_write_all (s->fd, b.data, b.len, &done) < 0) {
            int e = errno;
            bool cut = done > 0 && b.data[done - 1] != '\n';
            bool kept = false;
            if (!s->write_failed)
                runtime_log (LOG_ERR,
                             "jobtap: cannot write the job state in %s: %s; "
                             "trying again (jobs' state since then is not "
                             "yet kept)", s->dir, strerror (e));
            s->write_failed = true;
            /* What reached the file stays there (the next try completes
             * a line cut short): written again, it would leave a broken
             * line, or an entry twice, in the journal. */
            if (done > 0) {
                s->journal_bytes += done;
                s->unsynced = true;
                memmove (b.data, b.data + done, b.len - done);
                b.len -= done;
                b.data[b.len] = '\0';
            }
            /* kept for the next try, ahead of what came since */
            runtime_lock ();
            s->open_end = 0;
            if (b.len + s->buf.len <= UNWRITTEN_MAX) {
                strbuf_put (&b, s->buf.data ? s->buf.data : "", s->buf.len);
                if (!b.dropped) {
                    strbuf_free (&s->buf);
                    s->buf = b;
                    b.data = NULL;
                    kept = true;
                }
            }
            runtime_unlock ();
            if (!kept) {
                s->line_cut = s->line_cut || cut;
                runtime_log (LOG_ERR,
                             "jobtap: %zu bytes of job state not written in "
                             "%s are not kept (%s): a restart would not see "
                             "them", b.len, s->dir,
                             b.dropped ? "out of memory"
                                       : "over 64 MiB waiting");
            }
            rc = -1;
        }
        else {
            if (s->write_failed)
                runtime_log (LOG_INFO, "jobtap: the job state in %s is "
                             "written again", s->dir);
            s->write_failed = false;
            s->unsynced = true;
            s->journal_bytes += b.len;
            rc = (ssize_t)b.len;
        }
    }
    if (rc >= 0 && b.data && b.cap <= SPARE_MAX) {
        /* the written buffer for the next flush to give the records,
         * without taking the runtime lock again here */
        b.len = 0;
        b.data[0] = '\0';
        s->spare = b;
        b = (struct strbuf){0};
    }
    /* The sync waits for the disk: outside the io lock, so a writer
     * under Slurm's job write lock (a hook) never waits for it.  Only
     * the thread that calls store_maintain (which may change the file)
     * syncs. */
    int fd = s->fd;
    bool do_sync = sync && s->unsynced;
    if (do_sync)
        s->unsynced = false;
    pthread_mutex_unlock (&s->io);
    if (do_sync && fdatasync (fd) < 0) {
        int e = errno;
        pthread_mutex_lock (&s->io);
        s->unsynced = true;
        if (!s->write_failed)
            runtime_log (LOG_ERR, "jobtap: cannot sync the job state in %s: "
                         "%s; trying again", s->dir, strerror (e));
        s->write_failed = true;
        pthread_mutex_unlock (&s->io);
        rc = -1;
    }
    strbuf_free (&b);
    return rc;
}

int store_maintain (struct runtime *rt, bool force)
{
    struct store *s = rt->store;
    jobtap_host_error_t err = {{0}};
    unsigned long merge_below, last;
    json_t *kept;
    size_t bytes = 0;
    int rc = -1;

    if (!s)
        return 0;
    pthread_mutex_lock (&s->io);
    if (s->merging
        || (!force && (s->journal_bytes < JOURNAL_MERGE_BYTES
                       || s->journal_bytes < s->snapshot_bytes))) {
        pthread_mutex_unlock (&s->io);
        return 0;
    }
    /* New lines go to the next journal; the ones before are merged. */
    int old_fd = s->fd;
    s->gen++;
    if (open_journal (s, &err) < 0) {
        s->gen--;
        s->fd = old_fd;
        pthread_mutex_unlock (&s->io);
        runtime_log (LOG_ERR, "jobtap: state store: %s", err.text);
        return -1;
    }
    close (old_fd);
    s->line_cut = false; /* a cut line is the old journal's last */
    merge_below = s->gen;
    s->merging = true;
    pthread_mutex_unlock (&s->io);

    if ((kept = store_read_dir (s->dir, merge_below, &last, &err))
        && store_write_snapshot (s->dir, kept, merge_below, &bytes, &err) == 0) {
        store_unlink_journals_below (s->dir, merge_below);
        rc = 0;
    }
    else
        runtime_log (LOG_ERR, "jobtap: state store: merging: %s", err.text);
    json_decref (kept);
    /* The merge's tree held every kept job's events at once: give its
     * pages back, or slurmctld's resident size keeps that peak
     * (docs/performance.md, "Job arrays as jobs"). */
    malloc_trim (0);

    pthread_mutex_lock (&s->io);
    s->merging = false;
    if (rc == 0)
        s->snapshot_bytes = bytes;
    pthread_mutex_unlock (&s->io);
    return rc;
}
