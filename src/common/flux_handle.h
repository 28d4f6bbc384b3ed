/* flux.c: the runtime's flux_t (runtime.h: rt->h), what
 * flux_jobtap_get_flux gives plugins, with its aux and log, and the
 * runtime it belongs to (flux_rpc finds the services there). */
#ifndef JOBTAP_FLUX_HANDLE_H
#define JOBTAP_FLUX_HANDLE_H

#include <flux/core.h>

struct runtime;

flux_t *flux_handle_create (struct runtime *rt);
void flux_handle_destroy (flux_t *h);
/* NULL h: NULL. */
struct runtime *flux_handle_runtime (flux_t *h);

#endif
