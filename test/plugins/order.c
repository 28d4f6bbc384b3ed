/* order.so: set_load_sort_order from conf "sort"; logs job order on
 * load-time replay (job.new). */
#include <flux/core.h>
#include <flux/jobtap.h>

static int new_cb (flux_plugin_t *p, const char *topic,
                   flux_plugin_arg_t *args, void *data)
{
    json_int_t id;
    int state;
    (void)p;
    (void)topic;
    (void)data;
    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:I s:i}", "id",
                                &id, "state", &state) < 0)
        return -1;
    flux_log (NULL, LOG_INFO, "order: %ju %s", (uintmax_t)id,
              flux_job_statetostr (state, "L"));
    return 0;
}

static int call_cb (flux_plugin_t *p, const char *topic,
                    flux_plugin_arg_t *args, void *data)
{
    (void)p;
    (void)topic;
    (void)data;
    return flux_plugin_arg_pack (args, FLUX_PLUGIN_ARG_OUT, "{s:i}", "test",
                                 42);
}

int flux_plugin_init (flux_plugin_t *p)
{
    const char *sort = NULL;
    if (flux_plugin_conf_unpack (p, "{s:s}", "sort", &sort) < 0)
        sort = "none";
    if (flux_jobtap_set_load_sort_order (p, sort) < 0)
        return -1;
    if (flux_plugin_set_name (p, "order") < 0
        || flux_plugin_add_handler (p, "job.new", new_cb, NULL) < 0
        || flux_plugin_add_handler (p, "test.topic", call_cb, NULL) < 0)
        return -1;
    return 0;
}
