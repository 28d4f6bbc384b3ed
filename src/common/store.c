/* The jobs' events kept across scheduler restarts (store.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <jansson.h>

#include "internal.h"
#include "job.h"
#include "log.h"
#include "runtime.h"
#include "state.h"
#include "store.h"

#define STORE_VERSION 1
/* A journal this large (and larger than the snapshot) is merged. */
#define JOURNAL_MERGE_BYTES (8u << 20)
/* What a store that cannot write keeps for the next try. */
#define UNWRITTEN_MAX (64u << 20)

struct strbuf {
    char *data;
    size_t len, cap;
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
    bool unsynced;        /* written since the last fdatasync */
    struct strbuf buf;    /* recorded, not written (runtime lock) */
    json_t *kept;         /* "<id>" -> entries, until restore takes them */
};

/* strbuf: on allocation failure the text is dropped and 'failed' says
 * so; the store logs it. */
static int sb_reserve (struct strbuf *b, size_t n)
{
    if (b->len + n + 1 <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n + 1)
        cap *= 2;
    char *d = realloc (b->data, cap);
    if (!d)
        return -1;
    b->data = d;
    b->cap = cap;
    return 0;
}

static void sb_put (struct strbuf *b, const char *s, size_t n)
{
    if (sb_reserve (b, n) == 0) {
        memcpy (b->data + b->len, s, n);
        b->len += n;
        b->data[b->len] = '\0';
    }
}

static void sb_puts (struct strbuf *b, const char *s)
{
    sb_put (b, s, strlen (s));
}

static void sb_free (struct strbuf *b)
{
    free (b->data);
    memset (b, 0, sizeof (*b));
}

static void sb_put_u64 (struct strbuf *b, uint64_t v)
{
    char tmp[24], *p = tmp + sizeof (tmp);
    do {
        *--p = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    sb_put (b, p, (size_t)(tmp + sizeof (tmp) - p));
}

/* A timestamp to the microsecond, as Flux's eventlogs have them. */
static void sb_put_time (struct strbuf *b, double t)
{
    if (!(t >= 0 && t < 1e15)) {
        sb_puts (b, "0.0");
        return;
    }
    uint64_t us = (uint64_t)(t * 1e6 + 0.5);
    char frac[8];
    uint64_t f = us % 1000000;
    sb_put_u64 (b, us / 1000000);
    for (int i = 6; i >= 1; i--) {
        frac[i] = (char)('0' + f % 10);
        f /= 10;
    }
    frac[0] = '.';
    sb_put (b, frac, 7);
}

/* A JSON string; event names are the only text not from compact_dumps. */
static void sb_put_string (struct strbuf *b, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    sb_put (b, "\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            char e[2] = {'\\', (char)c};
            sb_put (b, e, 2);
        }
        else if (c < 0x20) {
            char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            sb_put (b, u, 6);
        }
        else
            sb_put (b, (const char *)&c, 1);
    }
    sb_put (b, "\"", 1);
}

static void sb_put_entry (struct strbuf *b, const struct event *ev)
{
    sb_puts (b, "{\"timestamp\":");
    sb_put_time (b, ev->timestamp);
    sb_puts (b, ",\"name\":");
    sb_put_string (b, ev->name);
    if (ev->context) {
        char *c = compact_dumps (ev->context);
        if (c) {
            sb_puts (b, ",\"context\":");
            sb_puts (b, c);
            free (c);
        }
    }
    sb_put (b, "}", 1);
}

/* --- Recording (runtime lock held) -------------------------------------- */

/* A history begins with submit: the job's user, urgency and time. */
static void put_submit (struct strbuf *b, struct job *job)
{
    sb_puts (b, "{\"timestamp\":");
    sb_put_time (b, job->t_submit);
    sb_puts (b, ",\"name\":\"submit\",\"context\":{\"userid\":");
    sb_put_u64 (b, job->userid);
    sb_puts (b, ",\"urgency\":");
    sb_put_u64 (b, (uint64_t)(job->urgency < 0 ? 0 : job->urgency));
    sb_puts (b, ",\"flags\":0}},");
}

static void line_begin (struct strbuf *b, flux_jobid_t id, const char *kind)
{
    sb_puts (b, "{\"id\":");
    sb_put_u64 (b, id);
    sb_puts (b, kind);
}

