/* slurm-jobtap: the Flux plugin container API (flux_plugin_*). */
#ifndef SLURM_JOBTAP_FLUX_PLUGIN_H
#define SLURM_JOBTAP_FLUX_PLUGIN_H

#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct flux_plugin flux_plugin_t;
typedef struct flux_plugin_arg flux_plugin_arg_t;

typedef int (*flux_plugin_f) (flux_plugin_t *p,
                              const char *topic,
                              flux_plugin_arg_t *args,
                              void *data);

typedef int (*flux_plugin_init_f) (flux_plugin_t *p);

struct flux_plugin_handler {
    const char *topic;
    flux_plugin_f cb;
    void *data;
};

enum {
    FLUX_PLUGIN_RTLD_LAZY = 1,
    FLUX_PLUGIN_RTLD_NOW = 2,
    FLUX_PLUGIN_RTLD_GLOBAL = 4,
    FLUX_PLUGIN_RTLD_DEEPBIND = 8,
};

enum {
    FLUX_PLUGIN_ARG_IN = 0,
    FLUX_PLUGIN_ARG_OUT = 1,
    FLUX_PLUGIN_ARG_REPLACE = 2,
};

flux_plugin_t *flux_plugin_create (void);
void flux_plugin_destroy (flux_plugin_t *p);

int flux_plugin_get_flags (flux_plugin_t *p);
int flux_plugin_set_flags (flux_plugin_t *p, int flags);

const char *flux_plugin_strerror (flux_plugin_t *p);

int flux_plugin_set_name (flux_plugin_t *p, const char *name);
const char *flux_plugin_get_name (flux_plugin_t *p);
const char *flux_plugin_get_uuid (flux_plugin_t *p);
const char *flux_plugin_get_path (flux_plugin_t *p);

int flux_plugin_add_handler (flux_plugin_t *p,
                             const char *topic,
                             flux_plugin_f cb,
                             void *arg);
int flux_plugin_remove_handler (flux_plugin_t *p, const char *topic);
flux_plugin_f flux_plugin_get_handler (flux_plugin_t *p, const char *topic);
flux_plugin_f flux_plugin_match_handler (flux_plugin_t *p, const char *topic);
int flux_plugin_register (flux_plugin_t *p,
                          const char *name,
                          const struct flux_plugin_handler t[]);

int flux_plugin_aux_set (flux_plugin_t *p,
                         const char *key,
                         void *val,
                         void (*free_fn) (void *));
void *flux_plugin_aux_get (flux_plugin_t *p, const char *key);
void flux_plugin_aux_delete_value (flux_plugin_t *p, const void *val);
void flux_plugin_aux_delete (flux_plugin_t *p, const void *val);

int flux_plugin_set_conf (flux_plugin_t *p, const char *json_str);
const char *flux_plugin_get_conf (flux_plugin_t *p);
int flux_plugin_conf_unpack (flux_plugin_t *p, const char *fmt, ...);

flux_plugin_arg_t *flux_plugin_arg_create (void);
void flux_plugin_arg_destroy (flux_plugin_arg_t *args);
const char *flux_plugin_arg_strerror (flux_plugin_arg_t *args);
int flux_plugin_arg_set (flux_plugin_arg_t *args,
                         int flags,
                         const char *json_str);
int flux_plugin_arg_get (flux_plugin_arg_t *args, int flags, char **json_str);
int flux_plugin_arg_pack (flux_plugin_arg_t *args,
                          int flags,
                          const char *fmt,
                          ...);
int flux_plugin_arg_vpack (flux_plugin_arg_t *args,
                           int flags,
                           const char *fmt,
                           va_list ap);
int flux_plugin_arg_unpack (flux_plugin_arg_t *args,
                            int flags,
                            const char *fmt,
                            ...);
int flux_plugin_arg_vunpack (flux_plugin_arg_t *args,
                             int flags,
                             const char *fmt,
                             va_list ap);

int flux_plugin_call (flux_plugin_t *p,
                      const char *topic,
                      flux_plugin_arg_t *args);

int flux_plugin_load_dso (flux_plugin_t *p, const char *path);

#ifdef __cplusplus
}
#endif

#endif /* !SLURM_JOBTAP_FLUX_PLUGIN_H */
