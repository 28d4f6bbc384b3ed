/* Handler registration and dispatch (lua_handlers.h). */
#include <fnmatch.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <jansson.h>
#include <lua.h>
#include <lauxlib.h>

#include <flux/core.h>
#include <flux/jobtap.h>

#include "lua_context.h"
#include "lua_job.h"
#include "lua_limits.h"
#include "lua_log.h"
#include "lua_handlers.h"

static int dispatch (flux_plugin_t *p,
                     const char *topic,
                     flux_plugin_arg_t *args,
                     void *arg);

static bool topic_registered (struct host *h, const char *topic)
{
    size_t i;
    json_t *v;
    json_array_foreach (h->topics, i, v) {
        if (!strcmp (json_string_value (v), topic))
            return true;
    }
    return false;
}

/* Register 'topic' with the plugin if this state is the live one. */
static int register_topic (struct host *h, const char *topic)
{
    if (!strcmp (topic, "conf.update") || topic_registered (h, topic))
        return 0;
    if (flux_plugin_add_handler (h->p, topic, dispatch, h) < 0)
        return -1;
    json_array_append_new (h->topics, json_string (topic));
    return 0;
}

/* jobtap.on (topic, fn): handlers in registration order, first glob
 * match wins (as flux_plugin_add_handler). */
int handlers_on (lua_State *L)
{
    struct policy *pol = policy_of (L);
    const char *topic = luaL_checkstring (L, 1);
    luaL_checktype (L, 2, LUA_TFUNCTION);

    lua_getfield (L, LUA_REGISTRYINDEX, HANDLERS_KEY);
    lua_Integer n = (lua_Integer)lua_rawlen (L, -1);
    lua_createtable (L, 2, 0);
    lua_pushvalue (L, 1);
    lua_rawseti (L, -2, 1);
    lua_pushvalue (L, 2);
    lua_rawseti (L, -2, 2);
    lua_rawseti (L, -2, n + 1);
    if (pol->h->cur == pol && register_topic (pol->h, topic) < 0)
        return luaL_error (L, "on: cannot register '%s'", topic);
    return 0;
}

/* Push the first handler matching topic; false if none. */
static bool push_handler (lua_State *L, const char *topic)
{
    lua_getfield (L, LUA_REGISTRYINDEX, HANDLERS_KEY);
    lua_Integer n = (lua_Integer)lua_rawlen (L, -1);
    for (lua_Integer i = 1; i <= n; i++) {
        lua_rawgeti (L, -1, i);
        lua_rawgeti (L, -1, 1);
        const char *glob = lua_tostring (L, -1);
        /* most handlers name one topic: fnmatch costs ten times strcmp */
        if (glob && (!strcmp (glob, topic)
                     || (strpbrk (glob, "*?[\\") && !fnmatch (glob, topic, 0)))) {
            lua_rawgeti (L, -2, 2);
            lua_replace (L, -4); /* fn replaces the handlers table */
            lua_pop (L, 2);
            return true;
        }
        lua_pop (L, 2);
    }
    lua_pop (L, 1);
    return false;
}

int handlers_traceback (lua_State *L)
{
    const char *msg = lua_tostring (L, 1);
    if (!msg)
        msg = lua_pushfstring (L, "(error object is a %s value)",
                               luaL_typename (L, 1));
    luaL_traceback (L, L, msg, 1);
    return 1;
}

static bool submit_topic (const char *topic)
{
    return !strcmp (topic, "job.create") || !strcmp (topic, "job.validate")
           || !strncmp (topic, "job.update.", 11)
           || !strncmp (topic, "job.dependency.", 15);
}

/* A policy failure: log it fully, tell the user nothing internal. */
static int policy_failed (struct host *h,
                          const char *topic,
                          flux_plugin_arg_t *args,
                          bool has_id,
                          flux_jobid_t id,
                          const char *what)
{
    bool provisional = id & (1ULL << 63);

    if (has_id)
        host_log (h, LOG_ERR, "%s: job %s%ju: %s", topic,
                  provisional ? "(at submit) " : "",
                  (uintmax_t)(provisional ? id & ~(1ULL << 63) : id), what);
    else
        host_log (h, LOG_ERR, "%s: %s", topic, what);
    if (!strcmp (topic, "conf.update")) {
        flux_jobtap_error (h->p, args, "policy '%s' failed: %s", h->name,
                           what);
        return -1;
    }
    /* a failed priority is a failure the runtime counts: in a pass over
     * every job, a policy failing for job after job is skipped */
    if (!strcmp (topic, "job.priority.get"))
        return -1;
    if (!submit_topic (topic) || h->on_error_accept)
        return 0;
    flux_jobtap_reject_job (h->p, args,
                            "job rejected: policy '%s' failed; contact your "
                            "administrator",
                            h->name);
    return -1;
}

