/* Bounded string.find, match, gmatch and gsub (lua_pattern.h).
 *
 * Each wrapper checks its arguments as Lua's function does, in the same
 * order (so a bad argument reads "bad argument #2 to 'find'", with
 * s:find's numbering), counts the search, then calls Lua's function,
 * kept as the wrapper's upvalue.  Errors Lua's function raises itself (a
 * malformed pattern) get the caller's "file:line:" as they would without
 * the wrapper.
 */
/* memmem: _GNU_SOURCE comes from the build */
#include <stdbool.h>
#include <string.h>
#include <lua.h>
#include <lauxlib.h>

#include "lua_context.h"
#include "lua_limits.h"
#include "lua_pattern_count.h"
#include "lua_pattern.h"

#define PLAIN_BYTES_PER_INSTRUCTION 16

/* Lua's reading of an init argument: a 0-based offset (past len: none). */
static size_t start_offset (lua_Integer pos, size_t len)
{
    if (pos > 0)
        return (size_t)pos - 1;
    if (pos == 0 || pos < -(lua_Integer)len)
        return 0;
    return len + (size_t)pos;
}

static bool has_specials (const char *p, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (p[i] && strchr ("^$*+?.([%-", p[i]))
            return true;
    return false;
}

/* Count q; charge the steps (plus per_match for each match) to the
 * budget; raise if the search is too costly.  Returns when Lua's
 * function may run: true if it is sure to raise an error itself. */
static bool bound (lua_State *L, struct pattern_search *q, long per_match)
{
    struct policy *pol = policy_of (L);
    long room = limits_budget_room (pol);
    long limit = pol->pattern_step_limit;
    struct pattern_result r;

    /* no need to count beyond what the budget has left */
    q->limit = room < limit ? room : limit;
    pattern_count (q, &r);
    long steps = r.steps + r.matches * per_match;
    limits_charge (L, steps);
    if (r.verdict == PATTERN_TOO_COSTLY || steps > limit)
        luaL_error (L, "pattern too costly: more than %I matching steps on "
                       "a subject of %I bytes",
                    (lua_Integer)limit, (lua_Integer)q->subject_len);
    return r.verdict == PATTERN_RAISES;
}

static int l_find (lua_State *L);
static int l_match (lua_State *L);
static int l_gsub (lua_State *L);

/* Message handler of calls to Lua's functions: an error raised by the
 * function itself (level 1, called by a wrapper at level 2) gets the
 * position of the wrapper's caller, as luaL_error would give it. */
static int place_error (lua_State *L)
{
    lua_Debug ar;
    if (lua_type (L, 1) == LUA_TSTRING && lua_getstack (L, 2, &ar)
        && lua_getinfo (L, "f", &ar)) {
        lua_CFunction f = lua_tocfunction (L, -1);
        lua_pop (L, 1);
        if (f == l_find || f == l_match || f == l_gsub) {
            luaL_where (L, 3);
            lua_pushvalue (L, 1);
            lua_concat (L, 2);
        }
    }
    return 1;
}

/* Call Lua's function (upvalue 1) with this call's arguments.  protect:
 * through place_error, for functions that call no Lua code (a function
 * called in a pcall would lose its traceback). */
static int call_lua (lua_State *L, bool protect)
{
    int nargs = lua_gettop (L);

    lua_pushvalue (L, lua_upvalueindex (1));
    lua_insert (L, 1);
    if (!protect) {
        lua_call (L, nargs, LUA_MULTRET);
        return lua_gettop (L);
    }
    lua_pushcfunction (L, place_error);
    lua_insert (L, 1);
    if (lua_pcall (L, nargs, LUA_MULTRET, 1) != LUA_OK)
        return lua_error (L);
    return lua_gettop (L) - 1;
}

static int plain_find (lua_State *L, const char *s, size_t len, size_t init,
                       const char *p, size_t plen)
{
    const char *hit = memmem (s + init, len - init, p, plen);
    size_t searched = hit ? (size_t)(hit - s) - init + plen : len - init;

    limits_charge (L, (long)(searched / PLAIN_BYTES_PER_INSTRUCTION));
    if (!hit) {
        luaL_pushfail (L);
        return 1;
    }
    lua_pushinteger (L, (lua_Integer)(hit - s) + 1);
    lua_pushinteger (L, (lua_Integer)(hit - s) + (lua_Integer)plen);
    return 2;
}

