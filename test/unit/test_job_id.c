/* job_id.c: Flux's job id encodings both ways, the prefix F58 takes by
 * locale, and the errors Flux gives (EINVAL, EOVERFLOW, EPROTO). */
#include <errno.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>

#include <flux/core.h>

#include "tap.h"

static const char *encode (flux_jobid_t id, const char *type)
{
    static char buf[64];
    if (flux_job_id_encode (id, type, buf, sizeof (buf)) < 0)
        return "(error)";
    return buf;
}

static flux_jobid_t parse (const char *s)
{
    flux_jobid_t id = 4242;
    if (flux_job_id_parse (s, &id) < 0)
        return 4242;
    return id;
}

static bool parse_fails (const char *s, int err)
{
    flux_jobid_t id = 7;
    errno = 0;
    return flux_job_id_parse (s, &id) < 0 && errno == err && id == 7;
}

static bool encode_fails (const char *type, size_t bufsz, int err)
{
    char buf[64];
    errno = 0;
    return flux_job_id_encode (1234, type, buf, bufsz) < 0 && errno == err;
}

int main (void)
{
    const flux_jobid_t big = 6787342413402046ULL;
    char buf[64];

    setlocale (LC_ALL, "C");
    is (encode (1234, NULL), "1234", "NULL type: decimal");
    is (encode (1234, "DEC"), "1234", "dec, any case");
    is (encode (0, "hex"), "0x0", "hex 0");
    is (encode (big, "hex"), "0x181d0d4d850fbe", "hex");
    is (encode (65535, "dothex"), "0000.0000.0000.ffff", "dothex");
    is (encode (big, "kvs"), "job.0018.1d0d.4d85.0fbe", "kvs");
    is (encode (0, "f58"), "f1", "f58 0 in the C locale: an f");
    is (encode (57, "f58"), "fz", "f58 57: the last digit");
    is (encode (58, "f58"), "f21", "f58 58: two digits");
    is (encode (65535, "f58"), "fLUv", "f58 65535");
    is (encode (big, "f58plain"), "fuzzybunny", "f58plain");
    is (encode (UINT64_MAX, "f58"), "fjpXCZedGfVQ", "f58 of 2^64-1: 12 digits");

    if (setlocale (LC_ALL, "C.UTF-8")) {
        is (encode (big, "f58"), "\xc6\x92uzzybunny", "f58 in UTF-8: an ƒ");
        is (encode (big, "f58plain"), "fuzzybunny", "f58plain: still an f");
        setenv ("FLUX_F58_FORCE_ASCII", "1", 1);
        is (encode (big, "f58"), "fuzzybunny", "FLUX_F58_FORCE_ASCII: an f");
        unsetenv ("FLUX_F58_FORCE_ASCII");
        setlocale (LC_ALL, "C");
    }
    else
        diag ("no C.UTF-8 locale: its prefix not checked");

    ok (encode_fails ("words", 64, EPROTO), "words: EPROTO (no word list)");
    ok (encode_fails ("emoji", 64, EPROTO), "emoji: EPROTO");
    ok (encode_fails ("foo", 64, EPROTO), "unknown type: EPROTO");
    ok (encode_fails ("dec", 4, EOVERFLOW), "dec in 4 bytes: EOVERFLOW");
    ok (encode_fails ("dothex", 19, EOVERFLOW), "dothex in 19: EOVERFLOW");
    ok (encode_fails ("kvs", 23, EOVERFLOW), "kvs in 23: EOVERFLOW");
    ok (encode_fails ("f58", 3, EOVERFLOW), "f58 fNH in 3: EOVERFLOW");
    ok (flux_job_id_encode (1234, "f58", buf, 4) == 0 && !strcmp (buf, "fNH"),
        "f58 fNH fits 4 bytes exactly");
    errno = 0;
    ok (flux_job_id_encode (1, "dec", NULL, 8) < 0 && errno == EINVAL,
        "NULL buffer: EINVAL");

    ok (parse ("1234") == 1234, "parse decimal");
    ok (parse ("  1234  ") == 1234, "parse with spaces around");
    ok (parse ("0x181d0d4d850fbe") == big, "parse hex");
    ok (parse ("0018.1d0d.4d85.0fbe") == big, "parse dothex");
    ok (parse ("job.0018.1d0d.4d85.0fbe") == big, "parse kvs");
    ok (parse ("1.2.3.4") == 0x0001000200030004ULL, "parse short groups");
    ok (parse ("fuzzybunny") == big, "parse f58 with an f");
    ok (parse ("\xc6\x92uzzybunny") == big, "parse f58 with an ƒ");
    ok (parse ("fjpXCZedGfVQ") == UINT64_MAX, "parse f58 of 2^64-1");
    ok (parse (" f1") == 0, "parse f58 0, leading space");

    ok (parse_fails (NULL, EINVAL), "NULL: EINVAL");
    ok (parse_fails ("", EINVAL), "empty: EINVAL");
    ok (parse_fails ("   ", EINVAL), "spaces: EINVAL");
    ok (parse_fails ("invalid", EINVAL), "a word: EINVAL");
    ok (parse_fails ("-1", EINVAL), "negative: EINVAL");
    ok (parse_fails ("12x", EINVAL), "trailing text: EINVAL");
    ok (parse_fails ("0x", EINVAL), "0x alone: EINVAL");
    ok (parse_fails ("0.0.0", EINVAL), "dothex, three groups: EINVAL");
    ok (parse_fails ("0.0.0.0.0", EINVAL), "dothex, five groups: EINVAL");
    ok (parse_fails ("0.0.0.g", EINVAL), "dothex, not hex: EINVAL");
    ok (parse_fails ("00000.0.0.0", EINVAL), "dothex, five digits: EINVAL");
    ok (parse_fails ("notjob.0.0.0.0", EINVAL), "kvs, wrong prefix: EINVAL");
    ok (parse_fails ("f0", EINVAL), "f58 with 0: EINVAL");
    ok (parse_fails ("fO", EINVAL), "f58 with O: EINVAL");
    ok (parse_fails ("fI", EINVAL), "f58 with I: EINVAL");
    ok (parse_fails ("f", EINVAL), "f58 with no digit: EINVAL");
    ok (parse_fails ("fjpXCZedGfVR", EINVAL), "f58 over 2^64-1: EINVAL");
    ok (parse_fails ("f1111111111111", EINVAL), "f58 of 13 digits: EINVAL");
    ok (parse_fails ("ace-bad-cat", EINVAL), "words: EINVAL (no word list)");
    ok (parse_fails ("\xf0\x9f\xa6\x84", EINVAL), "an emoji: EINVAL");
    ok (parse_fails ("99999999999999999999", ERANGE), "over 2^64: ERANGE");

    done_testing ();
    return 0;
}
