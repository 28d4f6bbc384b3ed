/* libFuzzer harness: JSON <-> Lua value conversion (lua/lua_json.c).
 *
 * Mode byte even: the rest is a JSON text; pushed into Lua it must come
 * back (strict conversion) equal to itself.  Odd: the rest is a little
 * program that builds a Lua value (numbers, NaN, strings of any bytes,
 * tables with keys of any type, arrays, jobtap.null, functions, cycles);
 * a strict conversion that succeeds must hold exactly that value, a
 * lenient one must convert back, and ljson_copy must leave one table on
 * the other state.  A mismatch aborts (a crash to fix). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "lua_json.h"
#include "fuzz_reader.h"

static lua_State *L, *L2;

int LLVMFuzzerInitialize (int *argc, char ***argv)
{
    (void)argc, (void)argv;
    L = luaL_newstate ();
    L2 = luaL_newstate ();
    ljson_open (L);
    ljson_open (L2);
    return 0;
}

static void fail (const char *what)
{
    fprintf (stderr, "fuzz_lua_json: %s\n", what);
    abort ();
}

static int is_null (lua_State *S, int idx)
{
    idx = lua_absindex (S, idx);
    ljson_push_null (S);
    int same = lua_rawequal (S, idx, -1);
    lua_pop (S, 1);
    return same;
}

/* Does the JSON value j hold exactly the Lua value at idx? */
static bool matches (lua_State *S, int idx, json_t *j, int depth)
{
    idx = lua_absindex (S, idx);
    if (depth > MAX_DEPTH + 1)
        return false;
    switch (lua_type (S, idx)) {
    case LUA_TNIL:
        return json_is_null (j);
    case LUA_TBOOLEAN:
        return json_is_boolean (j) &&
               json_is_true (j) == (bool)lua_toboolean (S, idx);
    case LUA_TNUMBER:
        if (lua_isinteger (S, idx))
            return json_is_integer (j) &&
                   json_integer_value (j) == lua_tointeger (S, idx);
        return json_is_real (j) && json_real_value (j) == lua_tonumber (S, idx);
    case LUA_TSTRING: {
        size_t len;
        const char *s = lua_tolstring (S, idx, &len);
        return json_is_string (j) && json_string_length (j) == len &&
               !memcmp (json_string_value (j), s, len);
    }
    case LUA_TLIGHTUSERDATA:
        return is_null (S, idx) && json_is_null (j);
    case LUA_TTABLE: {
        size_t pairs = 0;
        lua_checkstack (S, 4);
        lua_pushnil (S);
        while (lua_next (S, idx)) {
            json_t *v = NULL;
            pairs++;
            if (json_is_array (j) && lua_isinteger (S, -2)) {
                lua_Integer i = lua_tointeger (S, -2);
                if (i >= 1)
                    v = json_array_get (j, (size_t)(i - 1));
            }
            else if (json_is_object (j) && lua_type (S, -2) == LUA_TSTRING) {
                size_t klen;
                const char *k = lua_tolstring (S, -2, &klen);
                if (strlen (k) == klen)
                    v = json_object_get (j, k);
            }
            if (!v || !matches (S, -1, v, depth + 1)) {
                lua_pop (S, 2);
                return false;
            }
            lua_pop (S, 1);
        }
        return json_is_array (j) ? json_array_size (j) == pairs
                                 : json_is_object (j) && json_object_size (j) == pairs;
    }
    default:
        return false;
    }
}

static int push_protected (lua_State *S)
{
    ljson_push (S, lua_touserdata (S, 1), 0);
    return 1;
}

