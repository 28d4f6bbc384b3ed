/* The control socket's requests (control_ops.h). */
#include <errno.h>
#include <string.h>

#include "control_ops.h"
#include "control_proto.h"

static bool is_owner (const struct control_caller *caller)
{
    return (caller->rolemask & JOBTAP_ROLE_OWNER) != 0;
}

/* A request whose arguments are not what the op takes. */
static json_t *bad_args (const char *op, const char *want)
{
    return control_response_error (EPROTO, "malformed request: %s takes %s",
                                   op, want);
}

static json_t *host_error (int errnum, const jobtap_host_error_t *err)
{
    return control_response_error (errnum ? errnum : EINVAL, "%s",
                                   err->text[0] ? err->text
                                                : strerror (errnum));
}

static json_t *op_list (json_t *req)
{
    int all = 0;
    if (json_unpack (req, "{s?b}", "all", &all) < 0)
        return bad_args ("list", "{\"all\"?: bool}");
    return control_response_ok (jobtap_host_plugin_list (all));
}

static json_t *op_load (json_t *req, const struct control_caller *caller)
{
    jobtap_host_error_t err = {{0}};
    const char *path;
    json_t *conf = NULL;

    if (json_unpack (req, "{s:s s?o}", "path", &path, "conf", &conf) < 0
        || (conf && !json_is_object (conf) && !json_is_null (conf)))
        return bad_args ("load", "{\"path\": string, \"conf\"?: object}");
    if (!is_owner (caller))
        return control_response_error (EPERM, "Request requires owner "
                                              "credentials");
    if (json_is_null (conf))
        conf = NULL;
    errno = 0;
    if (jobtap_host_plugin_load (path, conf, &err) < 0)
        return host_error (errno, &err);
    return control_response_ok (NULL);
}

static json_t *op_remove (json_t *req, const struct control_caller *caller)
{
    jobtap_host_error_t err = {{0}};
    const char *name;

    if (json_unpack (req, "{s:s}", "name", &name) < 0)
        return bad_args ("remove", "{\"name\": string}");
    if (!is_owner (caller))
        return control_response_error (EPERM, "Request requires owner "
                                              "credentials");
    errno = 0;
    if (jobtap_host_plugin_remove (name, &err) < 0)
        return host_error (errno, &err);
    return control_response_ok (NULL);
}

static json_t *op_query (json_t *req)
{
    jobtap_host_error_t err = {{0}};
    const char *name;
    json_t *o;

    if (json_unpack (req, "{s:s}", "name", &name) < 0)
        return bad_args ("query", "{\"name\": string}");
    errno = 0;
    if (!(o = jobtap_host_plugin_query (name, &err)))
        return host_error (errno, &err);
    return control_response_ok (o);
}

static json_t *op_job (json_t *req, const struct control_caller *caller)
{
    json_int_t id, userid = -1;
    json_t *info;

    if (json_unpack (req, "{s:I}", "id", &id) < 0 || id < 0)
        return bad_args ("job", "{\"id\": integer >= 0}");
    if (!(info = jobtap_host_job_info ((uint64_t)id)))
        return control_response_error (ENOENT, "job %jd: unknown job",
                                       (intmax_t)id);
    /* as Flux's job-info: a user sees his own jobs, the owner all */
    (void)json_unpack (info, "{s:I}", "userid", &userid);
    if (!is_owner (caller) && userid != (json_int_t)caller->uid) {
        json_decref (info);
        return control_response_error (EPERM, "job %jd: belongs to another "
                                              "user",
                                       (intmax_t)id);
    }
    return control_response_ok (info);
}

/* Open to all, as list is: it shows paths and error texts that slurmctld's
 * log (and the jobtap.conf any user may read) already has. */
static json_t *op_status (void)
{
    json_t *o;

    if (!(o = jobtap_host_config_status ()))
        return control_response_error (ENOMEM, "%s", strerror (ENOMEM));
    return control_response_ok (o);
}

static json_t *op_rpc (json_t *req,
                       const struct control_caller *caller,
                       jobtap_host_service_done_f done,
                       void *arg)
{
    jobtap_host_error_t err = {{0}};
    const char *topic;
    json_t *payload = NULL;

    if (json_unpack (req, "{s:s s?o}", "topic", &topic, "payload", &payload)
            < 0
        || (payload && !json_is_object (payload) && !json_is_null (payload)))
        return bad_args ("rpc", "{\"topic\": string, \"payload\"?: object}");
    if (json_is_null (payload))
        payload = NULL;
    errno = 0;
    if (jobtap_host_service_call_async (topic, payload, caller->uid,
                                        caller->rolemask, done, arg, &err)
        < 0)
        return host_error (errno, &err);
    return NULL;
}

json_t *control_ops_run (const char *op,
                         json_t *request,
                         const struct control_caller *caller,
                         jobtap_host_service_done_f done,
                         void *arg)
{
    if (!strcmp (op, "list"))
        return op_list (request);
    if (!strcmp (op, "load"))
        return op_load (request, caller);
    if (!strcmp (op, "remove"))
        return op_remove (request, caller);
    if (!strcmp (op, "query"))
        return op_query (request);
    if (!strcmp (op, "job"))
        return op_job (request, caller);
    if (!strcmp (op, "status"))
        return op_status ();
    if (!strcmp (op, "rpc"))
        return op_rpc (request, caller, done, arg);
    return control_response_error (EINVAL, "unknown op \"%s\"", op);
}

json_t *control_ops_rpc_response (json_t *payload,
                                  int errnum,
                                  const char *errstr)
{
    if (errnum)
        return control_response_error (errnum, "%s",
                                       errstr && *errstr ? errstr
                                                         : strerror (errnum));
    /* a copy: the handler may keep and change its payload */
    return control_response_ok (payload ? json_deep_copy (payload) : NULL);
}
