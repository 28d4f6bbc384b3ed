/* Finding the control socket (socket_path.h). */
#include <ctype.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "socket_path.h"

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

char *socket_path_from_jobtap_conf (const char *path)
{
    FILE *f = fopen (path, "r");
    char line[4096];
    bool in_table = false;
    char *value = NULL;

    if (!f)
        return NULL;
    while (!value && fgets (line, sizeof (line), f)) {
        char *s = skip_space (line);
        trim_end (s);
        if (*s == '[') {
            in_table = !strcmp (s, "[slurm-jobtap]");
            continue;
        }
        if (!in_table || strncmp (s, "control-socket", 14) != 0)
            continue;
        s = skip_space (s + 14);
        if (*s++ != '=')
            continue;
        value = toml_string (skip_space (s));
    }
    fclose (f);
    return value;
}

char *socket_path_state_save_location (const char *path)
{
    FILE *f = fopen (path, "r");
    char line[4096];
    char *value = NULL;

    if (!f)
        return NULL;
    while (fgets (line, sizeof (line), f)) {
        char *s = skip_space (line), *hash = strchr (s, '#');
        if (hash)
            *hash = '\0';
        trim_end (s);
        if (strncasecmp (s, "StateSaveLocation", 17) != 0)
            continue;
        s = skip_space (s + 17);
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

char *socket_path_find (const char *option)
{
    const char *env = getenv ("JOBTAP_CONTROL_SOCKET");
    const char *slurm_conf = getenv ("SLURM_CONF");
    char *dir_copy, *jobtap_conf = NULL, *path, *state;

    if (option && *option)
        return strdup (option);
    if (env && *env)
        return strdup (env);
    if (!slurm_conf || !*slurm_conf)
        slurm_conf = DEFAULT_SLURM_CONF;
    if (!(dir_copy = strdup (slurm_conf)))
        return NULL;
    if (asprintf (&jobtap_conf, "%s/jobtap.conf", dirname (dir_copy)) < 0)
        jobtap_conf = NULL;
    free (dir_copy);
    path = jobtap_conf ? socket_path_from_jobtap_conf (jobtap_conf) : NULL;
    free (jobtap_conf);
    if (path)
        return path;
    state = socket_path_state_save_location (slurm_conf);
    if (asprintf (&path, "%s/jobtap.sock", state ? state : DEFAULT_STATE_SAVE)
        < 0)
        path = NULL;
    free (state);
    return path;
}
