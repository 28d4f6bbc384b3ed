/* Job ids as text, in Flux's encodings: decimal, hex ("0x..."), dothex
 * (four groups of four hex digits), kvs ("job." and dothex) and F58 (base
 * 58 after an "ƒ"; after an "f" where the locale is not UTF-8 or
 * FLUX_F58_FORCE_ASCII is set, as in Flux). Flux's "words" and "emoji"
 * need its word and emoji lists, which are not here: encoding to them
 * fails as an unknown encoding does (EPROTO), and parsing with EINVAL. */
#include <ctype.h>
#include <errno.h>
#include <langinfo.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <flux/core.h>

#define F58_PREFIX "\xc6\x92" /* U+0192, "ƒ" */
#define F58_PLAIN_PREFIX "f"
#define F58_MAX_DIGITS 12     /* 58^11 < 2^64 <= 58^12 */

static const char base58[] = "123456789ABCDEFGHJKLMNPQRSTUVWXYZ"
                             "abcdefghijkmnopqrstuvwxyz";

static bool utf8_locale (void)
{
    return MB_CUR_MAX > 1 && !strcmp (nl_langinfo (CODESET), "UTF-8")
        && !getenv ("FLUX_F58_FORCE_ASCII");
}

/* snprintf's result into buf of bufsz: 0, or -1 EOVERFLOW if cut. */
static int fits (int len, size_t bufsz)
{
    if (len < 0 || (size_t)len >= bufsz) {
        errno = EOVERFLOW;
        return -1;
    }
    return 0;
}

static int encode_dothex (flux_jobid_t id, char *buf, size_t bufsz)
{
    return fits (snprintf (buf, bufsz, "%04x.%04x.%04x.%04x",
                           (unsigned)(id >> 48) & 0xffff,
                           (unsigned)(id >> 32) & 0xffff,
                           (unsigned)(id >> 16) & 0xffff,
                           (unsigned)id & 0xffff),
                 bufsz);
}

static int encode_f58 (flux_jobid_t id, bool plain, char *buf, size_t bufsz)
{
    char digits[F58_MAX_DIGITS];
    int n = 0;
    const char *prefix = plain || !utf8_locale () ? F58_PLAIN_PREFIX
                                                  : F58_PREFIX;
    size_t plen = strlen (prefix);

    do {
        digits[n++] = base58[id % 58];
        id /= 58;
    } while (id);
    if (plen + (size_t)n >= bufsz) {
        errno = EOVERFLOW;
        return -1;
    }
    memcpy (buf, prefix, plen);
    char *p = buf + plen;
    while (n > 0)
        *p++ = digits[--n];
    *p = '\0';
    return 0;
}

int flux_job_id_encode (flux_jobid_t id,
                        const char *type,
                        char *buf,
                        size_t bufsz)
{
    if (!buf || !bufsz) {
        errno = EINVAL;
        return -1;
    }
    if (!type || !strcasecmp (type, "dec"))
        return fits (snprintf (buf, bufsz, "%ju", (uintmax_t)id), bufsz);
    if (!strcasecmp (type, "hex"))
        return fits (snprintf (buf, bufsz, "0x%jx", (uintmax_t)id), bufsz);
    if (!strcasecmp (type, "dothex"))
        return encode_dothex (id, buf, bufsz);
    if (!strcasecmp (type, "kvs")) {
        if (fits (snprintf (buf, bufsz, "job."), bufsz) < 0)
            return -1;
        return encode_dothex (id, buf + 4, bufsz - 4);
    }
    if (!strcasecmp (type, "f58"))
        return encode_f58 (id, false, buf, bufsz);
    if (!strcasecmp (type, "f58plain"))
        return encode_f58 (id, true, buf, bufsz);
    errno = EPROTO; /* unknown encoding, as Flux tells it from EINVAL */
    return -1;
}

static int invalid (void)
{
    errno = EINVAL;
    return -1;
}

static int hex_digit (char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Four groups of one to four hex digits, separated by dots. */
static int parse_dothex (const char *s, flux_jobid_t *id)
{
    uint64_t v = 0;
    for (int group = 0; group < 4; group++) {
        unsigned g = 0;
        int n = 0, d;
        for (; n < 4 && (d = hex_digit (*s)) >= 0; s++, n++)
            g = (g << 4) | (unsigned)d;
        if (!n || *s++ != (group < 3 ? '.' : '\0'))
            return invalid ();
        v = (v << 16) | g;
    }
    *id = v;
    return 0;
}

/* The base 58 digits after an F58 prefix. */
static int parse_f58 (const char *s, flux_jobid_t *id)
{
    uint64_t v = 0;
    size_t n = strlen (s);
    if (!n || n > F58_MAX_DIGITS)
        return invalid ();
    for (; *s; s++) {
        const char *d = strchr (base58, *s);
        if (!d || v > (UINT64_MAX - (uint64_t)(d - base58)) / 58)
            return invalid ();
        v = v * 58 + (uint64_t)(d - base58);
    }
    *id = v;
    return 0;
}

static bool only_space (const char *s)
{
    while (isspace ((unsigned char)*s))
        s++;
    return !*s;
}

int flux_job_id_parse (const char *s, flux_jobid_t *id)
{
    if (!s || !id)
        return invalid ();
    while (isspace ((unsigned char)*s))
        s++;
    if (!strncmp (s, "job.", 4))
        s += 4;
    if (!*s)
        return invalid ();
    /* dots mean dothex and dashes words (Flux's own order of checks: an
     * "f" may start any of them) */
    if (strchr (s, '.'))
        return parse_dothex (s, id);
    if (strchr (s, '-'))
        return invalid ();
    if (!strncmp (s, F58_PREFIX, strlen (F58_PREFIX)))
        return parse_f58 (s + strlen (F58_PREFIX), id);
    if (*s == 'f')
        return parse_f58 (s + 1, id);
    if (!isdigit ((unsigned char)*s))
        return invalid (); /* emoji, or not an id */
    char *end;
    errno = 0;
    unsigned long long v = strtoull (s, &end, strncmp (s, "0x", 2) ? 10 : 16);
    if (errno)
        return -1;
    if (end == s || !only_space (end))
        return invalid ();
    *id = v;
    return 0;
}
