/* Counting the steps of a Lua pattern search (lua_pattern_count.h).
 *
 * Written from the Lua 5.4 manual's description of patterns: single
 * character classes (., %a %c %d %g %l %p %s %u %w %x and their
 * complements, %<non-alphanumeric>, [set], [^set]), each optionally
 * followed by *, +, - or ?; %1-%9, %bxy, %f[set]; captures and position
 * captures; a '^' anchor and a final '$' (and %z, NUL, which the
 * manual no longer lists but Lua 5.4 still knows).  The backtracking
 * order is the one the manual implies (longest first for * and +,
 * shortest for -, one before none for ?), and it recurses where Lua's
 * matcher does, so that "pattern too complex" comes at the same depth.
 */
#include <ctype.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "lua_pattern_count.h"

typedef unsigned char uchar;

#define OPEN_CAPTURE (-1L)     /* a capture whose ')' is not reached yet */
#define POSITION_CAPTURE (-2L) /* "()" */

struct walker {
    const uchar *subject, *subject_end;
    const uchar *pattern_end;
    long steps, limit;
    int depth_left;
    int ncap;
    struct {
        const uchar *at;
        long len; /* or OPEN_CAPTURE, POSITION_CAPTURE */
    } cap[PATTERN_MAX_CAPTURES];
    struct pattern_result *r;
    jmp_buf halt;
};

static void halt (struct walker *w, enum pattern_verdict v, const char *error)
{
    w->r->verdict = v;
    if (error)
        snprintf (w->r->error, sizeof (w->r->error), "%s", error);
    longjmp (w->halt, 1);
}

static void step (struct walker *w, long n)
{
    w->steps += n;
    if (w->steps > w->limit)
        halt (w, PATTERN_TOO_COSTLY, NULL);
}

/* The byte at p, or 0 past the end (Lua strings end in a NUL, which
 * Lua's matcher reads there). */
static uchar pat_at (const struct walker *w, const uchar *p)
{
    return p < w->pattern_end ? *p : 0;
}

/* Does c belong to class %cl? */
static bool in_class (int c, int cl)
{
    bool in;
    switch (tolower (cl)) {
    case 'a': in = isalpha (c); break;
    case 'c': in = iscntrl (c); break;
    case 'd': in = isdigit (c); break;
    case 'g': in = isgraph (c); break;
    case 'l': in = islower (c); break;
    case 'p': in = ispunct (c); break;
    case 's': in = isspace (c); break;
    case 'u': in = isupper (c); break;
    case 'w': in = isalnum (c); break;
    case 'x': in = isxdigit (c); break;
    case 'z': in = c == 0; break; /* Lua 5.4 still knows %z (NUL) */
    default: return cl == c; /* %. %% %] ...: the character itself */
    }
    return isupper (cl) ? !in : in;
}

/* Does c belong to the set from '[' at open to ']' at close? */
static bool in_set (struct walker *w, int c, const uchar *open,
                    const uchar *close)
{
    const uchar *m = open + 1;
    bool complement = (*m == '^');

    if (complement)
        m++;
    for (; m < close; m++) {
        step (w, 1);
        if (*m == '%') {
            m++;
            if (in_class (c, *m))
                return !complement;
        }
        else if (m + 2 < close && m[1] == '-') {
            if (m[0] <= c && c <= m[2])
                return !complement;
            m += 2;
        }
        else if (*m == c)
            return !complement;
    }
    return complement;
}

/* Where the single character class at p ends. */
static const uchar *item_end (struct walker *w, const uchar *p)
{
    if (*p == '%') {
        if (p + 1 >= w->pattern_end)
            halt (w, PATTERN_RAISES, "malformed pattern (ends with '%')");
        return p + 2;
    }
    if (*p == '[') {
        const uchar *m = p + 1;
        if (pat_at (w, m) == '^')
            m++;
        /* the first member is taken as is, so "[]]" is a set of ']' */
        do {
            if (m >= w->pattern_end)
                halt (w, PATTERN_RAISES, "malformed pattern (missing ']')");
            if (*m++ == '%' && m < w->pattern_end)
                m++;
        } while (pat_at (w, m) != ']');
        step (w, m - p);
        return m + 1;
    }
    return p + 1;
}

/* Does the subject byte at s match the class from p to ep? */
static bool matches_one (struct walker *w, const uchar *s, const uchar *p,
                         const uchar *ep)
{
    step (w, 1);
    if (s >= w->subject_end)
        return false;
    switch (*p) {
    case '.': return true;
    case '%': return in_class (*s, p[1]);
    case '[': return in_set (w, *s, p, ep - 1);
    default: return *p == *s;
    }
}