static void fuzz_json (const uint8_t *data, size_t size)
{
    json_t *o = json_loadb ((const char *)data, size,
                            JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    if (!o)
        return;
    lua_pushcfunction (L, push_protected);
    lua_pushlightuserdata (L, o);
    if (lua_pcall (L, 1, 1, 0) == LUA_OK) {
        struct tojson_ctx c = {.o = NULL};
        if (!matches (L, -1, o, 0))
            fail ("JSON pushed into Lua is not the same value");
        if (ljson_convert (L, -1, &c) < 0)
            fail (lua_tostring (L, -1));
        if (!c.o || !json_equal (c.o, o))
            fail ("JSON -> Lua -> JSON is not the same");
        json_decref (c.o);
    }
    lua_settop (L, 0);
    json_decref (o);
}

static int a_function (lua_State *S)
{
    (void)S;
    return 0;
}

/* Build a value at index 1 of L from the program in r. */
static void build (struct reader *r)
{
    lua_newtable (L);
    /* room for every value and for the conversions' own calls after */
    while (r->left && lua_gettop (L) < 100 && lua_checkstack (L, 8)) {
        uint8_t op = take (r);
        switch (op % 12) {
        case 0:
            lua_pushinteger (L, (lua_Integer)take64 (r));
            break;
        case 1: {
            uint64_t bits = take64 (r);
            double d;
            memcpy (&d, &bits, sizeof (d));
            lua_pushnumber (L, d);
            break;
        }
        case 2: {
            char s[16];
            uint8_t n = take (r) % sizeof (s);
            for (int i = 0; i < n; i++)
                s[i] = (char)take (r);
            lua_pushlstring (L, s, n);
            break;
        }
        case 3:
            lua_newtable (L);
            break;
        case 4: /* t[k] = v with t, k, v the top three */
            if (lua_gettop (L) >= 3 && lua_istable (L, -3) && !lua_isnil (L, -2) &&
                !(lua_type (L, -2) == LUA_TNUMBER && isnan (lua_tonumber (L, -2))))
                lua_rawset (L, -3);
            break;
        case 5: /* t[i] = v */
            if (lua_gettop (L) >= 2 && lua_istable (L, -2))
                lua_rawseti (L, -2, (lua_Integer)(take (r) % 8) - 1);
            break;
        case 6:
            if (lua_istable (L, -1))
                luaL_setmetatable (L, ARRAY_MT);
            break;
        case 7:
            lua_pushboolean (L, take (r) & 1);
            break;
        case 8:
            ljson_push_null (L);
            break;
        case 9:
            lua_pushcfunction (L, a_function);
            break;
        case 10: /* the outer table again: a cycle */
            lua_pushvalue (L, 1);
            break;
        case 11: /* the value below the top again (shared, nested twice) */
            if (lua_gettop (L) >= 2)
                lua_pushvalue (L, -2);
            break;
        }
    }
}

static void fuzz_lua (const uint8_t *data, size_t size)
{
    struct reader r = {data, size};
    struct tojson_ctx strict = {.o = NULL};
    struct tojson_ctx lenient = {.o = NULL, .lenient = true};

    build (&r);
    if (ljson_convert (L, 1, &strict) == 0) {
        if (!strict.o)
            fail ("strict conversion succeeded with no value");
        if (!matches (L, 1, strict.o, 0)) {
            char *text = json_dumps (strict.o, JSON_ENCODE_ANY);
            fprintf (stderr, "fuzz_lua_json: converted: %s\n", text);
            free (text);
            fail ("strict conversion succeeded but does not hold the value");
        }
    }
    else
        lua_pop (L, 1); /* the error */
    if (ljson_convert (L, 1, &lenient) < 0)
        fail ("lenient conversion failed");
    if (lenient.o) {
        lua_pushcfunction (L, push_protected);
        lua_pushlightuserdata (L, lenient.o);
        if (lua_pcall (L, 1, 1, 0) != LUA_OK)
            fail ("a lenient result does not convert back");
    }
    int before = lua_gettop (L2);
    (void)ljson_copy (L, 1, L2);
    if (lua_gettop (L2) != before + 1 || !lua_istable (L2, -1))
        fail ("ljson_copy left no table");
    json_decref (strict.o);
    json_decref (lenient.o);
    lua_settop (L, 0);
    lua_settop (L2, 0);
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    static unsigned runs;
    if (size < 1)
        return 0;
    if (data[0] & 1)
        fuzz_lua (data + 1, size - 1);
    else
        fuzz_json (data + 1, size - 1);
    if (++runs % 256 == 0) {
        lua_gc (L, LUA_GCCOLLECT);
        lua_gc (L2, LUA_GCCOLLECT);
    }
    return 0;
}
