/* lua/lua_pattern.c and lua_pattern_count.c alone, against Lua's own
 * string functions.
 *
 * Differential: thousands of generated (subject, pattern) cases run the
 * same Lua code in a plain state and in one whose string.find, match,
 * gmatch and gsub are wrapped; every result and every error message must
 * be the same (bad arguments too, as functions and as methods).  The
 * step counter must also see what Lua sees: the same first match, the
 * same number of matches, an error exactly where Lua raises one.  Then
 * the limits: a catastrophic search is refused fast
 * with the exact message, through every function and the string
 * metatable; a plain find that takes Lua seconds is fast; steps are
 * charged to the budget.
 *
 * The budget (lua_limits.c) is replaced by the stubs below. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>

#include "lua_context.h"
#include "lua_limits.h"
#include "lua_pattern.h"
#include "lua_pattern_count.h"
#include "tap.h"

/* What "at once" means here: far below what an unbounded call takes
 * (Lua's plain find on these strings: 9 s; the loops: unbounded), with
 * room for valgrind and the sanitizers on a loaded machine. */
#define BOUNDED_SECONDS 5.0

/* TEST_LUA_PATTERN_CASES=N runs more (a one-off deeper check) */
static int cases = 4000;

/* The budget: what was charged, and how much may be. */
static long charged, charge_limit = LONG_MAX / 4;

long limits_budget_room (const struct policy *pol)
{
    (void)pol;
    return charged < charge_limit ? charge_limit - charged : 0;
}

void limits_charge (lua_State *L, long n)
{
    charged += n;
    if (charged > charge_limit)
        luaL_error (L, "budget spent");
}

static struct policy pol = { .pattern_step_limit = LONG_MAX / 4 };

static void *alloc (void *ud, void *ptr, size_t osize, size_t nsize)
{
    (void)ud;
    (void)osize;
    if (nsize == 0) {
        free (ptr);
        return NULL;
    }
    return realloc (ptr, nsize);
}

/* count (s, p, init0, walk, max): verdict, steps, matches, first start
 * (0-based), first end, error */
static int l_count (lua_State *L)
{
    static const char *walks[] = { "first", "each", "iter", NULL };
    static const char *verdicts[] = { "within", "too costly", "raises" };
    struct pattern_search q = { .walk = PATTERN_FIRST };
    struct pattern_result r;

    q.subject = luaL_checklstring (L, 1, &q.subject_len);
    q.pattern = luaL_checklstring (L, 2, &q.pattern_len);
    q.init = (size_t)luaL_checkinteger (L, 3);
    q.walk = (enum pattern_walk)luaL_checkoption (L, 4, NULL, walks);
    q.max_matches = (long)luaL_optinteger (L, 5, LONG_MAX);
    q.limit = (long)luaL_optinteger (L, 6, LONG_MAX / 4);
    pattern_count (&q, &r);
    lua_pushstring (L, verdicts[r.verdict]);
    lua_pushinteger (L, r.steps);
    lua_pushinteger (L, r.matches);
    lua_pushinteger (L, (lua_Integer)r.first_start);
    lua_pushinteger (L, (lua_Integer)r.first_end);
    lua_pushstring (L, r.error);
    return 6;
}

/* The cases, run alike in both states: run (i) returns every result of
 * case i as one string. */
