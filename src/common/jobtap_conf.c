/* The instance config: jobtap.conf read (TOML, Flux's [job-manager]
 * schema plus our [slurm-jobtap] table), its plugins loaded, and reload:
 * conf.update only when the plugin list is the same, else the whole set
 * again, with the previous set back if the new one fails (conf.h). */
#include <errno.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <flux/core.h>

#include "host_error.h"
#include "jobtap_conf.h"
#include "host.h"
#include "jtplugin.h"
#include "log.h"
#include "loader.h"
#include "policy.h"
#include "runtime.h"
#include "toml.h"

static int entry_line (json_t *lines, size_t i)
{
    return (int)json_integer_value (json_array_get (lines, i));
}

/* A key of a [job-manager.plugins] entry other than load, conf and
 * remove, or NULL: a misspelt "lod" would drop its plugin silently. */
static const char *entry_unknown_key (json_t *entry)
{
    const char *key;
    json_t *v;

    if (json_is_object (entry))
        json_object_foreach (entry, key, v)
        {
            if (strcmp (key, "load") && strcmp (key, "conf")
                && strcmp (key, "remove"))
                return key;
        }
    return NULL;
}

/* Load builtins and the [job-manager] plugins entries.  On failure the
 * caller unloads everything. */
static int config_apply_plugins (struct runtime *rt,
                                 const char *path,
                                 json_t *plugins,
                                 json_t *lines,
                                 jobtap_host_error_t *err)
{
    jobtap_host_error_t e;
    char *dir = NULL;
    size_t i;
    json_t *entry;

    if (loader_load_builtins (rt, err) < 0)
        return -1;
    if (!plugins)
        return 0;
    if (path) {
        char *tmp = strdup (path);
        if (!tmp || !(dir = strdup (dirname (tmp)))) {
            free (tmp);
            errno = ENOMEM;
            errprintf (err, "out of memory");
            return -1;
        }
        free (tmp);
    }
    json_array_foreach (plugins, i, entry) {
        const char *load = NULL;
        const char *remove = NULL;
        json_t *conf = NULL;
        json_error_t jerr;
        char where[1200];

        if (path && entry_line (lines, i) > 0)
            snprintf (where,
                      sizeof (where),
                      "%s:%d: [job-manager.plugins][%zu]",
                      path,
                      entry_line (lines, i),
                      i);
        else
            snprintf (where,
                      sizeof (where),
                      "%s%s[job-manager.plugins][%zu]",
                      path ? path : "",
                      path ? ": " : "",
                      i);
        if (json_unpack_ex (entry,
                            &jerr,
                            0,
                            "{s?s s?o s?s}",
                            "load", &load,
                            "conf", &conf,
                            "remove", &remove) < 0) {
            errprintf (err, "%s: %s", where, jerr.text);
            errno = EINVAL;
            goto error;
        }
        /* Flux ignores other keys; so do we, with a word, unless the
         * entry then does nothing at all (a misspelt "load"). */
        const char *unknown = entry_unknown_key (entry);
        if (unknown && !load && !remove) {
            errprintf (err,
                       "%s: unknown key \"%.64s\" (an entry takes load, "
                       "conf and remove)",
                       where, unknown);
            errno = EINVAL;
            goto error;
        }
        if (unknown)
            runtime_log (LOG_ERR,
                         "jobtap: %s: unknown key \"%.64s\" ignored (an "
                         "entry takes load, conf and remove)",
                         where, unknown);
        if (remove && loader_remove (rt, remove, &e) < 0) {
            errprintf (err, "%s: remove %s: %s", where, remove, e.text);
            goto error;
        }
        if (load && !loader_load (rt, load, conf, dir, &e)) {
            errprintf (err, "%s: load: %s", where, e.text);
            goto error;
        }
    }
    free (dir);
    return 0;
error:
    free (dir);
    return -1;
}

/* The line of table 'where' (or of the nearest enclosing table the
 * file names), 0 if unknown. */
static int table_line (json_t *table_lines, const char *where)
{
    char name[512];
    char *dot;

    snprintf (name, sizeof (name), "%s", where);
    do {
        json_t *v = json_object_get (table_lines, name);
        if (json_is_integer (v))
            return (int)json_integer_value (v);
    } while ((dot = strrchr (name, '.')) && (*dot = '\0', true));
    return 0;
}

/* Flux's [policy] and [queues], checked as Flux checks them: the error
 * is Flux's, after the file and the line of the table it is about. */