void store_record_event (struct job *job, struct event *ev)
{
    struct store *s = job->rt->store;
    struct strbuf *b;

    if (!job_is_bound (job)) {
        /* kept with the job until it has its id */
        if (!job->store_pending
            && !(job->store_pending = calloc (1, sizeof (struct strbuf))))
            return;
        b = job->store_pending;
        if (b->len)
            sb_put (b, ",", 1);
        sb_put_entry (b, ev);
        return;
    }
    b = &s->buf;
    if (!job->store_started) {
        /* the first line of a job's history replaces any earlier job of
         * that id (requeued, or lost by the scheduler) */
        line_begin (b, job->id, ",\"reset\":true,\"e\":[");
        if (job->store_pending && job->store_pending->len) {
            sb_put (b, job->store_pending->data, job->store_pending->len);
            sb_put (b, ",", 1);
        }
        else if (ev->kind != EV_SUBMIT)
            put_submit (b, job); /* submitted before the store opened */
        store_job_release (job);
        job->store_started = true;
    }
    else
        line_begin (b, job->id, ",\"e\":[");
    sb_put_entry (b, ev);
    sb_puts (b, "]}\n");
}

void store_forget_job (struct job *job)
{
    struct store *s = job->rt->store;
    if (!job_is_bound (job) || !job->store_started)
        return;
    line_begin (&s->buf, job->id, ",\"forget\":true}\n");
    job->store_started = false;
}

void store_mark_kept (struct job *job)
{
    job->store_started = true;
}

void store_job_release_pending (struct job *job)
{
    sb_free (job->store_pending);
    free (job->store_pending);
    job->store_pending = NULL;
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

int store_drop_kept (struct runtime *rt)
{
    struct store *s = rt->store;
    const char *key;
    json_t *v;
    int n = 0;

    if (!s || !s->kept)
        return 0;
    json_object_foreach (s->kept, key, v) {
        sb_puts (&s->buf, "{\"id\":");
        sb_puts (&s->buf, key);
        sb_puts (&s->buf, ",\"forget\":true}\n");
        n++;
    }
    json_decref (s->kept);
    s->kept = NULL;
    return n;
}

/* --- Files -------------------------------------------------------------- */

static char *path_of (const char *dir, const char *name)
{
    char *p;
    if (asprintf (&p, "%s/%s", dir, name) < 0)
        return NULL;
    return p;
}

/* *done (if non-NULL): the bytes written, also when it fails part way. */
static int write_all (int fd, const char *data, size_t len, size_t *done)
{
    if (done)
        *done = 0;
    while (len > 0) {
        ssize_t n = write (fd, data, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        data += n;
        len -= (size_t)n;
        if (done)
            *done += (size_t)n;
    }
    return 0;
}

static void sync_dir (const char *dir)
{
    int fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync (fd);
        close (fd);
    }
}

/* One line of a snapshot or journal applied to 'kept'. */
static int apply_line (json_t *kept, const char *line, size_t len)
{
    json_t *o = json_loadb (line, len, 0, NULL);
    json_int_t id;
    json_t *e = NULL;
    int reset = 0, forget = 0;
    char key[24];

    if (!o || json_unpack (o, "{s:I s?b s?b s?o}", "id", &id, "reset",
                           &reset, "forget", &forget, "e", &e) < 0
        || id <= 0 || (e && !json_is_array (e))) {
        json_decref (o);
        return -1;
    }
    snprintf (key, sizeof (key), "%" PRIu64, (uint64_t)id);
    if (forget || reset)
        json_object_del (kept, key);
    if (e) {
        json_t *log = json_object_get (kept, key);
        if (log)
            json_array_extend (log, e);
        else
            json_object_set (kept, key, e);
    }
    json_decref (o);
    return 0;
}

/* Read one file into 'kept'.  A snapshot's first line is its header
 * (*gen set from it).  A line that does not parse ends the file: only
 * the last line can be torn, by a kill during its write. */
static int read_file (const char *path,
                      json_t *kept,
                      bool snapshot,
                      unsigned long *gen,
                      size_t *bytes)
{
    FILE *f = fopen (path, "re");
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int lineno = 0;

    if (!f)
        return -1;
    while ((n = getline (&line, &cap, f)) > 0) {
        lineno++;
        if (bytes)
            *bytes += (size_t)n;
        if (snapshot && lineno == 1) {
            json_t *h = json_loadb (line, (size_t)n, 0, NULL);
            json_int_t v = 0, g = 0;
            if (!h || json_unpack (h, "{s:I s:I}", "jobtap-state", &v, "gen",
                                   &g) < 0 || v != STORE_VERSION) {
                runtime_log (LOG_ERR,
                             "jobtap: %s: not a jobtap state snapshot of "
                             "version %d: ignored", path, STORE_VERSION);
                json_decref (h);
                free (line);
                fclose (f);
                errno = EINVAL;
                return -1;
            }
            *gen = (unsigned long)g;
            json_decref (h);
            continue;
        }
        if (line[n - 1] != '\n' || apply_line (kept, line, (size_t)n) < 0) {
            runtime_log (LOG_WARNING,
                         "jobtap: %s:%d: an incomplete line (a kill while "
                         "it was written): the rest of the file is ignored",
                         path, lineno);
            break;
        }
    }
    free (line);
    fclose (f);
    return 0;
}

/* Generations of the journals in dir, ascending. */
static int journal_gens (const char *dir, unsigned long **gens, size_t *n)
{
    DIR *d = opendir (dir);
    struct dirent *de;
    size_t cap = 0;

    *gens = NULL;
    *n = 0;
    if (!d)
        return -1;
    while ((de = readdir (d))) {
        char *end;
        unsigned long g;
        if (strncmp (de->d_name, "journal.", 8) != 0)
            continue;
        errno = 0;
        g = strtoul (de->d_name + 8, &end, 10);
        if (errno || *end || end == de->d_name + 8)
            continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 8;
            unsigned long *v = realloc (*gens, cap * sizeof (*v));
            if (!v) {
                closedir (d);
                return -1;
            }
            *gens = v;
        }
        (*gens)[(*n)++] = g;
    }
    closedir (d);
    for (size_t i = 1; i < *n; i++) /* few files: insertion sort */
        for (size_t j = i; j > 0 && (*gens)[j - 1] > (*gens)[j]; j--) {
            unsigned long t = (*gens)[j];
            (*gens)[j] = (*gens)[j - 1];
            (*gens)[j - 1] = t;
        }
    return 0;
}