static const char *driver =
    "local function ser (...)\n"
    "  local t = { select ('#', ...) }\n"
    "  for i = 1, select ('#', ...) do\n"
    "    local v = select (i, ...)\n"
    "    t[#t + 1] = type (v) .. ':' .. tostring (v)\n"
    "  end\n"
    "  return table.concat (t, '|')\n"
    "end\n"
    "local function call (f, ...)\n"
    "  return ser (pcall (function (...) local r = table.pack (f (...)) "
    "return table.unpack (r, 1, r.n) end, ...))\n"
    "end\n"
    "local function iterate (s, p, init)\n"
    "  local out = {}\n"
    "  for a, b, c in string.gmatch (s, p, init) do\n"
    "    out[#out + 1] = ser (a, b, c)\n"
    "    if #out > 100 then break end\n"
    "  end\n"
    "  return table.concat (out, ';')\n"
    "end\n"
    "local chars = { 'a', 'b', 'a', 'b', 'a', ' ', '(', ')', '[', ']', '%',\n"
    "  '.', '-', '^', '$', '1', 'A', '\\0', 'x', '\\n', '{', '}', 'z',\n"
    "  '\\255' }\n"
    "local atoms = { 'a', 'b', 'a', '.', '%a', '%A', '%d', '%s', '%S', '%w',\n"
    "  '%W', '%l', '%u', '%p', '%P', '%x', '%c', '%g', '%z', '%Z', '%%',\n"
    "  '%(', '%.', '%]', '[ab]', '[^a]', '[a-c]', '[%a_]', '[]]', '[^]a]',\n"
    "  '[a-]', '[%]]', '[%s%d]', '[^%w]', '[^]', 'x', ' ', '\\0', '%-' }\n"
    "local others = { '(', ')', '()', '(', ')', '%b()', '%b[]', '%bab',\n"
    "  '%f[%a]', '%f[%A]', '%f[a]', '%1', '%2', '%0', '$', '^', '%', '[a',\n"
    "  '%b', '%ba', '%f', '%fa', '[%' }\n"
    "local suffixes = { '', '', '', '*', '+', '-', '?' }\n"
    "local function pick (t) return t[math.random (#t)] end\n"
    "function gen_subject ()\n"
    "  if math.random (10) == 1 then\n"
    "    return string.rep (pick { 'ab', 'a', 'a b', '(a)' }, "
    "math.random (0, 30))\n"
    "  end\n"
    "  local t = {}\n"
    "  for i = 1, math.random (0, 12) do t[i] = pick (chars) end\n"
    "  return table.concat (t)\n"
    "end\n"
    "function gen_pattern ()\n"
    "  local t = {}\n"
    "  if math.random (8) == 1 then\n"
    "    for i = 1, math.random (1, 8) do t[i] = pick (chars) end\n"
    "    return table.concat (t)\n"
    "  end\n"
    "  if math.random (5) == 1 then t[1] = '^' end\n"
    "  for i = 1, math.random (1, 5) do\n"
    "    if math.random (4) == 1 then t[#t + 1] = pick (others)\n"
    "    else t[#t + 1] = pick (atoms) .. pick (suffixes) end\n"
    "  end\n"
    "  if math.random (5) == 1 then t[#t + 1] = '$' end\n"
    "  return table.concat (t)\n"
    "end\n"
    "local fixed = {\n"
    "  { string.rep ('a', 300), string.rep ('a?', 199) },\n"
    "  { string.rep ('a', 300), string.rep ('a?', 200) },\n"
    "  { string.rep ('a', 300), string.rep ('a?', 250) },\n"
    "  { 'abc', string.rep ('(', 32) .. string.rep (')', 32) },\n"
    "  { 'abc', string.rep ('(', 33) .. string.rep (')', 33) },\n"
    "  { string.rep ('ab', 40), string.rep ('(a)b', 33) },\n"
    "  { 'x = f(a, (b), c) + (d)', '%b()' },\n"
    "  { 'x = f(a, (b), c', '%b()' },\n"
    "  { 'THE (quick) fox', '%f[%a]%a+' },\n"
    "  { 'hello hello world world', '(%w+) %1' },\n"
    "  { 'abab', '()a()%1' },\n"
    "  { 'abab', '()a()%2' },\n"
    "  { 'a]-b', '[]-a]+' },\n"
    "  { 'a%-z', '[a-%%]+' },\n"
    "  { 'za-', '[%a-z]+' },\n"
    "  { 'a$b', 'a$b' },\n"
    "  { '^^a', '^^a' },\n"
    "  { '^a^a', '^a' },\n"
    "  { 'key = value', '^(%w+)%s*=%s*(%w+)$' },\n"
    "  { '\\255\\200a', '[\\128-\\255]+' },\n"
    "  { '\\255\\200a', '%A+' },\n"
    "  { 'a\\0b\\0', '%z' },\n"
    "  { 'a\\0b\\0', '[%z]+' },\n"
    "  { '', '' },\n"
    "  { 'abc', '' },\n"
    "  { 'abc', '.-' },\n"
    "  { 'abc', 'x*' },\n"
    "}\n"
    "FIXED = #fixed\n"
    "function gen (i)\n"
    "  if i > 1000000000 then\n"
    "    local c = fixed[i - 1000000000]\n"
    "    return c[1], c[2], 1, nil\n"
    "  end\n"
    "  math.randomseed (i)\n"
    "  local s, p = gen_subject (), gen_pattern ()\n"
    "  local init = math.random (-3, #s + 2)\n"
    "  local max = ({ nil, 0, 1, 2 })[math.random (4)]\n"
    "  return s, p, init, max\n"
    "end\n"
    "local function repl (a, b) if b == 'x' then return nil end "
    "return a .. '/' .. tostring (b) end\n"
    "function run (i)\n"
    "  local s, p, init, max = gen (i)\n"
    "  return table.concat ({\n"
    "    call (string.find, s, p), call (string.find, s, p, init),\n"
    "    call (string.find, s, p, init, true),\n"
    "    call (string.match, s, p), call (string.match, s, p, init),\n"
    "    call (iterate, s, p), call (iterate, s, p, init),\n"
    "    call (string.gsub, s, p, '<%0>', max),\n"
    "    call (string.gsub, s, p, '%1', max),\n"
    "    call (string.gsub, s, p, repl, max),\n"
    "    call (string.gsub, s, p, { a = 'A', [''] = false }, max),\n"
    "    -- bad arguments, as functions and as methods\n"
    "    call (function () return s:find (p, {}) end),\n"
    "    call (function () return s:match () end),\n"
    "    call (function () return s:gmatch (p, 'x') end),\n"
    "    call (function () return s:gsub (p) end),\n"
    "    call (function () return s:gsub (p, 'x', 1.5) end),\n"
    "    call (function () return string.find (nil, p) end),\n"
    "    call (function () return string.gsub (s, p, true) end),\n"
    "  }, '\\n')\n"
    "end\n";

