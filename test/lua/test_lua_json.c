/* lua/lua_json.c alone: JSON -> Lua -> JSON round trips, the Lua types a
 * policy sees, tables built in Lua, errors, and the lenient copy between
 * states that a reload uses. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>

#include "lua_json.h"
#include "tap.h"

static lua_State *L;

static lua_State *new_state (void)
{
    lua_State *s = luaL_newstate ();
    if (!s)
        bail_out ("luaL_newstate failed");
    luaL_openlibs (s);
    ljson_open (s);
    /* what the tests' Lua snippets call jobtap.null and jobtap.array */
    ljson_push_null (s);
    lua_setglobal (s, "null");
    if (luaL_dostring (s, "function array (t) return setmetatable (t or "
                          "{}, debug.getregistry ()['" ARRAY_MT "']) end")
        != LUA_OK)
        bail_out ("array: %s", lua_tostring (s, -1));
    return s;
}

static int push_protected (lua_State *s)
{
    json_t *o = lua_touserdata (s, 1);
    ljson_push (s, o, 0);
    return 1;
}

/* Push o converted (0), or -1 with the error message on the stack. */
static int push (lua_State *s, json_t *o)
{
    lua_pushcfunction (s, push_protected);
    lua_pushlightuserdata (s, o);
    return lua_pcall (s, 1, 1, 0) == LUA_OK ? 0 : -1;
}

/* Convert the value on top of the stack (popped); NULL with the error in
 * errbuf on failure. */
static json_t *to_json (lua_State *s, char *errbuf, size_t len)
{
    struct tojson_ctx c = { .o = NULL };
    if (ljson_convert (s, -1, &c) < 0) {
        snprintf (errbuf, len, "%s", lua_tostring (s, -1));
        lua_pop (s, 2);
        return NULL;
    }
    lua_pop (s, 1);
    return c.o;
}

/* Run a Lua expression; its value is left on the stack. */
static void eval (const char *expr)
{
    char chunk[1024];
    snprintf (chunk, sizeof (chunk), "return %s", expr);
    if (luaL_dostring (L, chunk) != LUA_OK)
        bail_out ("%s: %s", expr, lua_tostring (L, -1));
}

static void round_trip (const char *text)
{
    json_error_t e;
    char err[256] = "";
    json_t *in = json_loads (text, JSON_DECODE_ANY | JSON_ALLOW_NUL, &e);
    json_t *out = NULL;

    if (!in)
        bail_out ("%s: %s", text, e.text);
    if (push (L, in) < 0) {
        snprintf (err, sizeof (err), "%s", lua_tostring (L, -1));
        lua_pop (L, 1);
    }
    else
        out = to_json (L, err, sizeof (err));
    ok (out && json_equal (in, out), "round trip %s%s%s", text,
        err[0] ? ": " : "", err);
    if (out && !json_equal (in, out)) {
        char *s = json_dumps (out, JSON_ENCODE_ANY);
        diag ("got %s", s);
        free (s);
    }
    json_decref (in);
    json_decref (out);
}

static void test_round_trips (void)
{
    round_trip ("{}");
    round_trip ("[]");
    round_trip ("null");
    round_trip ("true");
    round_trip ("false");
    round_trip ("0");
    round_trip ("-42");
    round_trip ("9007199254740993");
    round_trip ("-9223372036854775808");
    round_trip ("1.5");
    round_trip ("-0.25");
    round_trip ("1e300");
    round_trip ("\"\"");
    round_trip ("\"h\\u00e9llo \\u2603\"");
    round_trip ("\"a\\u0000b\"");
    round_trip ("[1, 2.5, \"three\", true, false, null, [], {}]");
    round_trip ("[[[]], [[1]], {\"a\": []}]");
    round_trip ("{\"resources\": [{\"type\": \"node\", \"count\": 2, "
                "\"with\": [{\"type\": \"slot\", \"count\": 1, \"label\": "
                "\"task\", \"with\": [{\"type\": \"core\", \"count\": 4}]}]}], "
                "\"attributes\": {\"system\": {\"duration\": 3600.0, "
                "\"queue\": \"batch\", \"dependencies\": [], "
                "\"slurm\": {\"comment\": null}}}, \"version\": 1}");
}

/* What a policy sees: integers stay integers, reals floats, arrays
 * 1-based and marked, null the sentinel. */