static struct policy *config_policy (const char *path,
                                     json_t *config,
                                     json_t *table_lines,
                                     jobtap_host_error_t *err)
{
    jobtap_host_error_t e;
    char where[512];
    struct policy *policy = policy_create (config, where, sizeof (where), &e);
    int line;

    if (policy)
        return policy;
    if ((line = table_line (table_lines, where)) > 0)
        errprintf (err, "%s:%d: %s", path, line, e.text);
    else
        errprintf (err, "%s: %s", path, e.text);
    errno = EINVAL;
    return NULL;
}

/* Parse a config file; NULL path gives an empty config. */
static json_t *config_read (const char *path,
                            json_t **plugins,
                            json_t **lines,
                            struct policy **policy,
                            jobtap_host_error_t *err)
{
    json_t *config, *table_lines = NULL;
    json_t *jm;

    *lines = NULL;
    *plugins = NULL;
    *policy = NULL;
    if (!path) {
        *lines = json_array ();
        config = json_object ();
        *policy = policy_create (config, NULL, 0, err);
        return config;
    }
    if (!(config = toml_file_to_json (path, lines, &table_lines, err)))
        return NULL;
    *policy = config_policy (path, config, table_lines, err);
    json_decref (table_lines);
    if (!*policy) {
        json_decref (config);
        json_decref (*lines);
        return NULL;
    }
    jm = json_object_get (config, "job-manager");
    if (jm && (*plugins = json_object_get (jm, "plugins"))
        && !json_is_array (*plugins)) {
        errprintf (err,
                   "%s: [job-manager.plugins] config must be an array",
                   path);
        goto error;
    }
    if (json_object_get (config, "slurm-jobtap")
        && !json_is_object (json_object_get (config, "slurm-jobtap"))) {
        errprintf (err, "%s: [slurm-jobtap] must be a table", path);
        goto error;
    }
    return config;
error:
    policy_destroy (*policy);
    *policy = NULL;
    json_decref (config);
    json_decref (*lines);
    errno = EINVAL;
    return NULL;
}

/* The policy read with the config now in effect. */
static void policy_replace (struct runtime *rt, struct policy *policy)
{
    policy_destroy (rt->policy);
    rt->policy = policy;
}

static int load_config_locked (struct runtime *rt,
                               const char *path,
                               jobtap_host_error_t *err)
{
    json_t *plugins, *lines, *config;
    struct policy *policy;

    if (!(config = config_read (path, &plugins, &lines, &policy, err)))
        return -1;
    json_decref (rt->config);
    rt->config = config;
    if (config_apply_plugins (rt, path, plugins, lines, err) < 0) {
        int e = errno;
        loader_unload_all (rt);
        json_decref (rt->config);
        rt->config = NULL;
        json_decref (lines);
        policy_destroy (policy);
        errno = e ? e : EINVAL;
        return -1;
    }
    json_decref (lines);
    policy_replace (rt, policy);
    json_decref (rt->plugins_conf);
    rt->plugins_conf = plugins ? json_deep_copy (plugins) : json_array ();
    free (rt->config_path);
    rt->config_path = path ? strdup (path) : NULL;
    rt->configured = true;
    rt->config_loaded_at = now ();
    return 0;
}

/* The outcome of a reload, for jobtap_host_config_status: a good one
 * put its config in effect at that moment. */
static void reload_record (struct runtime *rt,
                           int rc,
                           const jobtap_host_error_t *err)
{
    free (rt->reload_error);
    rt->reload_error = NULL;
    rt->reload_at = now ();
    if (rc == 0)
        rt->config_loaded_at = rt->reload_at;
    else
        rt->reload_error = strdup (err && err->text[0] ? err->text
                                                       : "unknown error");
}

/* The [slurm-jobtap] settings (docs/admin.md): the runtime's own, with
 * the JSON type each must have, and the Slurm adapter's (0: it checks
 * them itself). */
static const struct {
    const char *key;
    json_type type;
} settings_known[] = {
    {"provisional-max", JSON_INTEGER},
    {"provisional-timeout", JSON_INTEGER},
    {"inactive-max", JSON_INTEGER},
    {"keep-eventlog", JSON_TRUE},
    {"priority-mode", 0},
    {"reprioritize-period", 0},
    {"log-jobspec", 0},
    {"control-socket", 0},
    {"control-port", 0},
    {"control-address", 0},
    {"state-dir", 0},
    {"state-sync", 0},
};

/* Log what a (re)load will not use: unknown settings (a misspelt one
 * would be ignored without a word) and the runtime's own of the wrong
 * type (their default is used). */