/* The counter against Lua's own functions (saved in 'orig' before the
 * wrapping): "" or what differs. */
static const char *count_check =
    "local orig, count = orig, count\n"
    "function check_count (i)\n"
    "  local s, p, init = gen (i)\n"
    "  if init < 1 or init > #s + 1 then init = 1 end\n"
    "  -- find, match: the first match (a pattern with specials: find is\n"
    "  -- not a plain search)\n"
    "  if p:find ('[%^%$%*%+%?%.%(%[%%%-]') then\n"
    "    local v, _, m, a, b, e = count (s, p, init - 1, 'first')\n"
    "    local ok, x, y = pcall (orig.find, s, p, init)\n"
    "    if (v == 'raises') ~= not ok or (not ok and e ~= x) then\n"
    "      return 'first: ' .. v .. ' ' .. e .. ' vs ' .. tostring (x)\n"
    "    elseif ok and (m == 1) ~= (x ~= nil) then\n"
    "      return 'first: ' .. m .. ' matches vs ' .. tostring (x)\n"
    "    elseif ok and x and (a + 1 ~= x or b ~= y) then\n"
    "      return 'first: at ' .. a .. '-' .. b .. ' vs ' .. x .. '-' .. y\n"
    "    end\n"
    "  end\n"
    "  -- gmatch: the matches before the end, or before Lua's error\n"
    "  local v, _, m, _, _, e = count (s, p, init - 1, 'iter')\n"
    "  local n, it = 0, orig.gmatch (s, p, init)\n"
    "  local ok, err = pcall (function () while it () ~= nil do n = n + 1 "
    "end end)\n"
    "  err = not ok and err:gsub ('^check:%d+: ', '')\n"
    "  if (v == 'raises') ~= not ok or m ~= n or (not ok and e ~= err) then\n"
    "    return 'iter: ' .. v .. ' ' .. m .. ' ' .. e .. ' vs ' .. n .. ' '"
    " .. tostring (err)\n"
    "  end\n"
    "  -- gsub: the number of replacements, up to n\n"
    "  for _, max in ipairs { 1, 2, #s + 1 } do\n"
    "    local v, _, m, _, _, e = count (s, p, 0, 'each', max)\n"
    "    local ok, _, n = pcall (orig.gsub, s, p, '<%0>', max)\n"
    "    if (v == 'raises') ~= not ok or (ok and m ~= n) then\n"
    "      return 'each: ' .. v .. ' ' .. m .. ' ' .. e .. ' vs ' .. "
    "tostring (n)\n"
    "    end\n"
    "  end\n"
    "  return ''\n"
    "end\n";

