/* slurm-jobtap: the Flux job-manager plugin API (flux_jobtap_*). */
#ifndef SLURM_JOBTAP_FLUX_JOBTAP_H
#define SLURM_JOBTAP_FLUX_JOBTAP_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FLUX_JOBTAP_CURRENT_JOB FLUX_JOBID_ANY

flux_t *flux_jobtap_get_flux (flux_plugin_t *p);

int flux_jobtap_service_register (flux_plugin_t *p,
                                  const char *method,
                                  flux_msg_handler_f cb,
                                  void *arg);
int flux_jobtap_service_register_ex (flux_plugin_t *p,
                                     const char *method,
                                     uint32_t rolemask,
                                     flux_msg_handler_f cb,
                                     void *arg);

int flux_jobtap_set_load_sort_order (flux_plugin_t *p, const char *sort_order);

int flux_jobtap_reprioritize_all (flux_plugin_t *p);
int flux_jobtap_reprioritize_job (flux_plugin_t *p,
                                  flux_jobid_t id,
                                  unsigned int priority);
int flux_jobtap_priority_unavail (flux_plugin_t *p, flux_plugin_arg_t *args);

int flux_jobtap_error (flux_plugin_t *p,
                       flux_plugin_arg_t *args,
                       const char *fmt,
                       ...) FLUX_JOBTAP_PRINTF (3, 4);
int flux_jobtap_reject_job (flux_plugin_t *p,
                            flux_plugin_arg_t *args,
                            const char *fmt,
                            ...) FLUX_JOBTAP_PRINTF (3, 4);

int flux_jobtap_dependency_add (flux_plugin_t *p,
                                flux_jobid_t id,
                                const char *description);
int flux_jobtap_dependency_remove (flux_plugin_t *p,
                                   flux_jobid_t id,
                                   const char *description);

int flux_jobtap_job_aux_set (flux_plugin_t *p,
                             flux_jobid_t id,
                             const char *name,
                             void *val,
                             flux_free_f free_fn);
void *flux_jobtap_job_aux_get (flux_plugin_t *p,
                               flux_jobid_t id,
                               const char *name);
int flux_jobtap_job_aux_delete_value (flux_plugin_t *p,
                                      flux_jobid_t id,
                                      void *val);
int flux_jobtap_job_aux_delete (flux_plugin_t *p, flux_jobid_t id, void *val);

int flux_jobtap_job_set_flag (flux_plugin_t *p,
                              flux_jobid_t id,
                              const char *flag);

/* No format attribute: Flux declares none, and plugins that build with
 * -Werror against Flux's header must build against this one. */
int flux_jobtap_raise_exception (flux_plugin_t *p,
                                 flux_jobid_t id,
                                 const char *type,
                                 int severity,
                                 const char *fmt,
                                 ...);

int flux_jobtap_event_post_pack (flux_plugin_t *p,
                                 flux_jobid_t id,
                                 const char *name,
                                 const char *fmt,
                                 ...);

int flux_jobtap_jobspec_update_pack (flux_plugin_t *p, const char *fmt, ...);
int flux_jobtap_jobspec_update_id_pack (flux_plugin_t *p,
                                        flux_jobid_t id,
                                        const char *fmt,
                                        ...);

flux_plugin_arg_t *flux_jobtap_job_lookup (flux_plugin_t *p, flux_jobid_t id);

int flux_jobtap_get_job_result (flux_plugin_t *p,
                                flux_jobid_t id,
                                flux_job_result_t *resultp);

int flux_jobtap_job_event_posted (flux_plugin_t *p,
                                  flux_jobid_t id,
                                  const char *name);

int flux_jobtap_job_subscribe (flux_plugin_t *p, flux_jobid_t id);
void flux_jobtap_job_unsubscribe (flux_plugin_t *p, flux_jobid_t id);

int flux_jobtap_prolog_start (flux_plugin_t *p, const char *description);
int flux_jobtap_prolog_finish (flux_plugin_t *p,
                               flux_jobid_t id,
                               const char *description,
                               int status);
int flux_jobtap_epilog_start (flux_plugin_t *p, const char *description);
int flux_jobtap_epilog_finish (flux_plugin_t *p,
                               flux_jobid_t id,
                               const char *description,
                               int status);

int flux_jobtap_call (flux_plugin_t *p,
                      flux_jobid_t id,
                      const char *topic,
                      flux_plugin_arg_t *args);

#ifdef __cplusplus
}
#endif

#endif /* !SLURM_JOBTAP_FLUX_JOBTAP_H */
