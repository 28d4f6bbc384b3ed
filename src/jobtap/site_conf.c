/* What the jobtap command reads of the site's config (site_conf.h). */
#include <ctype.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "control_munge.h"
#include "site_conf.h"

#define DEFAULT_SLURM_CONF "/etc/slurm/slurm.conf"
#define DEFAULT_STATE_SAVE "/var/spool/slurmctld"

static char *skip_space (char *s)
{
    while (*s && isspace ((unsigned char)*s))
        s++;
    return s;
}

static void trim_end (char *s)
{
    size_t n = strlen (s);
    while (n > 0 && isspace ((unsigned char)s[n - 1]))
        s[--n] = '\0';
}

/* A TOML basic or literal string at s: a new string, or NULL. */
static char *toml_string (const char *s)
{
    char quote = *s++;
    char *out, *o;

    if (quote != '"' && quote != '\'')
        return NULL;
    if (!(out = o = malloc (strlen (s) + 1)))
        return NULL;
    for (; *s && *s != quote; s++) {
        if (quote == '"' && *s == '\\' && s[1])
            s++; /* \" and \\ are the escapes a path may need */
        *o++ = *s;
    }
    *o = '\0';
    if (*s != quote) {
        free (out);
        return NULL;
    }
    return out;
}

char *site_conf_jobtap_value (const char *path, const char *key)
{
    FILE *f = fopen (path, "r");
    char line[4096];
    bool in_table = false;
    char *value = NULL;
    size_t keylen = strlen (key);

    if (!f)
        return NULL;
    while (!value && fgets (line, sizeof (line), f)) {
        char *s = skip_space (line);
        trim_end (s);
        if (*s == '[') {
            in_table = !strcmp (s, "[slurm-jobtap]");
            continue;
        }
        if (!in_table || strncmp (s, key, keylen) != 0)
            continue;
        s = skip_space (s + keylen);
        if (*s++ != '=')
            continue;
        s = skip_space (s);
        if (*s == '"' || *s == '\'')
            value = toml_string (s);
        else if (*s) { /* a number: up to a comment */
            s[strcspn (s, " \t#")] = '\0';
            value = strdup (s);
        }
    }
    fclose (f);
    return value;
}

char *site_conf_slurm_value (const char *path, const char *key)
{
    FILE *f = fopen (path, "r");
    char line[4096];
    char *value = NULL;
    size_t keylen = strlen (key);

    if (!f)
        return NULL;
    while (fgets (line, sizeof (line), f)) {
        char *s = skip_space (line), *hash = strchr (s, '#');
        if (hash)
            *hash = '\0';
        trim_end (s);
        if (strncasecmp (s, key, keylen) != 0)
            continue;
        s = skip_space (s + keylen);
        if (*s++ != '=')
            continue;
        s = skip_space (s);
        if (*s) {
            free (value); /* the last one counts, as in Slurm */
            value = strdup (s);
        }
    }
    fclose (f);
    return value;
}

static const char *slurm_conf_path (void)
{
    const char *path = getenv ("SLURM_CONF");
    return path && *path ? path : DEFAULT_SLURM_CONF;
}

/* jobtap.conf beside slurm.conf: a new string, or NULL. */
static char *jobtap_conf_path (void)
{
    char *dir_copy = strdup (slurm_conf_path ()), *path = NULL;

    if (!dir_copy)
        return NULL;
    if (asprintf (&path, "%s/jobtap.conf", dirname (dir_copy)) < 0)
        path = NULL;
    free (dir_copy);
    return path;
}

char *site_conf_socket_path (const char *option)
{
    const char *env = getenv ("JOBTAP_CONTROL_SOCKET");
    char *jobtap_conf, *path, *state;

    if (option && *option)
        return strdup (option);
    if (env && *env)
        return strdup (env);
    jobtap_conf = jobtap_conf_path ();
    path = jobtap_conf ? site_conf_jobtap_value (jobtap_conf,
                                                 "control-socket")
                       : NULL;
    free (jobtap_conf);
    if (path)
        return path;
    state = site_conf_slurm_value (slurm_conf_path (), "StateSaveLocation");
    if (asprintf (&path, "%s/jobtap.sock", state ? state : DEFAULT_STATE_SAVE)
        < 0)
        path = NULL;
    free (state);
    return path;
}

int site_conf_control_port (void)
{
    char *jobtap_conf = jobtap_conf_path ();
    char *value = jobtap_conf ? site_conf_jobtap_value (jobtap_conf,
                                                        "control-port")
                              : NULL;
    char *end;
    long port = value ? strtol (value, &end, 10) : 0;

    if (!value || *end || port <= 0 || port > 65535)
        port = 0;
    free (value);
    free (jobtap_conf);
    return (int)port;
}

char *site_conf_munge_socket (void)
{
    char *authinfo = site_conf_slurm_value (slurm_conf_path (), "AuthInfo");
    char *socket = control_munge_socket_of_authinfo (authinfo);

    free (authinfo);
    return socket;
}