static void test_lua_types (void)
{
    json_t *o = json_pack ("{s:I s:f s:[s,s] s:n s:{}}", "i",
                           (json_int_t)1 << 40, "r", 2.0, "a", "x", "y", "n",
                           "o");
    if (push (L, o) < 0)
        bail_out ("push: %s", lua_tostring (L, -1));
    lua_setglobal (L, "t");
    json_decref (o);

    const char *checks[][2] = {
        { "math.type (t.i)", "integer" },
        { "tostring (t.i)", "1099511627776" },
        { "math.type (t.r)", "float" },
        { "#t.a .. t.a[1] .. t.a[2]", "2xy" },
        { "tostring (getmetatable (t.a) == debug.getregistry ()['" ARRAY_MT
          "'])",
          "true" },
        { "tostring (getmetatable (t.o))", "nil" },
        { "tostring (t.n == null)", "true" },
    };
    for (size_t i = 0; i < sizeof (checks) / sizeof (checks[0]); i++) {
        eval (checks[i][0]);
        is (lua_tostring (L, -1), checks[i][1], "%s", checks[i][0]);
        lua_pop (L, 1);
    }
}

static void expect_json (const char *expr, const char *want)
{
    char err[256] = "";
    eval (expr);
    json_t *o = to_json (L, err, sizeof (err));
    char *s = o ? json_dumps (o, JSON_ENCODE_ANY | JSON_SORT_KEYS | JSON_COMPACT)
                : NULL;
    is (s ? s : err, want, "%s", expr);
    free (s);
    json_decref (o);
}

static void expect_error (const char *expr, const char *regex)
{
    char err[256] = "";
    eval (expr);
    json_t *o = to_json (L, err, sizeof (err));
    ok (o == NULL, "%s fails", expr);
    like (err, regex, "%s: error says why", expr);
    json_decref (o);
    isint (lua_gettop (L), 0, "%s: stack left clean", expr);
}

/* Tables built in Lua: arrays are exactly keys 1..n (or marked). */
static void test_from_lua (void)
{
    expect_json ("{ 1, 2, 3 }", "[1,2,3]");
    expect_json ("{ a = 1, b = { c = 'd' } }", "{\"a\":1,\"b\":{\"c\":\"d\"}}");
    expect_json ("{}", "{}");
    expect_json ("array ()", "[]");
    expect_json ("array { 'x' }", "[\"x\"]");
    expect_json ("{ [1] = 'a', [2] = 'b' }", "[\"a\",\"b\"]");
    expect_json ("nil", "null");
    expect_json ("null", "null");
    expect_json ("{ x = null }", "{\"x\":null}");
    expect_json ("3", "3");
    expect_json ("3.0", "3.0");
    expect_json ("{ true, false }", "[true,false]");
    expect_json ("{ s = 'a\\0b' }", "{\"s\":\"a\\u0000b\"}");
}

static void test_errors (void)
{
    expect_error ("function () end", "cannot convert a function to JSON");
    expect_error ("{ f = print }", "cannot convert a function to JSON");
    expect_error ("{ 1, 2, { io.stdout } }", "cannot convert a userdata");
    expect_error ("{ [1] = 'a', [3] = 'c' }", "table keys must be strings");
    expect_error ("{ [true] = 1 }", "table keys must be strings");
    expect_error ("{ 'a', b = 1 }", "table keys must be strings");
    expect_error ("'\\xff'", "not valid UTF-8");
    /* numbers JSON cannot hold: refused, not dropped */
    expect_error ("{ a = 1, b = 0/0 }", "cannot convert -?nan to JSON");
    expect_error ("1/0", "cannot convert inf to JSON");
    expect_error ("{ -1/0 }", "cannot convert -inf to JSON");
    /* keys JSON cannot hold as they are: refused, not dropped or cut */
    expect_error ("{ a = 1, ['\\xff'] = 2 }", "table key is not valid UTF-8");
    expect_error ("{ a = 1, ['b\\0c'] = 2 }", "table key holds a NUL byte");
    expect_error ("(function () local t = {}; t.t = t; return t end) ()",
                  "nesting too deep");
    /* a table shared at every level: 2^40 values, refused at once */
    expect_error ("(function () local t = {} for i = 1, 40 do "
                  "t = { a = t, b = t } end return t end) ()",
                  "value too large for JSON \\(more than 1048576 values\\)");

    /* JSON nested deeper than MAX_DEPTH is refused on the way in */
    json_t *deep = json_array ();
    json_t *o = deep;
    for (int i = 0; i < MAX_DEPTH + 2; i++) {
        json_t *a = json_array ();
        json_array_append_new (o, a);
        o = a;
    }
    ok (push (L, deep) < 0, "JSON nested past MAX_DEPTH is refused");
    like (lua_tostring (L, -1), "nesting too deep", "error says why");
    lua_pop (L, 1);
    json_decref (deep);
}