struct callctx {
    struct host *h;
    const char *topic;
    flux_plugin_arg_t *args;
    bool has_id;
    flux_jobid_t id;
    int rc;
    char *what;             /* a policy failure to report */
};

/* Runs protected, so that even a memory error while building the job
 * object cannot escape to the panic handler. */
static int protected_call (lua_State *L)
{
    struct callctx *c = lua_touserdata (L, 1);
    struct jobref *j;

    lua_settop (L, 0);
    lua_pushcfunction (L, handlers_traceback); /* 1 */
    j = job_push (L, c->h, c->args);           /* 2: keeps j alive */
    json_t *id = job_arg (j, "id");
    c->has_id = json_is_integer (id);
    c->id = c->has_id ? (flux_jobid_t)json_integer_value (id) : 0;
    if (!push_handler (L, c->topic)) {
        j->valid = false;
        return 0;
    }
    lua_pushvalue (L, 2);
    lua_pushstring (L, c->topic);
    int status = lua_pcall (L, 2, LUA_MULTRET, 1);
    j->valid = false;
    if (status != LUA_OK) {
        const char *msg = lua_tostring (L, -1);
        jobtap_host_error_t budget;
        if (status == LUA_ERRMEM && limits_budget_spent (policy_of (L))) {
            limits_budget_error (policy_of (L), &budget);
            msg = budget.text;
        }
        c->what = strdup (msg ? msg : "error");
        return 0;
    }
    int nret = lua_gettop (L) - 2;
    int t = nret > 0 ? lua_type (L, 3) : LUA_TNIL;
    if (t == LUA_TNIL || (t == LUA_TBOOLEAN && lua_toboolean (L, 3)))
        c->rc = j->rejected ? -1 : 0;
    else if (t == LUA_TBOOLEAN) {
        const char *msg = nret > 1 ? lua_tostring (L, 4) : NULL;
        if (msg)
            flux_jobtap_reject_job (c->h->p, c->args, "%s", msg);
        else if (!j->rejected)
            flux_jobtap_reject_job (c->h->p, c->args,
                                    "rejected by policy '%s'", c->h->name);
        c->rc = -1;
    }
    else {
        char what[256];
        snprintf (what, sizeof (what),
                  "handler returned a %s (expected nothing, true, or false "
                  "and a message)",
                  lua_typename (L, t));
        c->what = strdup (what);
    }
    return 0;
}

/* Call the policy's handler for 'topic', within the budget. */
int handlers_call (struct host *h,
                   const char *topic,
                   flux_plugin_arg_t *args)
{
    struct policy *pol = h->cur;
    lua_State *L = pol->L;
    int base = lua_gettop (L);
    struct callctx c = { .h = h, .topic = topic, .args = args };
    int rc;

    /* one budget per outermost call: nested calls must not reset it */
    if (pol->depth++ == 0)
        limits_budget_reset (pol);
    lua_pushcfunction (L, protected_call);
    lua_pushlightuserdata (L, &c);
    if (lua_pcall (L, 1, 0, 0) != LUA_OK) {
        const char *msg = lua_tostring (L, -1);
        free (c.what);
        c.what = strdup (msg ? msg : "error");
    }
    if (--pol->depth == 0)
        limits_budget_end (pol);
    lua_settop (L, base);
    if (c.what) {
        rc = policy_failed (h, topic, args, c.has_id, c.id, c.what);
        free (c.what);
    }
    else
        rc = c.rc;
    return rc;
}

static int dispatch (flux_plugin_t *p,
                     const char *topic,
                     flux_plugin_arg_t *args,
                     void *arg)
{
    struct host *h = arg;
    (void)p;
    if (!h->cur)
        return 0;
    return handlers_call (h, topic, args);
}

void handlers_reset (struct host *h)
{
    size_t i;
    json_t *v;
    json_array_foreach (h->topics, i, v) {
        flux_plugin_remove_handler (h->p, json_string_value (v));
    }
    json_array_clear (h->topics);
    lua_State *L = h->cur->L;
    lua_getfield (L, LUA_REGISTRYINDEX, HANDLERS_KEY);
    lua_Integer n = (lua_Integer)lua_rawlen (L, -1);
    for (lua_Integer k = 1; k <= n; k++) {
        lua_rawgeti (L, -1, k);
        lua_rawgeti (L, -1, 1);
        if (register_topic (h, lua_tostring (L, -1)) < 0)
            host_log (h, LOG_ERR, "cannot register topic %s",
                      lua_tostring (L, -1));
        lua_pop (L, 2);
    }
    lua_pop (L, 1);
}

/* vi: ts=4 sw=4 expandtab
 */
