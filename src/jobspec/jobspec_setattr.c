/* jobspec_setattr: --setattr options into one encoded set, and that set
 * into a jobspec (jobspec_setattr.h).  The key and value rules are those
 * of flux-core's `flux submit --setattr` (its Python CLI), so a Flux
 * user's options mean the same here. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_error.h"
#include "jobspec_setattr.h"

#define ENV_PREFIX JOBSPEC_SETATTR_ENV "="
#define ENV_PREFIX_LEN (sizeof (ENV_PREFIX) - 1)

/* The keys of attributes.system that jobspec_build fills from the Slurm
 * job (keep in step with it; test_jobspec_setattr checks), with the
 * option that sets each.  A user's value there would make the jobspec
 * disagree with the job Slurm runs, and let a user steer a policy that
 * reads, say, the duration past the limit Slurm enforces. */
static const struct {
    const char *key, *option;
} reserved[] = {
    {"duration", "--time"},
    {"queue", "--partition"},
    {"bank", "--account"},
    {"project", "--wckey"},
    {"cwd", "--chdir"},
    {"job", "--job-name"},
    {"dependencies", "--dependency"},
    {"constraints", "--constraint"},
    {"slurm", "the Slurm option of that name"},
    /* shell.options.output holds -o/-e; Flux's other shell options mean
     * nothing to a Slurm job */
    {"shell", "--output and --error"},
};

int jobspec_setattr_reserved (const char *key, const char **option)
{
    size_t len = strcspn (key, ".");
    for (size_t i = 0; i < sizeof (reserved) / sizeof (reserved[0]); i++)
        if (strlen (reserved[i].key) == len &&
            !strncmp (reserved[i].key, key, len)) {
            if (option)
                *option = reserved[i].option;
            return 1;
        }
    return 0;
}

static bool starts (const char *s, const char *prefix)
{
    return !strncmp (s, prefix, strlen (prefix));
}

/* The path under attributes.system that KEY names, as flux submit reads
 * it: ".X" is "attributes.X", "system.X" and "user.X" are under
 * attributes, anything else is "system.KEY".  NULL when the key is
 * outside attributes.system. */
static const char *system_path (const char *key)
{
    const char *tail;

    if (key[0] == '.')
        tail = key + 1;
    else if (starts (key, "attributes."))
        tail = key + strlen ("attributes.");
    else if (starts (key, "system.") || starts (key, "user."))
        tail = key;
    else
        return key;
    if (!strcmp (tail, "system")) /* the whole of it: an empty key */
        return "";
    return starts (tail, "system.") ? tail + strlen ("system.") : NULL;
}

/* The value of one option. */
static json_t *
option_value (bool from_file, const char *val, jobtap_host_error_t *err)
{
    json_error_t e;
    json_t *v;

    if (from_file) {
        if (!(v = json_load_file (val, JSON_DECODE_ANY, &e)))
            errprintf (err, "%s: %s", val, e.text);
        return v;
    }
    if (!val) /* flux: a key alone is set to 1 */
        return json_integer (1);
    if ((v = json_loads (val, JSON_DECODE_ANY, NULL)))
        return v;
    if (!(v = json_string (val)))
        errprintf (err, "the value is not valid UTF-8");
    return v;
}

/* Set path (dot-separated) in attrs to v (stolen).  Checked in full
 * before anything is created, so that a refused option leaves attrs as it
 * was. */
static int
set_path (json_t *attrs, char *path, json_t *v, jobtap_host_error_t *err)
{
    json_t *o = attrs, *utf8;
    char *part, *dot;

    for (part = path;; part = dot + 1) {
        dot = strchr (part, '.');
        if ((dot ? (size_t)(dot - part) : strlen (part)) == 0) {
            errprintf (err, "an empty key or key part");
            goto fail;
        }
        if (!dot)
            break;
    }
    if (!(utf8 = json_string (path))) {
        errprintf (err, "the key is not valid UTF-8");
        goto fail;
    }
    json_decref (utf8);
    /* what exists on the way must be objects (flux refuses too) */
    for (part = path; o && (dot = strchr (part, '.')); part = dot + 1) {
        json_t *next;
        *dot = '\0';
        if ((next = json_object_get (o, part)) && !json_is_object (next)) {
            errprintf (err,
                       "system.%s is not an object (an earlier --setattr "
                       "set it)",
                       path);
            *dot = '.';
            goto fail;
        }
        *dot = '.';
        o = next;
    }
    o = attrs;
    for (part = path; (dot = strchr (part, '.')); part = dot + 1) {
        json_t *next;
        *dot = '\0';
        if (!(next = json_object_get (o, part)) &&
            json_object_set_new (o, part, (next = json_object ())) < 0)
            next = NULL;
        *dot = '.';
        if (!(o = next)) {
            errprintf (err, "out of memory");
            goto fail;
        }
    }
    if (json_object_set_new (o, part, v) < 0)
        return errprintf (err, "out of memory"); /* v is freed */
    return 0;
fail:
    json_decref (v);
    return -1;
}

