/* JSON <-> Lua value conversion (lua_json.h). */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <jansson.h>
#include <lua.h>
#include <lauxlib.h>

#include "lua_json.h"

/* Its address is jobtap.null: one per process, shared by every state,
 * since only the address is ever used. */
static int null_sentinel;

void ljson_open (lua_State *L)
{
    luaL_newmetatable (L, ARRAY_MT);
    lua_pop (L, 1);
}

void ljson_push_null (lua_State *L)
{
    lua_pushlightuserdata (L, &null_sentinel);
}

void ljson_push (lua_State *L, json_t *o, int depth)
{
    luaL_checkstack (L, 4, "json nesting");
    if (depth > MAX_DEPTH)
        luaL_error (L, "JSON nesting too deep");
    switch (json_typeof (o)) {
        case JSON_OBJECT: {
            const char *k;
            json_t *v;
            lua_createtable (L, 0, (int)json_object_size (o));
            json_object_foreach (o, k, v) {
                ljson_push (L, v, depth + 1);
                lua_setfield (L, -2, k);
            }
            break;
        }
        case JSON_ARRAY: {
            size_t i;
            json_t *v;
            lua_createtable (L, (int)json_array_size (o), 0);
            json_array_foreach (o, i, v) {
                ljson_push (L, v, depth + 1);
                lua_rawseti (L, -2, (lua_Integer)i + 1);
            }
            luaL_setmetatable (L, ARRAY_MT);
            break;
        }
        case JSON_STRING:
            lua_pushlstring (L, json_string_value (o), json_string_length (o));
            break;
        case JSON_INTEGER:
            lua_pushinteger (L, (lua_Integer)json_integer_value (o));
            break;
        case JSON_REAL:
            lua_pushnumber (L, json_real_value (o));
            break;
        case JSON_TRUE:
            lua_pushboolean (L, 1);
            break;
        case JSON_FALSE:
            lua_pushboolean (L, 0);
            break;
        case JSON_NULL:
        default:
            lua_pushlightuserdata (L, &null_sentinel);
            break;
    }
}

/* Is the table at idx an array: marked with jobtap.array, or non-empty
 * with keys exactly 1..n? */
static bool table_is_array (lua_State *L, int idx, size_t *np)
{
    size_t n = 0;
    lua_Integer max = 0;
    bool marked = false;

    if (lua_getmetatable (L, idx)) {
        luaL_getmetatable (L, ARRAY_MT);
        marked = lua_rawequal (L, -1, -2);
        lua_pop (L, 2);
    }
    lua_pushnil (L);
    while (lua_next (L, idx)) {
        lua_pop (L, 1);
        if (!lua_isinteger (L, -1) || lua_tointeger (L, -1) < 1) {
            lua_pop (L, 1);
            return false;
        }
        if (lua_tointeger (L, -1) > max)
            max = lua_tointeger (L, -1);
        n++;
    }
    *np = n;
    if ((lua_Integer)n != max)
        return false;
    return marked || n > 0;
}

/* o[key] = v (v's reference taken) for the string key at -2.  A key
 * JSON cannot hold as it is (a NUL byte, which would cut it short, or
 * not UTF-8, which jansson refuses) raises, or is dropped by a lenient
 * conversion: never a member lost or renamed without a word. */
static void
object_set (lua_State *L, struct tojson_ctx *c, json_t *o, json_t *v)
{
    size_t len;
    const char *key = lua_tolstring (L, -2, &len);

    if (strlen (key) != len) {
        json_decref (v);
        if (!c->lenient)
            luaL_error (L, "table key holds a NUL byte");
        return;
    }
    if (json_object_set_new (o, key, v) < 0 && !c->lenient) {
        json_t *s = json_stringn (key, len);
        json_decref (s);
        luaL_error (L, s ? "out of memory" : "table key is not valid UTF-8");
    }
}

/* Convert the value at idx (depth: tables above it); NULL for a value
 * dropped by a lenient conversion. */
