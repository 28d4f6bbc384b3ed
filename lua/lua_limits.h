/* What a policy may do: its settings (the "lua" table of its conf), the
 * memory limit (the state's allocator), the instruction budget (a count
 * hook, plus the memory a call makes and work charged by C functions
 * such as lua_pattern.c's) and the sandbox (functions removed unless the
 * settings allow them).  Nothing a script does may take slurmctld down;
 * this module bounds what it can cost.
 *
 * Called by lua_state.c (creating a state), lua_handlers.c (a budget per
 * outermost call), lua_pattern.c (charges) and the entry point (settings
 * at load).
 */
#ifndef SLURM_JOBTAP_LUA_LIMITS_H
#define SLURM_JOBTAP_LUA_LIMITS_H

#include <stdbool.h>
#include <stddef.h>
#include <lua.h>

#include "host_error.h"
#include "lua_context.h"

/* Fill h's settings from the plugin's conf: 0, or -1 with err set for
 * an invalid value (a wrong boolean is logged and ignored). */
int limits_read_settings (struct host *h, jobtap_host_error_t *err);

/* The lua_Alloc of every policy state; ud is its struct policy. */
void *limits_alloc (void *ud, void *ptr, size_t osize, size_t nsize);

/* A new instruction budget for an outermost call: from now on memory
 * allocated in pol's state counts against it too (an instruction per
 * 16 bytes), until limits_budget_end. */
void limits_budget_reset (struct policy *pol);

/* The call is over: what the host itself allocates in the state (a
 * reload's copies) is not charged. */
void limits_budget_end (struct policy *pol);

/* Is the running call past its budget?  Then a memory error is the
 * budget's (a big allocation refused): report it with the message of
 * limits_budget_error, "instruction limit of N exceeded (...)" (-1). */
bool limits_budget_spent (const struct policy *pol);
int limits_budget_error (const struct policy *pol, jobtap_host_error_t *err);

/* Instructions left in the running call's budget (0 when spent). */
long limits_budget_room (const struct policy *pol);

/* Charge n instructions of work a C function does for the running call
 * (a pattern search); past the budget, raise the instruction-limit error
 * and end the call at L's next instruction. */
void limits_charge (lua_State *L, long n);

/* Remove what h's settings do not allow from the libraries in L. */
void limits_sandbox (struct host *h, lua_State *L);

#endif /* !SLURM_JOBTAP_LUA_LIMITS_H */

/* vi: ts=4 sw=4 expandtab
 */
