/* What the jobtap command reads of the site's config (site_conf.h). */
#include <ctype.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <jansson.h>

#include "control_munge.h"
#include "site_conf.h"
#include "toml.h"

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

/* [slurm-jobtap] key of the jobtap.conf at path, read as slurmctld reads
 * it (toml.h): a new reference, or NULL if the file, its TOML or the key
 * is not there. */
static json_t *jobtap_setting (const char *path, const char *key)
{
    json_t *conf = toml_file_to_json (path, NULL, NULL, NULL);
    json_t *v = json_incref (
        json_object_get (json_object_get (conf, "slurm-jobtap"), key));

    json_decref (conf);
    return v;
}

char *site_conf_jobtap_value (const char *path, const char *key)
{
    json_t *v = jobtap_setting (path, key);
    char *value = NULL;

    if (json_is_string (v))
        value = strdup (json_string_value (v));
    else if (json_is_integer (v)
             && asprintf (&value, "%lld", (long long)json_integer_value (v))
                    < 0)
        value = NULL;
    json_decref (v);
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
    json_t *v = jobtap_conf ? jobtap_setting (jobtap_conf, "control-port")
                            : NULL;
    json_int_t port = json_is_integer (v) ? json_integer_value (v) : 0;

    /* an integer, as slurmctld takes it */
    if (port <= 0 || port > 65535)
        port = 0;
    json_decref (v);
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