static int find_or_match (lua_State *L, bool find)
{
    size_t len, plen;
    const char *s = luaL_checklstring (L, 1, &len);
    const char *p = luaL_checklstring (L, 2, &plen);
    size_t init = start_offset (luaL_optinteger (L, 3, 1), len);

    if (init > len) {
        luaL_pushfail (L);
        return 1;
    }
    if (find && (lua_toboolean (L, 4) || !has_specials (p, plen)))
        return plain_find (L, s, len, init, p, plen);
    struct pattern_search q = {
        .subject = s, .subject_len = len,
        .pattern = p, .pattern_len = plen,
        .init = init, .walk = PATTERN_FIRST,
    };
    bound (L, &q, 0);
    return call_lua (L, true);
}

static int l_find (lua_State *L)
{
    return find_or_match (L, true);
}

static int l_match (lua_State *L)
{
    return find_or_match (L, false);
}

/* The whole iteration is counted when gmatch is called. */
static int l_gmatch (lua_State *L)
{
    size_t len, plen;
    const char *s = luaL_checklstring (L, 1, &len);
    const char *p = luaL_checklstring (L, 2, &plen);
    size_t init = start_offset (luaL_optinteger (L, 3, 1), len);

    struct pattern_search q = {
        .subject = s, .subject_len = len,
        .pattern = p, .pattern_len = plen,
        .init = init, .walk = PATTERN_ITER,
    };
    bound (L, &q, 0);
    return call_lua (L, false);
}

static int l_gsub (lua_State *L)
{
    size_t len, plen, rlen;
    const char *s = luaL_checklstring (L, 1, &len);
    const char *p = luaL_checklstring (L, 2, &plen);
    int repl = lua_type (L, 3);
    lua_Integer max = luaL_optinteger (L, 4, (lua_Integer)len + 1);
    long per_match = 1;

    luaL_argexpected (L, repl == LUA_TNUMBER || repl == LUA_TSTRING
                             || repl == LUA_TFUNCTION || repl == LUA_TTABLE,
                      3, "string/function/table");
    /* a replacement string is read once per match: its %s cost a step
     * each (its other bytes are output, which memory charges) */
    if (repl == LUA_TSTRING) {
        const char *r = lua_tolstring (L, 3, &rlen);
        for (size_t i = 0; i < rlen; i++)
            per_match += r[i] == '%';
    }
    struct pattern_search q = {
        .subject = s, .subject_len = len,
        .pattern = p, .pattern_len = plen,
        .walk = PATTERN_EACH, .max_matches = (long)max,
        .pushed = repl == LUA_TFUNCTION ? PATTERN_MAX_CAPTURES
                  : repl == LUA_TTABLE  ? 1
                                        : 0,
    };
    bool raises = bound (L, &q, per_match);
    /* A function or table replacement runs Lua code: called unprotected,
     * to keep the traceback of an error in it, unless gsub is sure to
     * raise (then its message gets its position).  Left without it:
     * "invalid replacement value", which depends on what the code
     * returns. */
    return call_lua (L, repl == LUA_TSTRING || repl == LUA_TNUMBER || raises);
}

static void wrap (lua_State *L, int table, const char *name,
                  lua_CFunction f)
{
    table = lua_absindex (L, table);
    lua_getfield (L, table, name);
    lua_pushcclosure (L, f, 1);
    lua_setfield (L, table, name);
}

void pattern_open (lua_State *L)
{
    int top = lua_gettop (L);

    if (lua_getglobal (L, "string") != LUA_TTABLE) {
        lua_settop (L, top);
        return;
    }
    wrap (L, -1, "find", l_find);
    wrap (L, -1, "match", l_match);
    wrap (L, -1, "gmatch", l_gmatch);
    wrap (L, -1, "gsub", l_gsub);
    /* s:find(...) looks in the string metatable's __index: the same
     * table in Lua 5.4; should it ever differ, wrap it there too */
    lua_pushliteral (L, "");
    if (lua_getmetatable (L, -1)
        && lua_getfield (L, -1, "__index") == LUA_TTABLE
        && !lua_rawequal (L, -1, top + 1)) {
        int index = lua_gettop (L);
        wrap (L, index, "find", l_find);
        wrap (L, index, "match", l_match);
        wrap (L, index, "gmatch", l_gmatch);
        wrap (L, index, "gsub", l_gsub);
    }
    lua_settop (L, top);
}

/* vi: ts=4 sw=4 expandtab
 */
