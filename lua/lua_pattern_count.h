/* Counting the cost of a Lua pattern search before Lua runs it.
 *
 * string.find, match, gmatch and gsub run their whole backtracking search
 * inside one VM instruction, out of the instruction budget's sight.  This
 * module walks the same search as Lua 5.4's matcher (the pattern language
 * of the Lua 5.4 manual, 6.4.1, with the same backtracking order, the
 * same recursion depth limit and the same errors) and counts its steps,
 * stopping as soon as a limit is passed.  It never builds results: the
 * caller (lua_pattern.c) runs Lua's own function only when the count is
 * within the limit, so the results are Lua's.
 *
 * A step is one test of a subject character against a pattern item, or
 * one try of the rest of the pattern at a subject position; a set's
 * members, a back-reference's bytes and %b's scan count one step each.
 * Lua's matcher does the same work per step, so its time is bounded by
 * the count.  Pure C: no Lua state (test/lua/test_lua_pattern.c checks it
 * against Lua's own functions).
 */
#ifndef SLURM_JOBTAP_LUA_PATTERN_COUNT_H
#define SLURM_JOBTAP_LUA_PATTERN_COUNT_H

#include <stddef.h>

/* Lua 5.4's limits (lstrlib.c defaults): open captures, matcher depth. */
#define PATTERN_MAX_CAPTURES 32
#define PATTERN_MAX_DEPTH 200

/* How the matches are searched for. */
enum pattern_walk {
    PATTERN_FIRST, /* find, match: the first match at or after init; a
                    * leading '^' anchors the search at init */
    PATTERN_EACH,  /* gsub: match after match (at most max_matches); a
                    * leading '^' allows one try, at the start */
    PATTERN_ITER,  /* gmatch: every match from init; '^' is a character */
};

enum pattern_verdict {
    PATTERN_WITHIN,     /* the search ends within the limit */
    PATTERN_TOO_COSTLY, /* it takes more than limit steps */
    PATTERN_RAISES,     /* Lua's matcher raises an error (a malformed
                         * pattern, ...) after the steps counted */
};

struct pattern_search {
    const char *subject;
    size_t subject_len;
    const char *pattern;
    size_t pattern_len;
    size_t init;      /* 0-based start; past subject_len: no match */
    enum pattern_walk walk;
    long max_matches; /* PATTERN_EACH: gsub's n */
    int pushed;       /* PATTERN_EACH: how many captures gsub pushes per
                       * match (an open one raises): 0 for a string
                       * replacement, 1 for a table, all for a function;
                       * find, match and gmatch push all */
    long limit;       /* counting stops past this many steps */
};

struct pattern_result {
    enum pattern_verdict verdict;
    long steps;              /* counted (over limit when too costly) */
    long matches;            /* found before the search ended */
    size_t first_start;      /* the first match: [first_start, first_end) */
    size_t first_end;
    char error[64];          /* PATTERN_RAISES: Lua's message */
};

/* Walk the search q describes, counting steps; fill r. */
void pattern_count (const struct pattern_search *q, struct pattern_result *r);

#endif /* !SLURM_JOBTAP_LUA_PATTERN_COUNT_H */

/* vi: ts=4 sw=4 expandtab
 */
