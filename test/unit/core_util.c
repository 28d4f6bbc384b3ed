/* Helpers of the module unit tests (core_util.h). */
#include <stdlib.h>
#include <string.h>
#include <flux/core.h>

#include "core_util.h"
#include "internal.h"
#include "jtplugin.h"
#include "runtime.h"
#include "tap.h"

struct jt_plugin *core_plugin_make (struct runtime *rt, const char *name)
{
    struct jt_plugin *jt = calloc (1, sizeof (*jt));
    struct jt_plugin **pp;

    if (!jt || !(jt->p = flux_plugin_create ())
        || !(jt->list_name = strdup (name))
        || flux_plugin_aux_set (jt->p, "flux::jobtap", jt, NULL) < 0)
        bail_out ("plugin_make %s failed", name);
    jt->rt = rt;
    for (pp = &rt->plugins; *pp; pp = &(*pp)->next)
        ;
    *pp = jt;
    plugin_handlers_changed ();
    return jt;
}
