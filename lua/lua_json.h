/* JSON <-> Lua value conversion for the Lua host.
 *
 * Owns the representation of JSON in Lua: objects are tables, arrays are
 * 1-based tables marked with the ARRAY_MT metatable, null is the
 * light userdata pushed by ljson_push_null (jobtap.null: the address of
 * a file-static variable, one per process, shared by every policy's
 * state since dlopen maps the DSO once).  Knows nothing
 * of jobs or policies, so it can be tested alone (test/lua/
 * test_lua_json.c).  Every state that converts must have created
 * ARRAY_MT (ljson_open).  Called by every other module of jobtap-lua.so.
 */
#ifndef SLURM_JOBTAP_LUA_JSON_H
#define SLURM_JOBTAP_LUA_JSON_H

#include <stdbool.h>
#include <jansson.h>
#include <lua.h>

#define ARRAY_MT "jobtap.array"
#define MAX_DEPTH 64
/* Values one conversion makes at most: a table shared at every level
 * (t = {a = t0, b = t0}, ...) or a table holding itself twice would
 * otherwise take time exponential in MAX_DEPTH. */
#ifndef LJSON_MAX_VALUES /* test/fuzz sets a small one to stay fast */
#define LJSON_MAX_VALUES (1 << 20)
#endif

/* A conversion in progress.  Containers being filled are held here, not
 * yet in their parents, so that an error raised anywhere (a value JSON
 * cannot hold, a bad key, memory) frees everything built so far. */
struct tojson_ctx {
    json_t *building[MAX_DEPTH + 1];
    json_t *o;    /* the result */
    bool lenient; /* drop what JSON cannot hold instead of raising */
    size_t nvalues; /* made so far (LJSON_MAX_VALUES) */
};

/* Register ARRAY_MT in L's registry. */
void ljson_open (lua_State *L);

/* Push 'o' converted to Lua (depth: the nesting above o).  Raises a Lua
 * error past MAX_DEPTH or when out of stack. */
void ljson_push (lua_State *L, json_t *o, int depth);

/* Push jobtap.null. */
void ljson_push_null (lua_State *L);

/* Convert the value at idx in a protected call: 0, or -1 with the error
 * on L's stack and what was built freed.  c->o is the result (NULL for
 * a value a lenient conversion dropped).  L must have room for three
 * more values (lua_checkstack). */
int ljson_convert (lua_State *L, int idx, struct tojson_ctx *c);

/* Convert the value at idx (a new reference); on error raises it in L
 * (nothing leaks). */
json_t *ljson_check (lua_State *L, int idx);

/* Push onto 'to' a copy of the plain data at idx of 'from' (through
 * JSON, which drops functions, userdata and what is nested deeper than
 * MAX_DEPTH, such as the far end of a cycle, and what lies past
 * LJSON_MAX_VALUES); an empty table when
 * nothing is left.  0, or -1 if the copy failed for lack of memory in
 * either state (an empty table is pushed).  Never raises. */
int ljson_copy (lua_State *from, int idx, lua_State *to);

#endif /* !SLURM_JOBTAP_LUA_JSON_H */

/* vi: ts=4 sw=4 expandtab
 */
