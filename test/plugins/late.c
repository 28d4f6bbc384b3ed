/* late.so: has no job callbacks until told.  Service "late.arm" adds a
 * job.validate handler that rejects every job, "late.disarm" removes it:
 * handlers that change after load must take effect at once. */
#include <flux/core.h>
#include <flux/jobtap.h>

static int validate_cb (flux_plugin_t *p, const char *topic,
                        flux_plugin_arg_t *args, void *data)
{
    (void)topic;
    (void)data;
    return flux_jobtap_reject_job (p, args, "late: armed");
}

static void arm_cb (flux_t *h, flux_msg_handler_t *mh,
                    const flux_msg_t *msg, void *arg)
{
    flux_plugin_t *p = arg;
    (void)mh;
    if (flux_plugin_add_handler (p, "job.validate", validate_cb, NULL) < 0)
        flux_respond_error (h, msg, errno, NULL);
    else
        flux_respond (h, msg, NULL);
}

static void disarm_cb (flux_t *h, flux_msg_handler_t *mh,
                       const flux_msg_t *msg, void *arg)
{
    flux_plugin_t *p = arg;
    (void)mh;
    if (flux_plugin_remove_handler (p, "job.validate") < 0)
        flux_respond_error (h, msg, errno, NULL);
    else
        flux_respond (h, msg, NULL);
}

int flux_plugin_init (flux_plugin_t *p)
{
    if (flux_plugin_set_name (p, "late") < 0
        || flux_jobtap_service_register (p, "arm", arm_cb, p) < 0
        || flux_jobtap_service_register (p, "disarm", disarm_cb, p) < 0)
        return -1;
    return 0;
}
