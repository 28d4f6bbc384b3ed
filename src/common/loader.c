/* Loading and removing jobtap plugins (loader.h). */
#include <dlfcn.h>
#include <errno.h>
#include <fnmatch.h>
#include <libgen.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include <flux/core.h>
#include <flux/jobtap.h>

#include "builtins.h"
#include "dispatch.h"
#include "event.h"
#include "host.h"
#include "host_error.h"
#include "job.h"
#include "jtplugin.h"
#include "log.h"
#include "plugin_container.h"
#include "loader.h"
#include "priority.h"
#include "reactor.h"
#include "runtime.h"
#include "spec.h"

#ifndef JOBTAP_PLUGIN_SEARCHDIR
#define JOBTAP_PLUGIN_SEARCHDIR "/usr/local/lib/slurm-jobtap/plugins"
#endif

/* The Lua host plugin that runs "*.lua" policies. */
#define LUA_HOST_SO "jobtap-lua.so"

static const struct builtin {
    const char *name;
    flux_plugin_init_f init;
} builtins[] = {
    { ".priority-default", builtin_priority_default_init },
    { ".limit-job-size", builtin_limit_job_size_init },
    { ".limit-duration", builtin_limit_duration_init },
    { ".dependency-slurm", builtin_dependency_slurm_init },
    { ".update-duration", builtin_update_duration_init },
    { NULL, NULL },
};

static int loader_load_lua (struct jt_plugin *jt,
                            const char *path,
                            jobtap_host_error_t *err);
static bool has_suffix (const char *s, const char *suffix);

/* The start of a plugin's removal: its timers stop for good, and its job
 * aux on active jobs goes (the destructors run as its code). */
static void loader_let_go (struct runtime *rt, struct jt_plugin *jt)
{
    struct jt_plugin *prev;

    jt->removed = true;
    reactor_plugin_gone (rt, jt);
    prev = jt_enter (rt, jt);
    job_aux_plugin_gone (rt, jt);
    dispatch_stack_aux_gone (rt, jt);
    jt_leave (rt, prev);
}

/* Let go of a plugin, unlink and destroy it (now, or when the callbacks
 * running return), then free the timers it left behind. */
static void loader_unload (struct jt_plugin *jt)
{
    struct runtime *rt = jt->rt;

    loader_let_go (rt, jt);
    jt_retire (rt, jt);
    reactor_reap (rt);
}

int conf_update (struct jt_plugin *jt, json_t *config, jobtap_host_error_t *err)
{
    flux_plugin_arg_t *args = flux_plugin_arg_create ();
    const char *errmsg = NULL;
    int rc = 0;

    if (!args
        || flux_plugin_arg_pack (args,
                                 FLUX_PLUGIN_ARG_IN,
                                 "{s:O}",
                                 "conf", config) < 0) {
        flux_plugin_arg_destroy (args);
        errprintf (err, "out of memory");
        errno = ENOMEM;
        return -1;
    }
    if (jt_call (jt, "conf.update", args) < 0) {
        if (flux_plugin_arg_unpack (args,
                                    FLUX_PLUGIN_ARG_OUT,
                                    "{s:s}",
                                    "errmsg", &errmsg) < 0)
            errmsg = NULL;
        if (errmsg)
            errprintf (err, "%s", errmsg);
        else
            errprintf (err, "config rejected by %s jobtap plugin",
                       jt_internal_name (jt));
        errno = EINVAL;
        rc = -1;
    }
    flux_plugin_arg_destroy (args);
    return rc;
}

static int sort_cmp_state (const void *a, const void *b)
{
    const struct job *x = *(struct job *const *)a;
    const struct job *y = *(struct job *const *)b;
    if (x->state != y->state)
        return x->state < y->state ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id ? 1 : 0;
}

static int sort_cmp_rstate (const void *a, const void *b)
{
    const struct job *x = *(struct job *const *)a;
    const struct job *y = *(struct job *const *)b;
    if (x->state != y->state)
        return x->state > y->state ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id ? 1 : 0;
}