static void settings_check (struct runtime *rt)
{
    json_t *table = json_object_get (rt->config, "slurm-jobtap");
    const char *key;
    json_t *v;

    json_object_foreach (table, key, v)
    {
        size_t i, n = sizeof (settings_known) / sizeof (settings_known[0]);
        for (i = 0; i < n && strcmp (key, settings_known[i].key); i++)
            ;
        if (i == n)
            runtime_log (LOG_ERR,
                         "jobtap: [slurm-jobtap] unknown setting \"%.64s\" "
                         "ignored",
                         key);
        else if (settings_known[i].type == JSON_INTEGER
                 && !json_is_integer (v))
            runtime_log (LOG_ERR,
                         "jobtap: [slurm-jobtap] %s must be an integer; "
                         "using the default",
                         key);
        else if (settings_known[i].type == JSON_TRUE && !json_is_boolean (v))
            runtime_log (LOG_ERR,
                         "jobtap: [slurm-jobtap] %s must be a boolean; "
                         "using the default",
                         key);
    }
}

/* Tables of Flux's config that mean nothing here (Flux's broker,
 * resources, execution, scheduler): a Flux site's files may be appended
 * to jobtap.conf unchanged, and each is named once per (re)load. */
static const char *flux_only_tables[] = {
    "access", "archive", "bootstrap", "broker", "content-files",
    "content-sqlite", "cron", "exec", "heartbeat", "ingest", "job-ingest",
    "kvs", "resource", "sched-fluxion-qmanager", "sched-fluxion-resource",
    "sched-simple", "systemd", "tbon", NULL,
};

static void flux_tables_check (struct runtime *rt)
{
    const char *key;
    json_t *v;

    json_object_foreach (rt->config, key, v)
    {
        for (const char **t = flux_only_tables; *t; t++)
            if (!strcmp (key, *t))
                runtime_log (LOG_INFO,
                             "jobtap: [%s] is Flux's own configuration, "
                             "with no meaning under Slurm: ignored",
                             key);
    }
    const char *name;
    for (size_t i = 0; (name = policy_unapplied (rt->policy, i)); i++)
        runtime_log (LOG_INFO,
                     "jobtap: [%s] is not applied by slurm-jobtap: Slurm's "
                     "partitions decide it (AllowAccounts, AllowGroups, "
                     "Nodes)",
                     name);
}

void conf_settings_apply (struct runtime *rt)
{
    json_t *v = json_object_get (json_object_get (rt->config, "slurm-jobtap"),
                                 "keep-eventlog");
    rt->keep_eventlog = rt->ops->keep_eventlog || json_is_true (v);
}

/* Settings read on every job, looked up once per (re)load. */
static void settings_cache (struct runtime *rt)
{
    settings_check (rt);
    flux_tables_check (rt);
    conf_settings_apply (rt);
}

int jobtap_host_load_config (const char *path, jobtap_host_error_t *err)
{
    struct runtime *rt = host_runtime ();
    int rc;

    runtime_lock ();
    if (rt->refcount == 0) {
        errprintf (err, "jobtap runtime is not initialized");
        errno = EINVAL;
        rc = -1;
    }
    else if (rt->configured) {
        bool same = (!path && !rt->config_path)
                    || (path && rt->config_path
                        && !strcmp (path, rt->config_path));
        if (same)
            rc = 0;
        else {
            errprintf (err,
                       "jobtap runtime already configured from %s",
                       rt->config_path ? rt->config_path : "(builtins only)");
            errno = EEXIST;
            rc = -1;
        }
    }
    else
        rc = load_config_locked (rt, path, err);
    settings_cache (rt);
    runtime_unlock ();
    return rc;
}