static json_t *to_json (lua_State *L, struct tojson_ctx *c, int idx, int depth)
{
    /* A lenient result must convert back (ljson_push refuses anything
     * deeper), or a cycle in copied state would fail the copy. */
    if (c->lenient && depth > MAX_DEPTH)
        return NULL;
    if (++c->nvalues > LJSON_MAX_VALUES) {
        if (c->lenient)
            return NULL;
        luaL_error (L, "value too large for JSON (more than %d values)",
                    LJSON_MAX_VALUES);
    }
    idx = lua_absindex (L, idx);
    luaL_checkstack (L, 4, "table nesting");
    switch (lua_type (L, idx)) {
        case LUA_TNIL:
            return json_null ();
        case LUA_TBOOLEAN:
            return json_boolean (lua_toboolean (L, idx));
        case LUA_TNUMBER:
            if (lua_isinteger (L, idx))
                return json_integer ((json_int_t)lua_tointeger (L, idx));
            if (!isfinite (lua_tonumber (L, idx))) {
                /* JSON has no NaN or infinity (json_real refuses them) */
                if (!c->lenient)
                    luaL_error (L, "cannot convert %f to JSON",
                                lua_tonumber (L, idx));
                return NULL;
            }
            return json_real (lua_tonumber (L, idx));
        case LUA_TSTRING: {
            size_t len;
            const char *s = lua_tolstring (L, idx, &len);
            json_t *o = json_stringn (s, len);
            if (!o && !c->lenient)
                luaL_error (L, "string is not valid UTF-8");
            return o;
        }
        case LUA_TLIGHTUSERDATA:
            if (lua_touserdata (L, idx) == &null_sentinel)
                return json_null ();
            break;
        case LUA_TTABLE: {
            size_t n;
            json_t *o;
            if (depth > MAX_DEPTH) {
                if (c->lenient)
                    return NULL;
                luaL_error (L, "table nesting too deep (cycle?)");
            }
            if (table_is_array (L, idx, &n)) {
                if (!(o = c->building[depth] = json_array ()))
                    luaL_error (L, "out of memory");
                for (size_t i = 1; i <= n; i++) {
                    lua_rawgeti (L, idx, (lua_Integer)i);
                    json_t *v = to_json (L, c, -1, depth + 1);
                    if (v)
                        json_array_append_new (o, v);
                    lua_pop (L, 1);
                }
            }
            else {
                if (!(o = c->building[depth] = json_object ()))
                    luaL_error (L, "out of memory");
                lua_pushnil (L);
                while (lua_next (L, idx)) {
                    json_t *v;
                    if (lua_type (L, -2) != LUA_TSTRING) {
                        if (!c->lenient)
                            luaL_error (L, "table keys must be strings (or "
                                           "1..n for an array)");
                    }
                    else if ((v = to_json (L, c, -1, depth + 1)))
                        object_set (L, c, o, v);
                    lua_pop (L, 1);
                }
            }
            c->building[depth] = NULL; /* the caller owns it now */
            return o;
        }
        default:
            break;
    }
    if (!c->lenient)
        luaL_error (L, "cannot convert a %s to JSON", luaL_typename (L, idx));
    return NULL;
}

static int tojson_protected (lua_State *L)
{
    struct tojson_ctx *c = lua_touserdata (L, 2);
    c->o = to_json (L, c, 1, 0);
    return 0;
}

int ljson_convert (lua_State *L, int idx, struct tojson_ctx *c)
{
    idx = lua_absindex (L, idx);
    lua_pushcfunction (L, tojson_protected);
    lua_pushvalue (L, idx);
    lua_pushlightuserdata (L, c);
    if (lua_pcall (L, 2, 0, 0) != LUA_OK) {
        for (int d = 0; d <= MAX_DEPTH; d++)
            json_decref (c->building[d]);
        return -1;
    }
    return 0;
}

json_t *ljson_check (lua_State *L, int idx)
{
    struct tojson_ctx c = { .o = NULL };
    luaL_checkstack (L, 3, "converting to JSON");
    if (ljson_convert (L, idx, &c) < 0)
        lua_error (L);
    return c.o;
}

static int push_protected (lua_State *L)
{
    ljson_push (L, lua_touserdata (L, 1), 0);
    return 1;
}

int ljson_copy (lua_State *from, int idx, lua_State *to)
{
    struct tojson_ctx c = { .o = NULL, .lenient = true };
    int rc = 0;
    if (!lua_checkstack (from, 3)) { /* no room for the conversion's call */
        lua_newtable (to);
        return -1;
    }
    if (ljson_convert (from, idx, &c) < 0) { /* out of memory */
        lua_pop (from, 1);
        rc = -1;
    }
    if (c.o && json_is_object (c.o) && json_object_size (c.o) == 0) {
        lua_newtable (to);
    }
    else if (c.o) {
        /* Protected: 'to' has no panic handler, so an unprotected error
         * (its memory limit) would abort the process. */
        lua_pushcfunction (to, push_protected);
        lua_pushlightuserdata (to, c.o);
        if (lua_pcall (to, 1, 1, 0) != LUA_OK) {
            lua_pop (to, 1);
            lua_newtable (to);
            rc = -1;
        }
    }
    else
        lua_newtable (to);
    json_decref (c.o);
    return rc;
}

/* vi: ts=4 sw=4 expandtab
 */
