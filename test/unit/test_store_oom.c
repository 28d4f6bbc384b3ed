/* The state store when memory or the disk runs out part way (store.c):
 * a record whose writes cannot all be kept is taken back whole and
 * logged once; a merge that cannot build its snapshot leaves the files
 * as they were; a failed write whose rest cannot be kept ends its cut
 * line at the next write (or leaves it last in its journal when a merge
 * begins the next), so the records after it read back.
 *
 * Linked with --wrap=realloc and --wrap=write (test/unit/meson.build):
 * reallocs of at least fail_from bytes fail, and a write can be cut
 * short after write_budget bytes, running write_hook first (records
 * made meanwhile, as by another thread). */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <flux/core.h>
#include <flux/jobtap.h>

#include "host.h"
#include "jtplugin.h"
#include "runtime.h"
#include "store.h"
#include "core_util.h"
#include "tap.h"

#define NO_LIMIT SIZE_MAX

static size_t fail_from = NO_LIMIT;
static size_t write_budget = NO_LIMIT;
static void (*write_hook) (void);

void *__real_realloc (void *p, size_t n);
ssize_t __real_write (int fd, const void *buf, size_t n);

void *__wrap_realloc (void *p, size_t n)
{
    if (n >= fail_from) {
        errno = ENOMEM;
        return NULL;
    }
    return __real_realloc (p, n);
}

ssize_t __wrap_write (int fd, const void *buf, size_t n)
{
    if (write_budget == NO_LIMIT)
        return __real_write (fd, buf, n);
    if (write_hook) {
        void (*hook) (void) = write_hook;
        write_hook = NULL;
        hook ();
    }
    if (write_budget == 0) {
        errno = EFBIG;
        return -1;
    }
    ssize_t w = __real_write (fd, buf, n < write_budget ? n : write_budget);
    if (w > 0)
        write_budget -= (size_t)w;
    return w;
}

static char base[64];
static struct jt_plugin *plugin;

static void setup (const char *sub)
{
    char dir[128];
    jobtap_host_error_t err;

    core_host_setup (&core_kept_ops, NULL, NULL);
    plugin = core_plugin_make (host_runtime (), "t");
    core_log_reset ();
    snprintf (dir, sizeof (dir), "%s/%s", base, sub);
    if (jobtap_host_store_open (dir, &err) < 0)
        bail_out ("store_open %s: %s", sub, err.text);
}

static int count (const char *text, const char *what)
{
    int n = 0;
    for (const char *s = text; (s = strstr (s, what)); s += strlen (what))
        n++;
    return n;
}

/* The one journal.<gen> of dir 'sub', as a path (static). */
static const char *journal (const char *sub)
{
    static char p[400];
    char dir[128];
    struct dirent *de;
    DIR *d;

    snprintf (dir, sizeof (dir), "%s/%s", base, sub);
    p[0] = '\0';
    if (!(d = opendir (dir)))
        return p;
    while ((de = readdir (d)))
        if (!strncmp (de->d_name, "journal.", 8))
            snprintf (p, sizeof (p), "%s/%s", dir, de->d_name);
    closedir (d);
    return p;
}

/* How many of the file's lines are not JSON objects. */
static int unreadable_lines (const char *p)
{
    char *text = core_slurp (p), *save = NULL;
    int bad = 0;
    for (char *l = strtok_r (text, "\n", &save); l;
         l = strtok_r (NULL, "\n", &save)) {
        json_t *o = json_loads (l, 0, NULL);
        bad += !json_is_object (o);
        json_decref (o);
    }
    free (text);
    return bad;
}

static void submit_bind (uint64_t id)
{
    jobtap_host_error_t err;
    uint64_t token = 0;
    json_t *spec = json_pack ("{s:i s:{s:{}}}", "version", 1, "attributes",
                              "system");
    if (jobtap_host_submit (spec, 1000, 16, (double)id,
                            JOBTAP_SUBMIT_TAKE_JOBSPEC, NULL, &token, &err) < 0
        || jobtap_host_job_new (token, id, 1000, 16, (double)id, NULL, &err)
               < 0)
        bail_out ("submit/job_new %ju: %s", (uintmax_t)id, err.text);
}

static int restore_one (uint64_t id)
{
    jobtap_host_error_t err;
    json_t *jobs = json_pack ("[{s:I s:I s:i s:f s:{s:i s:{s:{}}} s:i}]",
                              "id", (json_int_t)id, "userid", 1000,
                              "urgency", 16, "t_submit", (double)id,
                              "jobspec", "version", 1, "attributes", "system",
                              "state", JOBTAP_STATE_SCHED);
    int n = jobtap_host_jobs_restore (jobs, &err);
    json_decref (jobs);
    return n;
}