static void call_dependency_schemes (struct jt_plugin *jt, struct job *job)
{
    json_t *deps = job_dependencies (job);
    size_t i;
    json_t *entry;

    json_array_foreach (deps, i, entry) {
        const char *scheme;
        char topic[256];
        flux_plugin_arg_t *args;
        if (json_unpack (entry, "{s:s}", "scheme", &scheme) < 0)
            continue;
        snprintf (topic, sizeof (topic), "job.dependency.%s", scheme);
        if (!flux_plugin_match_handler (jt->p, topic)
            || !(args = job_args_create (job)))
            continue;
        flux_plugin_arg_pack (args,
                              FLUX_PLUGIN_ARG_IN,
                              "{s:O}",
                              "dependency", entry);
        jt_call (jt, topic, args);
        flux_plugin_arg_destroy (args);
    }
    json_decref (deps);
}

/* Order 'n' items of 'size' at 'base' by jt's load sort order: by state
 * ('up'), by state descending ('down'), or as they are. */
void sort_for_plugin (struct jt_plugin *jt, void *base, size_t n,
                             size_t size,
                             int (*up) (const void *, const void *),
                             int (*down) (const void *, const void *))
{
    if (jt->sort_mode && !strcmp (jt->sort_mode, "state"))
        qsort (base, n, size, up);
    else if (jt->sort_mode && !strcmp (jt->sort_mode, "-state"))
        qsort (base, n, size, down);
}

/* job.create then job.new on jt alone (results ignored) for a job that
 * existed before the plugin saw it: a load, or a scheduler restart.  The
 * caller makes the job current. */
void create_and_new_on (struct jt_plugin *jt, struct job *job)
{
    flux_plugin_arg_t *args;
    if ((args = job_args_create (job))) {
        jt_call (jt, "job.create", args);
        flux_plugin_arg_destroy (args);
    }
    if ((args = job_args_create (job))) {
        jt_call (jt, "job.new", args);
        flux_plugin_arg_destroy (args);
    }
}

/* Give a newly loaded plugin the active jobs: job.create and job.new on
 * it alone (results ignored), dependencies and job.state.depend for
 * DEPEND jobs, then the whole stack reprioritizes. */
static void loader_replay (struct jt_plugin *jt)
{
    struct runtime *rt = jt->rt;
    int n;
    struct job **v = table_snapshot (rt, &n, false);

    if (!v)
        return;
    sort_for_plugin (jt, v, n, sizeof (*v), sort_cmp_state, sort_cmp_rstate);
    for (int i = 0; i < n; i++) {
        struct job *job = v[i];
        flux_plugin_arg_t *args;
        if (job->state == FLUX_JOB_STATE_INACTIVE || !is_loaded (rt, jt))
            continue;
        stack_push (job);
        create_and_new_on (jt, job);
        if (job->state == FLUX_JOB_STATE_DEPEND) {
            call_dependency_schemes (jt, job);
            if ((args = job_args_create (job))) {
                jt_call (jt, "job.state.depend", args);
                flux_plugin_arg_destroy (args);
            }
        }
        stack_pop (rt);
        job_sync_host (job);
    }
    snapshot_free (v, n);
    reprioritize_all (rt);
}

struct jt_plugin *loader_find (struct runtime *rt, const char *list_name)
{
    for (struct jt_plugin *jt = rt->plugins; jt; jt = jt->next)
        if (!strcmp (jt->list_name, list_name))
            return jt;
    return NULL;
}

/* A plugin of jt's list name is loaded: err says so, errno EEXIST. */
static bool loader_loaded_already (struct runtime *rt,
                                   struct jt_plugin *jt,
                                   jobtap_host_error_t *err)
{
    if (!loader_find (rt, jt->list_name))
        return false;
    errprintf (err, "%s already loaded", jt->list_name);
    errno = EEXIST;
    return true;
}

/* A plugin's flux_plugin_init runs as its code: what it makes (timers)
 * is its own. */
static int init_builtin (struct jt_plugin *jt, flux_plugin_init_f init)
{
    struct jt_plugin *prev = jt_enter (jt->rt, jt);
    int rc = plugin_init_builtin (jt->p, init);
    jt_leave (jt->rt, prev);
    return rc;
}

static int load_dso (struct jt_plugin *jt, const char *path)
{
    struct jt_plugin *prev = jt_enter (jt->rt, jt);
    int rc = flux_plugin_load_dso (jt->p, path);
    jt_leave (jt->rt, prev);
    return rc;
}

static char *basename_dup (const char *path)
{
    const char *s = strrchr (path, '/');
    return strdup (s ? s + 1 : path);
}