int jobtap_host_reload (jobtap_host_error_t *err)
{
    struct runtime *rt = host_runtime ();
    json_t *plugins, *lines, *config;
    json_t *old_config;
    struct policy *policy;
    char *path;
    int rc = -1;

    runtime_lock ();
    if (!rt->configured) {
        errprintf (err, "jobtap runtime is not configured");
        errno = EINVAL;
        goto out;
    }
    if (!(config = config_read (rt->config_path, &plugins, &lines, &policy,
                                err)))
        goto out;
    if (plugins ? json_equal (plugins, rt->plugins_conf)
                : json_array_size (rt->plugins_conf) == 0) {
        /* Same plugins: only conf.update, and roll back on failure. */
        jobtap_host_error_t e1;
        old_config = rt->config;
        rt->config = config;
        for (struct jt_plugin *jt = rt->plugins; jt; jt = jt->next) {
            if (conf_update (jt, config, &e1) < 0) {
                int e = errno;
                errprintf (err, "%s: %s", jt->list_name, e1.text);
                rt->config = old_config;
                for (struct jt_plugin *x = rt->plugins; x != jt; x = x->next)
                    (void)conf_update (x, old_config, &e1);
                json_decref (config);
                json_decref (lines);
                policy_destroy (policy);
                errno = e;
                goto out;
            }
        }
        json_decref (old_config);
        json_decref (lines);
        policy_replace (rt, policy);
        rc = 0;
        goto out;
    }
    /* A different plugin list: reload the whole set, falling back to the
     * previous one if the new one fails (its policy with it). */
    json_decref (config);
    json_decref (lines);
    policy_destroy (policy);
    path = rt->config_path ? strdup (rt->config_path) : NULL;
    old_config = json_incref (rt->config);
    json_t *old_plugins = json_incref (rt->plugins_conf);
    loader_unload_all (rt);
    rt->configured = false;
    if (load_config_locked (rt, path, err) == 0)
        rc = 0;
    else {
        jobtap_host_error_t e2;
        json_t *old_lines = json_array ();
        int e = errno;
        runtime_log (LOG_ERR,
                     "jobtap: reload failed, restoring previous plugins: %s",
                     err ? err->text : "");
        json_decref (rt->config);
        rt->config = json_incref (old_config);
        if (config_apply_plugins (rt, path, old_plugins, old_lines, &e2) < 0) {
            runtime_log (LOG_ERR,
                         "jobtap: restoring previous plugins failed: %s",
                         e2.text);
        }
        json_decref (old_lines);
        free (rt->config_path);
        rt->config_path = path ? strdup (path) : NULL;
        rt->configured = true;
        errno = e;
    }
    free (path);
    json_decref (old_config);
    json_decref (old_plugins);
out:
    if (rt->configured)
        reload_record (rt, rc, err);
    settings_cache (rt);
    runtime_unlock ();
    return rc;
}

json_t *jobtap_host_config_status (void)
{
    struct runtime *rt = host_runtime ();
    json_t *o, *reload = json_null ();

    runtime_lock ();
    if (rt->reload_at > 0)
        reload = rt->reload_error
                     ? json_pack ("{s:f s:b s:s}", "at", rt->reload_at, "ok",
                                  0, "error", rt->reload_error)
                     : json_pack ("{s:f s:b}", "at", rt->reload_at, "ok", 1);
    if (!rt->configured)
        o = json_pack ("{s:b s:n s:n s:o*}", "configured", 0, "path",
                       "loaded_at", "reload", reload);
    else
        o = json_pack ("{s:b s:s? s:f s:o*}", "configured", 1, "path",
                       rt->config_path, "loaded_at", rt->config_loaded_at,
                       "reload", reload);
    runtime_unlock ();
    return o;
}

json_t *jobtap_host_settings (void)
{
    struct runtime *rt = host_runtime ();
    json_t *o;
    runtime_lock ();
    o = json_object_get (rt->config, "slurm-jobtap");
    o = o ? json_deep_copy (o) : json_object ();
    runtime_unlock ();
    return o;
}

json_int_t setting_int (struct runtime *rt, const char *key, json_int_t dflt)
{
    json_t *v = json_object_get (json_object_get (rt->config, "slurm-jobtap"),
                                 key);
    return json_is_integer (v) ? json_integer_value (v) : dflt;
}

void conf_release (struct runtime *rt)
{
    json_decref (rt->config);
    json_decref (rt->plugins_conf);
    free (rt->config_path);
    free (rt->reload_error);
    policy_destroy (rt->policy);
    rt->config = rt->plugins_conf = NULL;
    rt->config_path = rt->reload_error = NULL;
    rt->policy = NULL;
}

char *jobtap_host_policy_default_queue (void)
{
    const char *q;
    char *s;

    runtime_lock ();
    q = policy_default_queue (host_runtime ()->policy);
    s = q ? strdup (q) : NULL;
    runtime_unlock ();
    return s;
}

double jobtap_host_policy_default_duration (const char *queue)
{
    double d;

    runtime_lock ();
    d = policy_default_duration (host_runtime ()->policy, queue);
    runtime_unlock ();
    return d;
}

bool jobtap_host_policy_has_defaults (void)
{
    bool has;

    runtime_lock ();
    has = policy_has_defaults (host_runtime ()->policy);
    runtime_unlock ();
    return has;
}

json_t *jobtap_host_policy_queues (void)
{
    struct runtime *rt = host_runtime ();
    json_t *a = json_array ();
    const char *name;

    runtime_lock ();
    for (size_t i = 0; a && (name = policy_queue_name (rt->policy, i)); i++)
        json_array_append_new (a, json_string (name));
    runtime_unlock ();
    return a;
}