/* The job's eventlog entry names, "a,b" (static). */
static const char *eventlog (uint64_t id)
{
    static char s[1024];
    json_t *info = jobtap_host_job_info (id);
    json_t *log = json_object_get (info, "eventlog"), *e;
    size_t i;
    s[0] = '\0';
    json_array_foreach (log, i, e) {
        const char *name = json_string_value (json_object_get (e, "name"));
        snprintf (s + strlen (s), sizeof (s) - strlen (s), "%s%s",
                  i ? "," : "", name ? name : "?");
    }
    json_decref (info);
    return s;
}

/* A context of about 'size' bytes. */
static int post_big (uint64_t id, const char *name, size_t size)
{
    char *text = malloc (size + 1);
    if (!text)
        bail_out ("out of memory");
    memset (text, 'x', size);
    text[size] = '\0';
    int rc = flux_jobtap_event_post_pack (plugin->p, id, name, "{s:s}",
                                          "text", text);
    free (text);
    return rc;
}

/* --- a record that cannot be kept whole ----------------------------------- */

static void test_record_dropped (void)
{
    setup ("record");
    submit_bind (800);
    ok (jobtap_host_store_flush (false) > 0, "job 800's history is written");

    fail_from = 16 << 10;
    ok (post_big (800, "big-1", 32 << 10) == 0
            && post_big (800, "big-2", 32 << 10) == 0,
        "two events with 32 KB contexts are posted while the store's "
        "buffer cannot grow past 16 KB");
    fail_from = NO_LIMIT;
    is (core_log_text (),
        "jobtap: out of memory: JobId=800's big-1 entry is not kept (a "
        "restart would not see it)\n",
        "the first is logged, naming the job and the entry; the second not "
        "again");
    ok (flux_jobtap_event_post_pack (plugin->p, 800, "small", NULL) == 0,
        "a small event is posted after");
    ok (jobtap_host_store_flush (false) > 0, "and written");
    isint (unreadable_lines (journal ("record")), 0,
           "every line of the journal reads back");
    fail_from = 16 << 10;
    ok (post_big (800, "big-3", 32 << 10) == 0, "another 32 KB entry");
    fail_from = NO_LIMIT;
    isint (count (core_log_text (), "out of memory"), 2,
           "is logged again: a record was kept since");
    /* an entry that cannot join the line of the job's previous event */
    ok (flux_jobtap_event_post_pack (plugin->p, 800, "small-a", NULL) == 0,
        "a small event is posted");
    fail_from = 16 << 10;
    ok (post_big (800, "big-4", 32 << 10) == 0,
        "a 32 KB entry after it, in the same line, cannot be kept");
    fail_from = NO_LIMIT;
    ok (flux_jobtap_event_post_pack (plugin->p, 800, "small-b", NULL) == 0
            && jobtap_host_store_flush (false) > 0,
        "another small event joins that line, and it is written");
    isint (count (core_log_text (), "out of memory"), 3, "the entry is logged");
    isint (unreadable_lines (journal ("record")), 0,
           "every line of the journal still reads back");
    core_host_teardown ();

    setup ("record");
    isint (restore_one (800), 1, "after a restart job 800 is restored");
    is (eventlog (800),
        "submit,validate,depend,priority,small,small-a,small-b,flux-restart,"
        "priority",
        "its history has the small events, not the ones not kept");
    ok (!strstr (core_log_text (), "line"),
        "and nothing in the files was unreadable");
    core_host_teardown ();
}

/* --- a merge that cannot build its snapshot ------------------------------- */

static void test_snapshot_refused (void)
{
    char *snap0, *snap1, *jour;
    char p[160];

    setup ("merge");
    submit_bind (900);
    ok (post_big (900, "big", 32 << 10) == 0
            && jobtap_host_store_flush (false) > 0,
        "job 900 with a 32 KB entry is written");
    snprintf (p, sizeof (p), "%s/merge/snapshot", base);
    snap0 = core_slurp (p);
    jour = strdup (journal ("merge"));

    fail_from = 16 << 10;
    isint (store_maintain (host_runtime (), true), -1,
           "a merge whose snapshot cannot be built fails");
    fail_from = NO_LIMIT;
    ok (strstr (core_log_text (), "jobtap: state store: merging: out of memory")
            != NULL, "and is logged");
    snap1 = core_slurp (p);
    ok (snap0 && snap1 && !strcmp (snap0, snap1),
        "the snapshot is the one before");
    ok (access (jour, F_OK) == 0, "the journal it would have merged is kept");
    core_host_teardown ();

    setup ("merge");
    isint (restore_one (900), 1, "after a restart job 900 is restored");
    is (eventlog (900), "submit,validate,depend,priority,big,flux-restart,"
        "priority", "with its history whole");
    core_host_teardown ();
    free (snap0);
    free (snap1);
    free (jour);
}