/* Load one plugin (builtin ".name" or a DSO path), run conf.update with
 * the instance config and append it to the list.  'conf' is the plugin's
 * own conf (object or NULL). */
static struct jt_plugin *loader_load_one (struct runtime *rt,
                                          const char *path,
                                          json_t *conf,
                                          jobtap_host_error_t *err)
{
    struct jt_plugin *jt = calloc (1, sizeof (*jt));
    const char *name;
    char *s = NULL;

    if (!jt || !(jt->p = flux_plugin_create ())) {
        errprintf (err, "out of memory");
        goto error;
    }
    jt->rt = rt;
    if (flux_plugin_aux_set (jt->p, "flux::jobtap", jt, NULL) < 0) {
        errprintf (err, "out of memory");
        goto error;
    }
    if (conf && !json_is_null (conf)) {
        if (!json_is_object (conf)) {
            errprintf (err, "jobtap: plugin conf must be a JSON object");
            errno = EINVAL;
            goto error;
        }
        s = json_dumps (conf, JSON_COMPACT);
        if (!s || flux_plugin_set_conf (jt->p, s) < 0) {
            errprintf (err, "%s", flux_plugin_strerror (jt->p));
            goto error;
        }
        free (s);
        s = NULL;
    }
    if (path[0] == '.' && !strchr (path, '/')) {
        const struct builtin *b;
        for (b = builtins; b->name; b++)
            if (!strcmp (b->name, path))
                break;
        if (!b->name) {
            errprintf (err, "%s: No such plugin found", path);
            errno = ENOENT;
            goto error;
        }
        if (!(jt->list_name = strdup (b->name))
            || flux_plugin_set_name (jt->p, b->name) < 0) {
            errprintf (err, "out of memory");
            goto error;
        }
        if (loader_loaded_already (rt, jt, err))
            goto error;
        if (init_builtin (jt, b->init) < 0) {
            errprintf (err, "%s", flux_plugin_strerror (jt->p));
            goto error;
        }
    }
    else {
        if (!(jt->list_name = basename_dup (path))) {
            errprintf (err, "out of memory");
            goto error;
        }
        if (loader_loaded_already (rt, jt, err))
            goto error;
        flux_plugin_set_flags (jt->p, FLUX_PLUGIN_RTLD_NOW);
        if (has_suffix (path, ".lua")) {
            if (loader_load_lua (jt, path, err) < 0)
                goto error;
        }
        else if (load_dso (jt, path) < 0) {
            int e = errno;
            errprintf (err, "%s", flux_plugin_strerror (jt->p));
            errno = e ? e : EINVAL;
            goto error;
        }
        jt->path = strdup (path);
        name = flux_plugin_get_name (jt->p);
        if (!name || strchr (name, '/') || strchr (name, '.')) {
            char *b = basename_dup (path);
            char *dot = b ? strchr (b, '.') : NULL;
            if (dot)
                *dot = '\0';
            if (!b || flux_plugin_set_name (jt->p, b) < 0) {
                free (b);
                errprintf (err, "out of memory");
                goto error;
            }
            free (b);
        }
    }
    json_t *empty = rt->config ? NULL : json_object ();
    int rc = conf_update (jt, rt->config ? rt->config : empty, err);
    json_decref (empty);
    if (rc < 0)
        goto error;
    /* append: call order = load order */
    struct jt_plugin **pp = &rt->plugins;
    while (*pp)
        pp = &(*pp)->next;
    *pp = jt;
    plugin_handlers_changed ();
    loader_replay (jt);
    runtime_log (LOG_DEBUG, "jobtap: loaded %s", jt->list_name);
    return jt;
error:
    free (s);
    if (jt) {
        int e = errno;
        loader_let_go (rt, jt);
        jt_destroy (jt);
        reactor_reap (rt);
        errno = e;
    }
    return NULL;
}

static bool has_suffix (const char *s, const char *suffix)
{
    size_t n = strlen (s), m = strlen (suffix);
    return n >= m && !strcmp (s + n - m, suffix);
}

