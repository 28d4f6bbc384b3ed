/* The store's files (store_file.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <syslog.h>
#include <jansson.h>

#include "host_error.h"
#include "log.h"
#include "store_file.h"
#include "strbuf.h"

#define STORE_VERSION 1

char *store_path (const char *dir, const char *name)
{
    char *p;
    if (asprintf (&p, "%s/%s", dir, name) < 0)
        return NULL;
    return p;
}

/* *done (if non-NULL): the bytes written, also when it fails part way. */
int store_write_all (int fd, const char *data, size_t len, size_t *done)
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
        if (line[n - 1] != '\n') {
            runtime_log (LOG_WARNING,
                         "jobtap: %s:%d: an incomplete line (a kill while "
                         "it was written): ignored", path, lineno);
            break;
        }
        /* a line a failed write cut short and the next one ended */
        if (apply_line (kept, line, (size_t)n) < 0)
            runtime_log (LOG_WARNING,
                         "jobtap: %s:%d: an unreadable line: ignored", path,
                         lineno);
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
json_t *store_read_dir (const char *dir,
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
    if ((p = store_path (dir, "snapshot"))) {
        if (read_file (p, kept, true, &snap_gen, NULL) < 0
            && (errno == ENOENT || errno == EINVAL)) {
            char *old = store_path (dir, "snapshot.old");
            char *aside = store_path (dir, "snapshot.unreadable");
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
        if ((p = store_path (dir, name))) {
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
int store_write_snapshot (const char *dir,
                           json_t *kept,
                           unsigned long gen,
                           size_t *bytes,
                           jobtap_host_error_t *err)
{
    char *tmp = store_path (dir, "snapshot.new");
    char *cur = store_path (dir, "snapshot");
    char *old = store_path (dir, "snapshot.old");
    struct strbuf b = {0};
    const char *key;
    json_t *log;
    int fd = -1, rc = -1;

    if (!tmp || !cur || !old) {
        errprintf (err, "out of memory");
        goto done;
    }
    strbuf_puts (&b, "{\"jobtap-state\":1,\"gen\":");
    strbuf_put_u64 (&b, gen);
    strbuf_puts (&b, "}\n");
    json_object_foreach (kept, key, log) {
        char *e = json_dumps (log, JSON_COMPACT);
        if (!e) {
            errprintf (err, "out of memory");
            goto done;
        }
        strbuf_puts (&b, "{\"id\":");
        strbuf_puts (&b, key);
        strbuf_puts (&b, ",\"e\":");
        strbuf_puts (&b, e);
        strbuf_puts (&b, "}\n");
        free (e);
    }
    if (!b.data || b.dropped) {
        errprintf (err, "out of memory");
        goto done;
    }
    if ((fd = open (tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0
        || store_write_all (fd, b.data, b.len, NULL) < 0 || fsync (fd) < 0) {
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
    strbuf_free (&b);
    free (tmp);
    free (cur);
    free (old);
    return rc;
}

void store_unlink_journals_below (const char *dir, unsigned long gen)
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
        if ((p = store_path (dir, name))) {
            (void)unlink (p);
            free (p);
        }
    }
    free (gens);
}