/* What the directory keeps, from the snapshot (or the previous one, if a
 * kill came between its two renames) and the journals below 'below'
 * (0: all).  *last is the highest generation seen. */
static json_t *read_dir (const char *dir,
                         unsigned long below,
                         unsigned long *last,
                         jobtap_host_error_t *err)
{
    json_t *kept = json_object ();
    unsigned long snap_gen = 0, *gens = NULL;
    size_t n = 0;
    char *p;

    if (!kept) {
        errprintf (err, "out of memory");
        return NULL;
    }
    if ((p = path_of (dir, "snapshot"))) {
        if (read_file (p, kept, true, &snap_gen, NULL) < 0
            && (errno == ENOENT || errno == EINVAL)) {
            char *old = path_of (dir, "snapshot.old");
            char *aside = path_of (dir, "snapshot.unreadable");
            /* kept for the admin to look at, not written over */
            if (errno == EINVAL && aside && rename (p, aside) == 0)
                runtime_log (LOG_ERR, "jobtap: %s: unreadable, moved to %s",
                             p, aside);
            free (aside);
            if (old && read_file (old, kept, true, &snap_gen, NULL) == 0)
                runtime_log (LOG_WARNING, "jobtap: %s: read the previous "
                             "snapshot (the last one was not complete)", dir);
            free (old);
        }
        free (p);
    }
    if (journal_gens (dir, &gens, &n) < 0) {
        errprintf (err, "%s: %s", dir, strerror (errno));
        json_decref (kept);
        return NULL;
    }
    *last = snap_gen;
    for (size_t i = 0; i < n; i++) {
        char name[40];
        if (gens[i] > *last)
            *last = gens[i];
        if (gens[i] < snap_gen || (below && gens[i] >= below))
            continue;
        snprintf (name, sizeof (name), "journal.%lu", gens[i]);
        if ((p = path_of (dir, name))) {
            (void)read_file (p, kept, false, NULL, NULL);
            free (p);
        }
    }
    free (gens);
    return kept;
}

/* Write 'kept' as snapshot 'gen' the way Slurm writes its state files:
 * a new file, synced, the old one renamed aside, the new one into place,
 * the directory synced.  Then journals below 'gen' are stale. */