static lua_State *new_state (bool wrapped)
{
    lua_State *L = lua_newstate (alloc, &pol);
    if (!L)
        bail_out ("lua_newstate failed");
    luaL_openlibs (L);
    if (wrapped) {
        if (luaL_dostring (L, "orig = { find = string.find, match = "
                              "string.match, gmatch = string.gmatch, gsub = "
                              "string.gsub }")
            != LUA_OK)
            bail_out ("orig: %s", lua_tostring (L, -1));
        lua_register (L, "count", l_count);
        pattern_open (L);
    }
    if (luaL_loadbuffer (L, driver, strlen (driver), "=cases") != LUA_OK
        || lua_pcall (L, 0, 0, 0) != LUA_OK)
        bail_out ("driver: %s", lua_tostring (L, -1));
    if (wrapped
        && (luaL_loadbuffer (L, count_check, strlen (count_check), "=check")
                != LUA_OK
            || lua_pcall (L, 0, 0, 0) != LUA_OK))
        bail_out ("check: %s", lua_tostring (L, -1));
    return L;
}

/* Call global function fn (i) in L; its string result (static copy). */
static const char *call_i (lua_State *L, const char *fn, int i, char *buf,
                           size_t len)
{
    lua_getglobal (L, fn);
    lua_pushinteger (L, i);
    if (lua_pcall (L, 1, 1, 0) != LUA_OK)
        snprintf (buf, len, "driver error: %s", lua_tostring (L, -1));
    else
        snprintf (buf, len, "%s", lua_tostring (L, -1));
    lua_pop (L, 1);
    return buf;
}

static void diag_case (lua_State *L, int i)
{
    lua_getglobal (L, "gen");
    lua_pushinteger (L, i);
    lua_call (L, 1, 2);
    lua_getglobal (L, "string");
    lua_getfield (L, -1, "format");
    lua_pushliteral (L, "subject %q pattern %q");
    lua_pushvalue (L, -5);
    lua_pushvalue (L, -5);
    lua_call (L, 3, 1);
    diag ("case %d: %s", i, lua_tostring (L, -1));
    lua_pop (L, 4);
}

static void test_differential (void)
{
    lua_State *plain = new_state (false), *wrapped = new_state (true);
    static char a[65536], b[65536];
    int differ = 0, miscounted = 0, fixed;

    lua_getglobal (plain, "FIXED");
    fixed = (int)lua_tointeger (plain, -1);
    lua_pop (plain, 1);
    for (int n = 1; n <= cases + fixed; n++) {
        /* the generated cases, then the fixed ones (i > 1000000000) */
        int i = n <= cases ? n : 1000000000 + n - cases;
        call_i (plain, "run", i, a, sizeof (a));
        call_i (wrapped, "run", i, b, sizeof (b));
        if (strcmp (a, b) != 0 && differ++ < 5) {
            diag_case (plain, i);
            diag ("lua:     %s", a);
            diag ("wrapped: %s", b);
        }
        call_i (wrapped, "check_count", i, a, sizeof (a));
        if (*a && miscounted++ < 5) {
            diag_case (plain, i);
            diag ("%s", a);
        }
    }
    ok (differ == 0, "%d generated and %d chosen cases: the wrapped "
        "functions return what Lua's return, errors included (%d differ)",
        cases, fixed, differ);
    ok (miscounted == 0, "the step counter finds Lua's matches and errors "
        "(%d differ)", miscounted);
    lua_close (plain);
    lua_close (wrapped);
}

/* Run chunk in L; its result or error message as a string (static). */
static const char *eval (lua_State *L, const char *chunk)
{
    static char buf[1024];
    if (luaL_loadbuffer (L, chunk, strlen (chunk), "=t") != LUA_OK
        || lua_pcall (L, 0, 1, 0) != LUA_OK)
        snprintf (buf, sizeof (buf), "error: %s", lua_tostring (L, -1));
    else
        snprintf (buf, sizeof (buf), "%s", luaL_tolstring (L, -1, NULL));
    lua_settop (L, 0);
    return buf;
}