static int check_protected (lua_State *s)
{
    json_t *o = ljson_check (s, 1);
    json_decref (o);
    return 0;
}

/* ljson_check raises in L: the caller's pcall sees the message. */
static void test_check (void)
{
    lua_pushcfunction (L, check_protected);
    eval ("{ ok = { 1, 2 }, bad = coroutine.create (print) }");
    ok (lua_pcall (L, 1, 0, 0) != LUA_OK, "ljson_check raises in its state");
    like (lua_tostring (L, -1), "cannot convert a thread",
          "with the conversion error");
    lua_pop (L, 1);

    lua_pushcfunction (L, check_protected);
    eval ("{ 1, { a = 'b' } }");
    ok (lua_pcall (L, 1, 0, 0) == LUA_OK, "and returns for a good value");
}

/* The reload copy: plain data only, functions and what lies deeper
 * than MAX_DEPTH dropped. */
static void test_copy (void)
{
    lua_State *to = new_state ();
    char err[256] = "";

    eval ("{ n = 1, s = 'x', a = { 1, 2 }, f = print, "
          "nested = { g = print, keep = true } }");
    ljson_copy (L, -1, to);
    lua_pop (L, 1);
    isint (lua_gettop (L), 0, "copy leaves the source stack as it was");
    isint (lua_gettop (to), 1, "copy pushes one value");
    json_t *o = to_json (to, err, sizeof (err));
    char *s = o ? json_dumps (o, JSON_SORT_KEYS | JSON_COMPACT) : NULL;
    is (s ? s : err,
        "{\"a\":[1,2],\"n\":1,\"nested\":{\"keep\":true},\"s\":\"x\"}",
        "plain data copied, functions dropped");
    free (s);
    json_decref (o);

    eval ("{ a = 1, ['\\xff'] = 2, ['b\\0c'] = 3, d = 0/0, e = { 1/0 } }");
    ljson_copy (L, -1, to);
    lua_pop (L, 1);
    o = to_json (to, err, sizeof (err));
    s = o ? json_dumps (o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    is (s ? s : err, "{\"a\":1,\"e\":[]}",
        "keys and numbers JSON cannot hold dropped by a copy");
    free (s);
    json_decref (o);

    eval ("print");
    ljson_copy (L, -1, to);
    lua_pop (L, 1);
    ok (lua_type (to, -1) == LUA_TTABLE && lua_rawlen (to, -1) == 0,
        "a value with nothing to copy becomes an empty table");
    lua_pop (to, 1);

    /* a table holding itself twice: copied up to LJSON_MAX_VALUES
     * values (it would take 2^MAX_DEPTH) */
    eval ("(function () local t = {}; t.a = t; t.b = t; return t end) ()");
    isint (ljson_copy (L, -1, to), 0, "a table holding itself twice copies");
    ok (lua_type (to, -1) == LUA_TTABLE, "... as a table");
    lua_pop (L, 1);
    lua_pop (to, 1);

    /* a cycle is copied down to MAX_DEPTH, never failing the copy */
    eval ("(function () local t = { n = 1 }; t.self = t; return t end) ()");
    isint (ljson_copy (L, -1, to), 0, "a cycle copies");
    lua_pop (L, 1);
    lua_setglobal (to, "c");
    if (luaL_dostring (to, "local d, t = 0, c "
                           "while t.self do assert (t.n == 1); d = d + 1; "
                           "t = t.self end return d") != LUA_OK)
        bail_out ("cycle: %s", lua_tostring (to, -1));
    isint (lua_tointeger (to, -1), MAX_DEPTH,
           "down to MAX_DEPTH, each level with its plain fields");
    lua_pop (to, 1);

    eval ("{}");
    ljson_copy (L, -1, to);
    lua_pop (L, 1);
    ok (lua_type (to, -1) == LUA_TTABLE && !lua_getmetatable (to, -1),
        "an empty table stays a plain table");
    lua_pop (to, 1);
    lua_close (to);
}

int main (void)
{
    L = new_state ();
    test_round_trips ();
    test_lua_types ();
    test_from_lua ();
    test_errors ();
    test_check ();
    test_copy ();
    lua_close (L);
    done_testing ();
    return 0;
}

/* vi: ts=4 sw=4 expandtab
 */