static int write_snapshot (const char *dir,
                           json_t *kept,
                           unsigned long gen,
                           size_t *bytes,
                           jobtap_host_error_t *err)
{
    char *tmp = path_of (dir, "snapshot.new");
    char *cur = path_of (dir, "snapshot");
    char *old = path_of (dir, "snapshot.old");
    struct strbuf b = {0};
    const char *key;
    json_t *log;
    int fd = -1, rc = -1;

    if (!tmp || !cur || !old) {
        errprintf (err, "out of memory");
        goto done;
    }
    sb_puts (&b, "{\"jobtap-state\":1,\"gen\":");
    sb_put_u64 (&b, gen);
    sb_puts (&b, "}\n");
    json_object_foreach (kept, key, log) {
        char *e = json_dumps (log, JSON_COMPACT);
        if (!e) {
            errprintf (err, "out of memory");
            goto done;
        }
        sb_puts (&b, "{\"id\":");
        sb_puts (&b, key);
        sb_puts (&b, ",\"e\":");
        sb_puts (&b, e);
        sb_puts (&b, "}\n");
        free (e);
    }
    if (!b.data) {
        errprintf (err, "out of memory");
        goto done;
    }
    if ((fd = open (tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0
        || write_all (fd, b.data, b.len, NULL) < 0 || fsync (fd) < 0) {
        errprintf (err, "%s: %s", tmp, strerror (errno));
        goto done;
    }
    close (fd);
    fd = -1;
    if ((rename (cur, old) < 0 && errno != ENOENT) || rename (tmp, cur) < 0) {
        errprintf (err, "%s: %s", cur, strerror (errno));
        goto done;
    }
    sync_dir (dir);
    (void)unlink (old);
    if (bytes)
        *bytes = b.len;
    rc = 0;
done:
    if (fd >= 0)
        close (fd);
    sb_free (&b);
    free (tmp);
    free (cur);
    free (old);
    return rc;
}

static void unlink_journals_below (const char *dir, unsigned long gen)
{
    unsigned long *gens;
    size_t n;

    if (journal_gens (dir, &gens, &n) < 0)
        return;
    for (size_t i = 0; i < n; i++) {
        char name[40], *p;
        if (gens[i] >= gen)
            continue;
        snprintf (name, sizeof (name), "journal.%lu", gens[i]);
        if ((p = path_of (dir, name))) {
            (void)unlink (p);
            free (p);
        }
    }
    free (gens);
}

static int open_journal (struct store *s, jobtap_host_error_t *err)
{
    char name[40], *p;

    snprintf (name, sizeof (name), "journal.%lu", s->gen);
    if (!(p = path_of (s->dir, name)))
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
    /* Everything kept goes into a fresh snapshot now, so the journals it
     * came from go and this process starts a journal of its own. */
    if (!(s->kept = read_dir (dir, 0, &last, err)))
        goto fail;
    s->gen = last + 1;
    if (write_snapshot (dir, s->kept, s->gen, &s->snapshot_bytes, err) < 0)
        goto fail;
    unlink_journals_below (dir, s->gen);
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
    sb_free (&s->buf);
    pthread_mutex_destroy (&s->io);
    free (s->dir);
    free (s);
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
    memset (&s->buf, 0, sizeof (s->buf));
    runtime_unlock ();
    if (b.len > 0) {
        size_t done = 0;
        if (write_all (s->fd, b.data, b.len, &done) < 0) {
            int e = errno;
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
            if (b.len + s->buf.len <= UNWRITTEN_MAX) {
                sb_put (&b, s->buf.data ? s->buf.data : "", s->buf.len);
                sb_free (&s->buf);
                s->buf = b;
                b.data = NULL;
            }
            runtime_unlock ();
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
    sb_free (&b);
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
    merge_below = s->gen;
    s->merging = true;
    pthread_mutex_unlock (&s->io);

    if ((kept = read_dir (s->dir, merge_below, &last, &err))
        && write_snapshot (s->dir, kept, merge_below, &bytes, &err) == 0) {
        unlink_journals_below (s->dir, merge_below);
        rc = 0;
    }
    else
        runtime_log (LOG_ERR, "jobtap: state store: merging: %s", err.text);
    json_decref (kept);

    pthread_mutex_lock (&s->io);
    s->merging = false;
    if (rc == 0)
        s->snapshot_bytes = bytes;
    pthread_mutex_unlock (&s->io);
    return rc;
}
