/* The job object: the userdata a handler gets as 'job', its fields (the
 * callback's args converted on first read and cached, jobspec shortcuts,
 * job.data, computed fields from the prelude) and its methods.
 *
 * Called by lua_state.c (job_open, once per state), lua_handlers.c (one
 * job per callback) and lua_module.c (jobtap._jobspec_get, state names).
 */
#ifndef SLURM_JOBTAP_LUA_JOB_H
#define SLURM_JOBTAP_LUA_JOB_H

#include <stdbool.h>
#include <string.h>
#include <jansson.h>
#include <lua.h>
#include <lauxlib.h>

#include <flux/core.h>

#include "lua_context.h"

/* The job argument of one callback.  Valid only during that callback. */
struct jobref {
    struct host *h;
    flux_plugin_arg_t *args;
    bool valid;
    bool rejected;
    /* Borrowed from args, read once per callback: each unpack costs
     * more than the reads it serves, and nothing replaces these members
     * while the callback runs. */
    bool have_id, have_jobspec;
    json_t *id, *jobspec;
};

/* Build the job metatable (JOB_MT) and the FIELDS_KEY table in pol's
 * state, and remember the metatable in pol->job_mt. */
void job_open (struct policy *pol);

/* Push a job object for one callback's args; the caller marks it
 * invalid (j->valid = false) when the callback returns.  Inline: once
 * per callback, on the dispatch path. */
static inline struct jobref *job_push (lua_State *L,
                                       struct host *h,
                                       flux_plugin_arg_t *args)
{
    struct jobref *j = lua_newuserdatauv (L, sizeof (*j), 1);
    memset (j, 0, sizeof (*j));
    j->h = h;
    j->args = args;
    j->valid = true;
    luaL_setmetatable (L, JOB_MT);
    return j;
}

/* One key of the callback's args (borrowed), or NULL. */
json_t *job_arg (struct jobref *j, const char *key);

/* A state's name ("SCHED"), or "?". */
const char *job_state_name (json_int_t state);

/* jobtap._jobspec_get (job, key...) */
int job_lua_jobspec_get (lua_State *L);

#endif /* !SLURM_JOBTAP_LUA_JOB_H */

/* vi: ts=4 sw=4 expandtab
 */
