/* The Lua host's shared context: one struct host per loaded policy, and
 * one struct policy per loaded version of its script (the live one is
 * host->cur; a reload builds another and swaps it in).
 *
 * Every module of jobtap-lua.so takes this context as an argument or
 * finds it from a lua_State (the state's allocator userdata is its
 * struct policy).  The runtime loads the DSO once per "*.lua" entry,
 * and each load has its own host, owned by the plugin (aux item
 * "lua::host") and freed with it.  The only file-static variable is
 * jobtap.null's sentinel (lua_json.c), whose address alone is used.
 *
 * Only lua_state.c creates and destroys policies; the entry point
 * (jobtap-lua.c) creates and destroys hosts.
 */
#ifndef SLURM_JOBTAP_LUA_CONTEXT_H
#define SLURM_JOBTAP_LUA_CONTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>
#include <lua.h>

#include <flux/core.h>

/* Names in a policy's Lua registry. */
#define JOB_MT "jobtap.job"                 /* the job object's metatable */
#define HANDLERS_KEY "jobtap.handlers"      /* { {topic, fn}, ... } */
#define FIELDS_KEY "jobtap.fields"          /* computed job fields */

struct host;

/* One loaded version of the script. */
struct policy {
    lua_State *L;
    struct host *h;
    char *source;
    size_t source_len;
    size_t mem;
    size_t mem_limit;
    long instructions;      /* executed in the current call */
    size_t alloc_bytes;     /* allocated in it: an instruction per 16 */
    bool metered;           /* a call is running: allocations count */
    long instruction_limit;
    long pattern_step_limit;
    int depth;              /* nested calls (a callback caused by a call) */
    const void *job_mt;     /* the job metatable, to tell job userdata */
};

/* Per-job Lua table (job.data), kept as a job aux item. */
struct jobdata {
    struct host *h;
    int ref;                /* registry ref in h->cur->L */
    struct jobdata *prev, *next;
};

struct host {
    flux_plugin_t *p;
    char *script;           /* path */
    char *name;             /* basename, e.g. "limits.lua" */
    struct policy *cur;
    json_t *topics;         /* topics registered with the plugin */
    struct jobdata *jobdata;
    /* settings from the policy's conf (the "lua" sub-table) */
    bool on_error_accept;
    bool allow_exec;
    bool allow_loadlib;
    long instruction_limit;
    long pattern_step_limit;
    size_t mem_limit;
};

/* The policy a state belongs to.  Inline: every job field read and
 * method call asks. */
static inline struct policy *policy_of (lua_State *L)
{
    struct policy *pol;
    lua_getallocf (L, (void **)&pol);
    return pol;
}

static inline struct host *host_of (lua_State *L)
{
    return policy_of (L)->h;
}

#endif /* !SLURM_JOBTAP_LUA_CONTEXT_H */

/* vi: ts=4 sw=4 expandtab
 */