static const uchar *match (struct walker *w, const uchar *s, const uchar *p);

static const uchar *longest (struct walker *w, const uchar *s,
                             const uchar *p, const uchar *ep)
{
    long n = 0;
    while (matches_one (w, s + n, p, ep))
        n++;
    for (; n >= 0; n--) {
        const uchar *e = match (w, s + n, ep + 1);
        if (e)
            return e;
    }
    return NULL;
}

static const uchar *shortest (struct walker *w, const uchar *s,
                              const uchar *p, const uchar *ep)
{
    for (;;) {
        const uchar *e = match (w, s, ep + 1);
        if (e)
            return e;
        if (!matches_one (w, s, p, ep))
            return NULL;
        s++;
    }
}

static const uchar *open_capture (struct walker *w, const uchar *s,
                                  const uchar *p, long kind)
{
    const uchar *e;
    if (w->ncap >= PATTERN_MAX_CAPTURES)
        halt (w, PATTERN_RAISES, "too many captures");
    w->cap[w->ncap].at = s;
    w->cap[w->ncap].len = kind;
    w->ncap++;
    if (!(e = match (w, s, p)))
        w->ncap--;
    return e;
}

static const uchar *close_capture (struct walker *w, const uchar *s,
                                   const uchar *p)
{
    const uchar *e;
    int i = w->ncap - 1;
    while (i >= 0 && w->cap[i].len != OPEN_CAPTURE)
        i--;
    if (i < 0)
        halt (w, PATTERN_RAISES, "invalid pattern capture");
    w->cap[i].len = s - w->cap[i].at;
    if (!(e = match (w, s, p)))
        w->cap[i].len = OPEN_CAPTURE;
    return e;
}

/* %bxy at s (p at x) */
static const uchar *balanced (struct walker *w, const uchar *s,
                              const uchar *p)
{
    long depth = 1;
    if (p + 1 >= w->pattern_end)
        halt (w, PATTERN_RAISES,
              "malformed pattern (missing arguments to '%b')");
    if (s >= w->subject_end || *s != p[0])
        return NULL;
    while (++s < w->subject_end) {
        step (w, 1);
        if (*s == p[1]) {
            if (--depth == 0)
                return s + 1;
        }
        else if (*s == p[0])
            depth++;
    }
    return NULL;
}

/* %1-%9 at s (digit d) */
static const uchar *same_as_capture (struct walker *w, const uchar *s,
                                     int d)
{
    int i = d - '1';
    long len;
    if (i < 0 || i >= w->ncap || w->cap[i].len == OPEN_CAPTURE) {
        char msg[64];
        snprintf (msg, sizeof (msg), "invalid capture index %%%d", i + 1);
        halt (w, PATTERN_RAISES, msg);
    }
    if ((len = w->cap[i].len) == POSITION_CAPTURE)
        return NULL; /* never equal to a position */
    step (w, len);
    if (w->subject_end - s >= len && memcmp (w->cap[i].at, s, len) == 0)
        return s + len;
    return NULL;
}

/* Match the pattern from p at s: the end of the match, or NULL.  Moving
 * on to the next item loops; only what must come back on failure
 * (captures, repetitions, '?') recurses, as in Lua. */
