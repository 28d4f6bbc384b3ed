// cxx.so: a jobtap plugin written in C++ (headers must be C++ clean).
#include <string>

#include <flux/core.h>
#include <flux/jobtap.h>

namespace {

int priority_cb (flux_plugin_t *p, const char *, flux_plugin_arg_t *args,
                 void *)
{
    int urgency = 0;
    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:i}", "urgency",
                                &urgency) < 0)
        return flux_jobtap_error (p, args, "cxx: %s",
                                  flux_plugin_arg_strerror (args));
    std::string msg = "cxx: priority " + std::to_string (1000 * urgency);
    flux_log (flux_jobtap_get_flux (p), LOG_INFO, "%s", msg.c_str ());
    return flux_plugin_arg_pack (args, FLUX_PLUGIN_ARG_OUT, "{s:I}",
                                 "priority", (json_int_t)(1000 * urgency));
}

const struct flux_plugin_handler tab[] = {
    { "job.state.priority", priority_cb, nullptr },
    { "job.priority.get", priority_cb, nullptr },
    { nullptr, nullptr, nullptr },
};

} // namespace

extern "C" int flux_plugin_init (flux_plugin_t *p)
{
    return flux_plugin_register (p, "cxx", tab);
}