static double seconds (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void test_limits (void)
{
    lua_State *L = new_state (true);
    const char *costly =
        "error: t:1: pattern too costly: more than 500000 matching steps on "
        "a subject of 30000 bytes";
    const char *calls[] = {
        "return (string.rep ('a', 30000):find ('.-.-.-.-b'))",
        "return (string.find (string.rep ('a', 30000), '.-.-.-.-b'))",
        "return (string.rep ('a', 30000):match ('(.-)(.-)(.-)b'))",
        "for w in string.rep ('a', 30000):gmatch ('a*a*a*b') do end",
        "return (string.rep ('a', 30000):gsub ('.-.-.-.-b', ''))",
        NULL,
    };

    pol.pattern_step_limit = 500000;
    is (eval (L, "return getmetatable ('').__index == string and "
                 "string.find ~= orig.find"),
        "true", "the string metatable sees the wrapped functions");
    for (int i = 0; calls[i]; i++) {
        double t0 = seconds ();
        charged = 0;
        is (eval (L, calls[i]), costly, "refused: %s", calls[i]);
        ok (seconds () - t0 < BOUNDED_SECONDS, "in %.3f s", seconds () - t0);
        ok (charged > 500000, "its steps are charged to the budget (%ld)",
            charged);
    }
    is (eval (L, "return (pcall (string.find, string.rep ('a', 30000), "
                 "'.-.-.-.-b'))"),
        "false", "pcall catches the refusal");

    /* the budget: counting stops where it ends */
    charged = 0;
    charge_limit = 1000;
    is (eval (L, "return string.rep ('a', 30000):find ('.-.-.-.-b')"),
        "error: t:1: budget spent",
        "the budget ends a search before the limit");
    ok (charged == 1001, "counting stopped past the budget (%ld)", charged);
    charge_limit = LONG_MAX / 4;

    /* Lua's plain find is O(n*m): seconds on this; here it is linear */
    double t0 = seconds ();
    charged = 0;
    is (eval (L, "local s = string.rep ('a', 1 << 20) "
                 "return tostring (s:find (string.rep ('a', 1 << 19) .. 'b', "
                 "1, true)) .. ' ' .. s:find (string.rep ('a', 1 << 19), "
                 "5, true)"),
        "nil 5", "a long plain find gives Lua's answer");
    ok (seconds () - t0 < BOUNDED_SECONDS, "in %.3f s", seconds () - t0);
    ok (charged == ((1 << 20) + (1 << 19) + 4) / 16,
        "charged an instruction per 16 bytes searched (%ld)", charged);

    /* a search within the limit runs; a small one costs little */
    charged = 0;
    is (eval (L, "return string.rep ('a', 30000):find ('[b]')"), "nil",
        "a search within the limit runs");
    ok (charged > 30000 && charged < 200000, "and costs %ld steps", charged);
    charged = 0;
    is (eval (L, "return ('sim-42'):match ('^sim%-(%d+)$')"), "42",
        "a pattern on a job name...");
    ok (charged > 0 && charged < 40, "...costs %ld steps", charged);

    /* a replacement string's escapes count once per match */
    pol.pattern_step_limit = 1000;
    is (eval (L, "return select (2, string.rep ('a', 100):gsub ('a', 'b'))"),
        "100", "gsub within the limit");
    is (eval (L, "return select (2, string.rep ('a', 100):gsub ('a', "
                 "string.rep ('%0', 10)))"),
        "error: t:1: pattern too costly: more than 1000 matching steps on a "
        "subject of 100 bytes",
        "the same with ten escapes in the replacement is refused");
    pol.pattern_step_limit = 500000;
    lua_close (L);
}

int main (void)
{
    const char *n = getenv ("TEST_LUA_PATTERN_CASES");
    if (n && atoi (n) > 0)
        cases = atoi (n);
    test_differential ();
    test_limits ();
    done_testing ();
    return 0;
}

/* vi: ts=4 sw=4 expandtab
 */
