/* The store's files (store.h has their layout): the journal's and the
 * snapshot's lines read into what they keep, and a snapshot written the
 * way Slurm writes its state files.  Files and text only: no runtime, no
 * lock (the runtime's log aside).  Called by store.c; calls log.c and
 * strbuf.c. */
#ifndef JOBTAP_STORE_FILE_H
#define JOBTAP_STORE_FILE_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <jansson.h>

#include "host.h"

/* "dir/name" (malloc'd), or NULL. */
char *store_path (const char *dir, const char *name);
/* write() all of data; *done says how much went, also on failure. */
int store_write_all (int fd, const char *data, size_t len, size_t *done);

/* What 'dir' keeps: "<id>" -> its entries, from the snapshot (or the
 * previous one, if the last was not complete; one that cannot be read
 * is moved aside) and the journals from its generation on, below
 * 'below' (0: all).  *last: the highest generation seen.  NULL + err. */
json_t *store_read_dir (const char *dir,
                        unsigned long below,
                        unsigned long *last,
                        jobtap_host_error_t *err);
/* Write 'kept' as snapshot 'gen' (*bytes its size): a new file, synced,
 * the old one renamed aside, the new one into place, the directory
 * synced.  0, or -1 + err. */
int store_write_snapshot (const char *dir,
                          json_t *kept,
                          unsigned long gen,
                          size_t *bytes,
                          jobtap_host_error_t *err);
/* Remove the journals below 'gen' (a snapshot of gen has them). */
void store_unlink_journals_below (const char *dir, unsigned long gen);
#endif
