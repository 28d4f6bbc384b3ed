/* r_text: the text forms R is written in, RFC 22 idsets ("0-3,5") and
 * RFC 29 hostlists ("node[01-04]").
 *
 * Owns encoding only (R is built here, never parsed).  Caller:
 * r_build.c.  Needs only jansson; thread-safe. */
#ifndef SLURM_JOBTAP_R_TEXT_H
#define SLURM_JOBTAP_R_TEXT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ids[0..n-1], in any order with repeats counting once, as an idset
 * without brackets: "0-3,5", "" when n is 0.  NULL ids means 0..n-1 (n
 * at most 2^32).  malloc'd, or NULL when out of memory. */
char *idset_text (const uint32_t *ids, size_t n);

/* The same for ids already ascending, which skips the sort. */
char *idset_text_sorted (const uint32_t *ids, size_t n);

/* Whether a hostname can be written in a hostlist and read back the same:
 * printable ASCII, not empty, none of "[],". */
bool hostlist_name_valid (const char *name);

/* Valid names in order as Flux's nodelist: an array of one hostlist string
 * that decodes back to the same names in the same order.  Consecutive
 * names with one prefix, rising numbers and a common digit width share a
 * part ("n[1-2,5]", padding kept: "n[08-10]"); any other name is a part
 * of its own ("n[1-2],login").  No names: an empty array.  New reference,
 * or NULL when out of memory. */
json_t *hostlist_text (const char *const *names, size_t n);

#endif