int jobspec_setattr_add (json_t *attrs,
                         const char *arg,
                         jobtap_host_error_t *err)
{
    bool from_file = arg[0] == '^';
    const char *k = from_file ? arg + 1 : arg;
    const char *eq = strchr (k, '=');
    char *key = eq ? strndup (k, (size_t)(eq - k)) : strdup (k);
    const char *path, *option;
    char *copy;
    json_t *v;
    int rc = -1;

    if (!key)
        return errprintf (err, "out of memory");
    if (!(path = system_path (key))) {
        errprintf (err, "only system attributes (system.KEY, or KEY) reach "
                        "the jobspec of a Slurm job");
        goto done;
    }
    if (path[0] && jobspec_setattr_reserved (path, &option)) {
        errprintf (err,
                   "attributes.system.%.*s is the Slurm job's own: set it "
                   "with %s",
                   (int)strcspn (path, "."), path, option);
        goto done;
    }
    if (from_file && !eq) {
        errprintf (err, "^KEY needs =FILE, a file of JSON");
        goto done;
    }
    if (!(copy = strdup (path))) {
        errprintf (err, "out of memory");
        goto done;
    }
    if ((v = option_value (from_file, eq ? eq + 1 : NULL, err)))
        rc = set_path (attrs, copy, v, err);
    free (copy);
done:
    free (key);
    return rc;
}

char *jobspec_setattr_encode (const json_t *attrs, jobtap_host_error_t *err)
{
    const size_t flags = JSON_COMPACT | JSON_ENSURE_ASCII;
    size_t n = json_dumpb (attrs, NULL, 0, flags);
    char *s;

    if (n == 0 || !(s = malloc (n + 1))) {
        errprintf (err, "out of memory");
        return NULL;
    }
    if (n > JOBSPEC_SETATTR_MAX) {
        free (s);
        errprintf (err, "the attributes take %zu bytes, more than %d", n,
                   JOBSPEC_SETATTR_MAX);
        return NULL;
    }
    json_dumpb (attrs, s, n, flags);
    s[n] = '\0';
    return s;
}

const char *jobspec_setattr_find (char *const *env, uint32_t n)
{
    for (uint32_t i = 0; env && i < n; i++)
        if (env[i] && !strncmp (env[i], ENV_PREFIX, ENV_PREFIX_LEN))
            return env[i] + ENV_PREFIX_LEN;
    return NULL;
}

int jobspec_setattr_merge (json_t *jobspec,
                          const char *text,
                          jobtap_host_error_t *ignored)
{
    json_t *system =
        json_object_get (json_object_get (jobspec, "attributes"), "system");
    size_t len = strnlen (text, JOBSPEC_SETATTR_MAX + 1);
    char *dropped = NULL;
    size_t dlen = 0;
    FILE *f = NULL;
    json_error_t e;
    json_t *set, *v;
    const char *key;
    int n = 0;

    ignored->text[0] = '\0';
    if (len > JOBSPEC_SETATTR_MAX)
        return errprintf (ignored,
                          JOBSPEC_SETATTR_ENV " is longer than %d bytes: "
                          "ignored", JOBSPEC_SETATTR_MAX);
    if (!json_is_object (system))
        return errprintf (ignored, "the jobspec has no attributes.system");
    if (!(set = json_loadb (text, len, 0, &e)) || !json_is_object (set)) {
        errprintf (ignored,
                   JOBSPEC_SETATTR_ENV " is not a JSON object (%s): ignored",
                   set ? "another JSON value" : e.text);
        json_decref (set);
        return -1;
    }
    json_object_foreach (set, key, v)
    {
        /* Our clients never make an empty or dotted key: a crafted
         * request may, and a dotted one would read as a path. */
        if (!key[0] || strchr (key, '.') ||
            jobspec_setattr_reserved (key, NULL)) {
            if (!f && !(f = open_memstream (&dropped, &dlen)))
                continue;
            fprintf (f, "%s\"%s\"", ftell (f) ? ", " : "", key);
            continue;
        }
        if (json_object_set (system, key, v) == 0)
            n++;
    }
    json_decref (set);
    if (f && fclose (f) == 0 && dropped)
        errprintf (ignored,
                   JOBSPEC_SETATTR_ENV " keys the Slurm job gives or "
                   "--setattr cannot make, ignored: %s", dropped);
    free (dropped);
    return n;
}