/* --- a cut line whose rest cannot be kept --------------------------------- */

static uint64_t meanwhile_id;

/* Recorded for job meanwhile_id while the flush writes (as by another
 * thread): more than the taken buffer holds, and then the buffer cannot
 * grow. */
static void record_meanwhile (void)
{
    if (post_big (meanwhile_id, "meanwhile", 128 << 10) < 0)
        bail_out ("post failed");
    fail_from = 64 << 10;
}

static void test_cut_line (void)
{
    char cut_journal[400], cut_log[512], *text;
    int lines_before;

    setup ("cut");
    submit_bind (810);
    ok (jobtap_host_store_flush (false) > 0, "job 810's history is written");
    snprintf (cut_journal, sizeof (cut_journal), "%s", journal ("cut"));
    text = core_slurp (cut_journal);
    lines_before = count (text ? text : "", "\n");
    free (text);
    ok (jobtap_host_job_urgency (810, 5) == 0, "job 810's urgency set to 5");

    write_budget = 10;
    meanwhile_id = 810;
    write_hook = record_meanwhile;
    isint (jobtap_host_store_flush (false), -1,
           "a flush cut short after 10 bytes fails");
    write_budget = NO_LIMIT;
    fail_from = NO_LIMIT;
    ok (strstr (core_log_text (), "cannot write the job state") != NULL,
        "the failure is logged");
    ok (strstr (core_log_text (), " bytes of job state not written in ")
            && strstr (core_log_text (),
                       "are not kept (out of memory): a restart would "
                       "not see them"),
        "so is the rest of the cut record, which could not be kept with "
        "what was recorded meanwhile");
    ok (jobtap_host_store_flush (false) > 0,
        "the next flush writes what was recorded meanwhile");
    isint (unreadable_lines (journal ("cut")), 1,
           "the journal has one unreadable line, the cut one");
    core_host_teardown ();

    setup ("cut");
    snprintf (cut_log, sizeof (cut_log), "jobtap: %s:%d: an unreadable "
              "line: ignored\n", cut_journal, lines_before + 1);
    ok (strstr (core_log_text (), cut_log) != NULL,
        "after a restart the cut line is logged (its file and line) and "
        "ignored");
    isint (restore_one (810), 1, "job 810 is restored");
    is (eventlog (810),
        "submit,validate,depend,priority,meanwhile,flux-restart,priority",
        "with what was recorded after the cut line");
    isint (jobtap_host_job_urgency_get (810), 16,
           "without the urgency of the cut line");
    core_host_teardown ();
}

/* The same cut, then a merge before the next write: the cut line is the
 * old journal's last, and the new journal begins with a whole line. */
static void test_cut_then_merge (void)
{
    char *text;

    setup ("cut-merge");
    submit_bind (820);
    ok (jobtap_host_store_flush (false) > 0
            && jobtap_host_job_urgency (820, 5) == 0,
        "job 820's history is written, its urgency set to 5");
    write_budget = 10;
    meanwhile_id = 820;
    write_hook = record_meanwhile;
    isint (jobtap_host_store_flush (false), -1,
           "a flush cut short after 10 bytes fails, its rest not kept");
    write_budget = NO_LIMIT;
    fail_from = NO_LIMIT;
    isint (store_maintain (host_runtime (), true), 0,
           "a merge begins a new journal");
    ok (jobtap_host_store_flush (false) > 0,
        "the next flush writes what was recorded meanwhile there");
    text = core_slurp (journal ("cut-merge"));
    ok (text && text[0] == '{' && unreadable_lines (journal ("cut-merge")) == 0,
        "the new journal begins with a whole line, all of them readable");
    free (text);
    core_host_teardown ();

    setup ("cut-merge");
    isint (restore_one (820), 1, "after a restart job 820 is restored");
    is (eventlog (820),
        "submit,validate,depend,priority,meanwhile,flux-restart,priority",
        "with what was recorded after the cut line");
    ok (!strstr (core_log_text (), "unreadable"),
        "and no unreadable line was read");
    core_host_teardown ();
}

int main (void)
{
    const char *tmp = getenv ("TMPDIR");
    snprintf (base, sizeof (base), "%s/test_store_oom.XXXXXX",
              tmp && *tmp && strlen (tmp) < 32 ? tmp : "/tmp");
    if (!mkdtemp (base))
        bail_out ("mkdtemp failed");

    test_record_dropped ();
    test_snapshot_refused ();
    test_cut_line ();
    test_cut_then_merge ();

    core_rm_tree (base);
    done_testing ();
}
