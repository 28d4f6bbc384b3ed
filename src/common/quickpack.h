/* quickpack.c: a faster path for the jansson pack and unpack formats that
 * plugins and the runtime mostly use (objects, nested, of 's' keys and
 * scalar values), with jansson's meaning; any other format, and any
 * failure, goes to jansson, which then does the whole job and words the
 * error.  Unpacks may have what their root lacks told by a finder
 * (quickpack_unpack_virtual: the lazy part of plugin args).  It also owns
 * the format walk that tells whether an unpack may read a given key (the
 * lazy key of plugin args).
 *
 * Callers: plugin_arg.c (flux_plugin_arg_vpack/vunpack) and, through
 * plugin_vpack, the runtime's own pack paths.
 * test/unit/test_quickpack.c checks it against jansson. */
#ifndef JOBTAP_QUICKPACK_H
#define JOBTAP_QUICKPACK_H

#include <stdarg.h>
#include <stdbool.h>
#include <jansson.h>

struct jobtap_spec_scalar; /* host.h */

/* json_vunpack_ex (root, err, 0, fmt, ap): the same return value, the
 * same writes through the arguments, the same error. */
int quickpack_vunpack (json_t *root,
                       json_error_t *err,
                       const char *fmt,
                       va_list ap);

/* The quick unpack alone: true if it unpacked the whole format; false
 * when the format is one it leaves to jansson or unpacking failed, having
 * written only what jansson, given the same arguments, writes too. */
bool quickpack_unpack (json_t *root, const char *fmt, va_list ap);

/* The top-level keys an unpack's root lacks read from a finder:
 * find (arg, path, depth, &value, &scalar) answers for the members at
 * paths from the root as ops.jobspec_find does (JOBTAP_SPEC_*, host.h);
 * the JSON values it gives are kept in held[] for the unpack's reader,
 * who must decref them when done with what it unpacked, and the strings
 * of the scalars it tells are copied into text[text_len..text_cap) (the
 * reader's room, text_len advanced; a string that does not fit is held
 * as a JSON string instead).  A finder that tells a value at a path
 * tells every member above it an object (the walk asks for those only
 * when it must). */
#define QUICK_VIRTUAL_HELD 8
struct quick_virtual {
    int (*find) (void *arg, const char *const *path, int depth,
                 json_t **value, struct jobtap_spec_scalar *scalar);
    void *arg;
    json_t *held[QUICK_VIRTUAL_HELD];
    int held_count;
    char *text;
    size_t text_len, text_cap;
};

/* quickpack_unpack of root with the keys it lacks read from the finder:
 * true if it unpacked the whole format; false when the format or the
 * finder's answers need the real values, or unpacking failed (having
 * written only what an unpack of the real values writes too). */
bool quickpack_unpack_virtual (json_t *root,
                               const char *fmt,
                               va_list ap,
                               struct quick_virtual *virt);

/* The quick pack alone: a new object, or NULL when the format is one it
 * leaves to jansson or packing failed (no reference of an argument kept). */
json_t *quickpack_pack (const char *fmt, va_list ap);

/* A pack merged into the object 'target' as the quick pack of fmt would
 * be (its members set, replacing those of the same keys), without the
 * object in between: 1 done; 0 when the format is one the quick pack
 * leaves to jansson, or has a key not ASCII or more than 8 members
 * (nothing written, no argument consumed); -1 out of memory (some
 * members may be set). */
int quickpack_pack_into (json_t *target, const char *fmt, va_list ap);

/* json_vpack_ex, quicker for the usual formats; the same results and
 * errors. */
json_t *plugin_vpack (json_error_t *err, const char *fmt, va_list ap);

/* False only when an unpack of 'fmt' (with arguments ap, not consumed)
 * certainly reads no top-level member 'key': a format the walk does not
 * follow counts as a read. */
bool quickpack_may_read (const char *fmt, va_list ap, const char *key);

#endif
