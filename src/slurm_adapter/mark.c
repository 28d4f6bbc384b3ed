/* The submission mark (mark.h). It is written once and read twice per job
 * under slurmctld's locks, so its numbers are formatted and parsed by
 * hand: snprintf and strtoull cost far more per number there. */
#include <limits.h>
#include <string.h>

#include "mark.h"

#define PREFIX_LEN (sizeof (MARK_PREFIX) - 1)

static char *put_decimal (char *p, uint64_t v)
{
    char digits[20];
    int n = 0;
    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n > 0)
        *p++ = digits[--n];
    return p;
}

/* The number at s, ending at the separator sep; NULL if there is none or
 * it does not fit. */
static const char *get_decimal (const char *s, char sep, uint64_t *v)
{
    uint64_t x = 0;
    const char *p = s;
    for (; *p >= '0' && *p <= '9'; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (x > (UINT64_MAX - d) / 10)
            return NULL;
        x = x * 10 + d;
    }
    if (p == s || *p != sep)
        return NULL;
    *v = x;
    return p + 1;
}

void mark_boot_init (struct mark_boot *boot, uint64_t value)
{
    boot->value = value;
    boot->len = (size_t)(put_decimal (boot->text, value) - boot->text);
    boot->text[boot->len] = '\0';
}

void mark_format (char *buf,
                  const struct mark_boot *boot,
                  const struct mark *m)
{
    char *p = buf + PREFIX_LEN;

    memcpy (buf, MARK_PREFIX, PREFIX_LEN);
    memcpy (p, boot->text, boot->len);
    p += boot->len;
    *p++ = ':';
    p = put_decimal (p, m->token);
    *p++ = ':';
    p = put_decimal (p, m->urgency > 0 ? (uint64_t)m->urgency : 0);
    *p++ = ':';
    p = put_decimal (p, m->op_priority);
    *p++ = ':';
    p = put_decimal (p, m->flags);
    *p = '\0';
}

bool mark_find (char *const *env,
                uint32_t n,
                const struct mark_boot *boot,
                struct mark *m)
{
    for (uint32_t i = env ? n : 0; i-- > 0;) {
        const char *e = env[i];
        uint64_t f[5] = {0, 0, 0, 0, MARK_CREATED_HELD};
        if (!e || strncmp (e, MARK_PREFIX, PREFIX_LEN))
            continue;
        e += PREFIX_LEN;
        if (!strncmp (e, boot->text, boot->len) && e[boot->len] == ':') {
            /* this process's own mark: its boot as written */
            f[0] = boot->value;
            e += boot->len + 1;
        }
        else if (!(e = get_decimal (e, ':', &f[0])))
            continue;
        if (!(e = get_decimal (e, ':', &f[1]))
            || !(e = get_decimal (e, ':', &f[2])))
            continue;
        /* four fields (an older mark) or five */
        const char *last = get_decimal (e, ':', &f[3]);
        if (last ? !get_decimal (last, '\0', &f[4])
                 : !get_decimal (e, '\0', &f[3]))
            continue;
        if (f[2] > INT_MAX || f[3] > UINT32_MAX || f[4] > UINT32_MAX)
            continue;
        m->token = f[0] == boot->value ? f[1] : 0;
        m->urgency = (int)f[2];
        m->op_priority = (uint32_t)f[3];
        m->flags = (unsigned)f[4];
        return true;
    }
    return false;
}

void mark_inline_write (struct mark_inline *a,
                        const struct mark_boot *boot,
                        const struct mark *m)
{
    a->terminator = NULL;
    a->boot = boot->value;
    a->mark = *m;
}

bool mark_inline_find (char *const *env,
                       uint32_t n,
                       size_t size,
                       const struct mark_boot *boot,
                       struct mark *m)
{
    const struct mark_inline *a = (const struct mark_inline *)env;
    if (!env || n != 0 || size != MARK_INLINE_SIZE || a->terminator
        || a->boot != boot->value || !a->mark.token)
        return false;
    *m = a->mark;
    return true;
}