static int lua_host_path (char *buf, size_t len)
{
    const char *env = getenv ("SLURM_JOBTAP_LUA_HOST");
    Dl_info info;

    if (env && *env) {
        snprintf (buf, len, "%s", env);
        return access (buf, R_OK);
    }
    if (dladdr ((void *)(uintptr_t)jobtap_host_init, &info) && info.dli_fname) {
        char *copy = strdup (info.dli_fname);
        if (copy) {
            const char *dir = dirname (copy);
            const char *rel[] = { "../../lua", "slurm-jobtap/plugins", NULL };
            for (int i = 0; rel[i]; i++) {
                snprintf (buf, len, "%s/%s/%s", dir, rel[i], LUA_HOST_SO);
                if (access (buf, R_OK) == 0) {
                    free (copy);
                    return 0;
                }
            }
            free (copy);
        }
    }
    snprintf (buf, len, "%s/%s", JOBTAP_PLUGIN_SEARCHDIR, LUA_HOST_SO);
    return access (buf, R_OK);
}

/* Load a "*.lua" policy: the Lua host DSO, told its script through the
 * aux item "slurm-jobtap::lua-script".  It reports load errors through
 * "slurm-jobtap::lua-error" so the config error names the script line. */
static int loader_load_lua (struct jt_plugin *jt,
                            const char *path,
                            jobtap_host_error_t *err)
{
    char so[4096];
    char *script;

    if (access (path, R_OK) < 0) {
        int e = errno;
        errprintf (err, "%s: %s", path, strerror (e));
        errno = e;
        return -1;
    }
    if (lua_host_path (so, sizeof (so)) < 0) {
        errprintf (err, "%s: Lua host plugin %s not found", path,
                   LUA_HOST_SO);
        errno = ENOENT;
        return -1;
    }
    if (!(script = strdup (path))
        || flux_plugin_aux_set (jt->p, "slurm-jobtap::lua-script", script,
                                free) < 0) {
        free (script);
        errprintf (err, "out of memory");
        errno = ENOMEM;
        return -1;
    }
    if (load_dso (jt, so) < 0) {
        int e = errno;
        const char *msg = flux_plugin_aux_get (jt->p, "slurm-jobtap::lua-error");
        errprintf (err, "%s", msg ? msg : flux_plugin_strerror (jt->p));
        errno = e ? e : EINVAL;
        return -1;
    }
    return 0;
}

/* Resolve a relative name in 'dir', then the install search dir. */
struct jt_plugin *loader_load (struct runtime *rt,
                               const char *name,
                               json_t *conf,
                               const char *dir,
                               jobtap_host_error_t *err)
{
    const char *dirs[3] = { dir, JOBTAP_PLUGIN_SEARCHDIR, NULL };

    if (name[0] == '/' || !strncmp (name, "./", 2)
        || (name[0] == '.' && !strchr (name, '/')))
        return loader_load_one (rt, name, conf, err);
    for (int i = 0; i < 2; i++) {
        char path[4096];
        if (!dirs[i])
            continue;
        snprintf (path, sizeof (path), "%s/%s", dirs[i], name);
        if (access (path, F_OK) < 0)
            continue;
        /* the first file found is the plugin: its load error is final */
        return loader_load_one (rt, path, conf, err);
    }
    errprintf (err, "%s: No such plugin found", name);
    errno = ENOENT;
    return NULL;
}

static bool is_glob (const char *s)
{
    return strpbrk (s, "*?[") != NULL;
}

int loader_remove (struct runtime *rt,
                   const char *arg,
                   jobtap_host_error_t *err)
{
    int count = 0;
    struct jt_plugin *jt = rt->plugins;

    while (jt) {
        struct jt_plugin *next = jt->next;
        bool match;
        if (!strcmp (arg, "all"))
            match = jt->list_name[0] != '.';
        else if (is_glob (arg))
            match = fnmatch (arg, jt->list_name, FNM_PERIOD) == 0;
        else
            match = !strcmp (arg, jt->list_name);
        if (match) {
            loader_unload (jt);
            count++;
        }
        jt = next;
    }
    if (count == 0 && strcmp (arg, "all") != 0) {
        errprintf (err, "Failed to find plugin to remove");
        errno = ENOENT;
        return -1;
    }
    return 0;
}

int loader_load_builtins (struct runtime *rt, jobtap_host_error_t *err)
{
    jobtap_host_error_t e;

    for (const struct builtin *b = builtins; b->name; b++) {
        if (!loader_load (rt, b->name, NULL, NULL, &e))
            return errprintf (err, "%s: %s", b->name, e.text);
    }
    return 0;
}

void loader_unload_all (struct runtime *rt)
{
    while (rt->plugins)
        loader_unload (rt->plugins);
}