static const uchar *match (struct walker *w, const uchar *s, const uchar *p)
{
    if (w->depth_left-- == 0)
        halt (w, PATTERN_RAISES, "pattern too complex");
    for (;;) {
        const uchar *ep;
        uchar suffix;

        step (w, 1);
        if (p == w->pattern_end)
            break;
        if (*p == '(') {
            if (pat_at (w, p + 1) == ')')
                s = open_capture (w, s, p + 2, POSITION_CAPTURE);
            else
                s = open_capture (w, s, p + 1, OPEN_CAPTURE);
            break;
        }
        if (*p == ')') {
            s = close_capture (w, s, p + 1);
            break;
        }
        if (*p == '$' && p + 1 == w->pattern_end) {
            if (s != w->subject_end)
                s = NULL;
            break;
        }
        if (*p == '%' && pat_at (w, p + 1) == 'b') {
            if ((s = balanced (w, s, p + 2))) {
                p += 4;
                continue;
            }
            break;
        }
        if (*p == '%' && pat_at (w, p + 1) == 'f') {
            const uchar *set = p + 2;
            if (pat_at (w, set) != '[')
                halt (w, PATTERN_RAISES, "missing '[' after '%f' in pattern");
            ep = item_end (w, set);
            int before = s == w->subject ? 0 : s[-1];
            int at = s < w->subject_end ? *s : 0;
            if (!in_set (w, before, set, ep - 1)
                && in_set (w, at, set, ep - 1)) {
                p = ep;
                continue;
            }
            s = NULL;
            break;
        }
        if (*p == '%' && isdigit (pat_at (w, p + 1))) {
            if ((s = same_as_capture (w, s, p[1]))) {
                p += 2;
                continue;
            }
            break;
        }
        /* a single character class, then perhaps *, +, - or ? */
        ep = item_end (w, p);
        suffix = pat_at (w, ep);
        if (!matches_one (w, s, p, ep)) {
            if (suffix == '*' || suffix == '?' || suffix == '-') {
                p = ep + 1; /* none is enough */
                continue;
            }
            s = NULL;
            break;
        }
        if (suffix == '?') {
            const uchar *e = match (w, s + 1, ep + 1);
            if (e) {
                s = e;
                break;
            }
            p = ep + 1;
            continue;
        }
        if (suffix == '+' || suffix == '*') {
            s = longest (w, suffix == '+' ? s + 1 : s, p, ep);
            break;
        }
        if (suffix == '-') {
            s = shortest (w, s, p, ep);
            break;
        }
        s++;
        p = ep;
    }
    w->depth_left++;
    return s;
}

/* One try at s: the match's end or NULL (captures and depth fresh). */
static const uchar *try_at (struct walker *w, const uchar *s, const uchar *p)
{
    w->ncap = 0;
    w->depth_left = PATTERN_MAX_DEPTH;
    return match (w, s, p);
}

static void found (struct walker *w, const uchar *s, const uchar *e,
                   int pushed)
{
    struct pattern_result *r = w->r;
    /* a capture pushed while still open raises */
    for (int i = 0; i < pushed && i < w->ncap; i++)
        if (w->cap[i].len == OPEN_CAPTURE)
            halt (w, PATTERN_RAISES, "unfinished capture");
    if (r->matches++ == 0) {
        r->first_start = s - w->subject;
        r->first_end = e - w->subject;
    }
}

static void walk (struct walker *w, const struct pattern_search *q)
{
    const uchar *p = (const uchar *)q->pattern;
    const uchar *s, *lastmatch = NULL, *e;
    bool anchor = q->walk != PATTERN_ITER && q->pattern_len > 0 && *p == '^';

    if (q->init > q->subject_len)
        return;
    s = w->subject + q->init;
    if (anchor)
        p++;
    switch (q->walk) {
    case PATTERN_FIRST:
        for (;;) {
            if ((e = try_at (w, s, p))) {
                found (w, s, e, PATTERN_MAX_CAPTURES);
                return;
            }
            if (anchor || s == w->subject_end)
                return;
            s++;
        }
    case PATTERN_EACH:
        /* an empty match right after the previous one does not count */
        while (w->r->matches < q->max_matches) {
            if ((e = try_at (w, s, p)) && e != lastmatch) {
                found (w, s, e, q->pushed);
                s = lastmatch = e;
            }
            else if (s < w->subject_end)
                s++;
            else
                return;
            if (anchor)
                return;
        }
        return;
    case PATTERN_ITER:
        /* each call of the iterator goes on where the last match ended */
        while (s <= w->subject_end) {
            if ((e = try_at (w, s, p)) && e != lastmatch) {
                found (w, s, e, PATTERN_MAX_CAPTURES);
                s = lastmatch = e;
            }
            else
                s++;
        }
        return;
    }
}

/* setjmp here, apart from the walker's owner: what the walk changed is
 * read after a longjmp only through pointers. */
static void run (struct walker *w, const struct pattern_search *q)
{
    if (setjmp (w->halt) == 0)
        walk (w, q);
}

void pattern_count (const struct pattern_search *q, struct pattern_result *r)
{
    struct walker w = {
        .subject = (const uchar *)q->subject,
        .subject_end = (const uchar *)q->subject + q->subject_len,
        .pattern_end = (const uchar *)q->pattern + q->pattern_len,
        .limit = q->limit,
        .r = r,
    };

    memset (r, 0, sizeof (*r));
    r->verdict = PATTERN_WITHIN;
    run (&w, q);
    r->steps = w.steps;
}

/* vi: ts=4 sw=4 expandtab
 */
