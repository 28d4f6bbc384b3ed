/* jobtap-lua.so: a jobtap plugin that runs one Lua 5.4 policy script.
 *
 * The runtime loads this DSO once per "*.lua" entry of jobtap.conf and
 * hands it the script path in the plugin aux item
 * "slurm-jobtap::lua-script".  Each policy gets its own lua_State; a
 * reload (conf.update with a changed file) builds a fresh state and swaps
 * it in only if the new script loads.
 *
 * Nothing a script does may take slurmctld down: every call into Lua is
 * protected, bounded by an instruction budget (count hook) and a memory
 * limit (allocator), and dangerous functions are removed unless the
 * policy's conf turns them on.  docs/lua.md is the user documentation.
 *
 * This file is the entry point: it creates the host (lua_context.h),
 * loads the first state and reloads on conf.update.  The modules:
 *
 *   lua_state.c     states: create, swap, destroy
 *   lua_handlers.c  jobtap.on, dispatch of callbacks to handlers
 *   lua_module.c    the 'jobtap' module table
 *   lua_job.c       the job object (fields, methods, job.data)
 *   lua_ops.c       operations on a job by id (jobtap.* and job:*)
 *   lua_json.c      JSON <-> Lua values
 *   lua_limits.c    settings, memory and instruction limits, sandbox
 *   lua_pattern.c   string.find/match/gmatch/gsub bounded by a step count
 *   lua_pattern_count.c  the step count of a pattern search
 *   lua_log.c       logging
 *
 * Only flux_plugin_init is exported (the rest is hidden, so that no
 * symbol of slurmctld or another plugin can take the place of ours).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <jansson.h>

#include <flux/core.h>
#include <flux/jobtap.h>

#include "lua_context.h"
#include "lua_handlers.h"
#include "lua_limits.h"
#include "lua_log.h"
#include "lua_state.h"

/* conf.update: reload the script if it changed, then pass the call on to
 * the script's own conf.update handler, if any. A script that cannot be
 * read or loaded refuses the new config, as a plugin's conf.update may:
 * the loaded version keeps running, and the host reports the refusal
 * (the reconfigure's log line, `jobtap status`). */
static int conf_update_cb (flux_plugin_t *p,
                           const char *topic,
                           flux_plugin_arg_t *args,
                           void *arg)
{
    struct host *h = arg;
    char *source;
    size_t len;

    if (state_read_file (h->script, &source, &len) < 0)
        return flux_jobtap_error (p, args,
                                  "reload: %s: %s; keeping the loaded version",
                                  h->script, strerror (errno));
    if (h->cur && len == h->cur->source_len
        && !memcmp (source, h->cur->source, len))
        free (source);
    else {
        jobtap_host_error_t err;
        struct policy *pol = state_create (h, h->cur, source, len, &err);
        if (!pol)
            return flux_jobtap_error (p, args,
                                      "reload failed, keeping the loaded "
                                      "version: %s",
                                      err.text);
        state_swap (h, pol);
        host_log (h, LOG_INFO, "reloaded %s", h->script);
    }
    return handlers_call (h, topic, args);
}

static void host_destroy (void *arg)
{
    struct host *h = arg;
    if (h) {
        for (struct jobdata *jd = h->jobdata; jd; jd = jd->next)
            jd->h = NULL; /* leaked by the runtime: never touch us */
        state_destroy (h->cur);
        json_decref (h->topics);
        free (h->script);
        free (h->name);
        free (h);
    }
}

static void set_load_error (flux_plugin_t *p, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

static void set_load_error (flux_plugin_t *p, const char *fmt, ...)
{
    char *s = NULL;
    va_list ap;
    va_start (ap, fmt);
    if (vasprintf (&s, fmt, ap) < 0)
        s = NULL;
    va_end (ap);
    if (s && flux_plugin_aux_set (p, "slurm-jobtap::lua-error", s, free) < 0)
        free (s);
}

__attribute__ ((visibility ("default"))) int flux_plugin_init (flux_plugin_t *p)
{
    const char *script = flux_plugin_aux_get (p, "slurm-jobtap::lua-script");
    struct host *h;
    jobtap_host_error_t err;
    char *source;
    size_t len;
    struct policy *pol;

    if (!script) {
        flux_log (flux_jobtap_get_flux (p), LOG_ERR,
                  "jobtap-lua.so: load a .lua policy, not this plugin");
        set_load_error (p, "jobtap-lua.so is loaded through a *.lua entry");
        return -1;
    }
    if (!(h = calloc (1, sizeof (*h))) || !(h->topics = json_array ())
        || !(h->script = strdup (script))) {
        host_destroy (h);
        return -1;
    }
    const char *base = strrchr (script, '/');
    h->name = strdup (base ? base + 1 : script);
    h->p = p;
    if (!h->name || flux_plugin_aux_set (p, "lua::host", h, host_destroy) < 0) {
        host_destroy (h);
        return -1;
    }
    if (limits_read_settings (h, &err) < 0) {
        set_load_error (p, "%s: %s", script, err.text);
        return -1;
    }
    if (state_read_file (script, &source, &len) < 0) {
        set_load_error (p, "%s: %s", script, strerror (errno));
        return -1;
    }
    if (flux_plugin_add_handler (p, "conf.update", conf_update_cb, h) < 0)
        return -1;
    if (!(pol = state_create (h, NULL, source, len, &err))) {
        host_log (h, LOG_ERR, "load failed: %s", err.text);
        set_load_error (p, "%s: %s", script, err.text);
        return -1;
    }
    state_swap (h, pol);
    return 0;
}

/* vi: ts=4 sw=4 expandtab
 */
