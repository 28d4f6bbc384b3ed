/* bank-priority.so: a test plugin shaped like flux-accounting's
 * mf_priority.so, written here. Its data comes from outside through a
 * service; until a user's data has arrived, that user's jobs have their
 * priority unavailable (held), as mf_priority does.
 *
 *   job-manager.bank-priority.rec_update (owner only, checked by the
 *       plugin itself; registered open to users so the check is ours)
 *       payload {"data": [{"userid": U, "bank": "B", "fairshare": F,
 *                          "max_active_jobs": N}, ...]}
 *       stores each user's record, then reprioritizes every job
 *   job-manager.bank-priority.reprioritize (owner only, by the runtime)
 *   job.state.priority / job.priority.get
 *       priority = fairshare * 100000 (rounded), or unavailable
 *   job.validate
 *       a user with a record may have at most max_active_jobs active jobs
 *   job.new, job.state.priority
 *       a job given no bank is given its user's (mf_priority's default
 *       bank, a jobspec update after submit)
 *   job.state.inactive   counts the user's active jobs down
 *   plugin.query         the records, as {"users": {"U": {...}}}
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <flux/core.h>
#include <flux/jobtap.h>

#define MAX_USERS 64

struct user_rec {
    uint32_t userid;
    char bank[64];
    double fairshare;
    int max_active_jobs;
    int active_jobs;
};

static struct user_rec users[MAX_USERS];
static int nusers;

static struct user_rec *user_find (uint32_t userid, bool create)
{
    for (int i = 0; i < nusers; i++)
        if (users[i].userid == userid)
            return &users[i];
    if (!create || nusers == MAX_USERS)
        return NULL;
    memset (&users[nusers], 0, sizeof (users[nusers]));
    users[nusers].userid = userid;
    return &users[nusers++];
}

static void rec_update_cb (flux_t *h,
                           flux_msg_handler_t *mh,
                           const flux_msg_t *msg,
                           void *arg)
{
    flux_plugin_t *p = arg;
    json_t *data, *rec;
    size_t i;
    (void)mh;

    if (flux_msg_authorize (msg, FLUX_USERID_UNKNOWN) < 0) {
        flux_respond_error (h, msg, EPERM, "rec_update is for the owner");
        return;
    }
    if (flux_request_unpack (msg, NULL, "{s:o}", "data", &data) < 0 ||
        !json_is_array (data)) {
        flux_respond_error (h, msg, EPROTO, "rec_update: expected {data: [...]}");
        return;
    }
    json_array_foreach (data, i, rec)
    {
        int userid, max_active = 0;
        const char *bank;
        double fairshare;
        struct user_rec *u;
        if (json_unpack (rec, "{s:i s:s s:F s?i}", "userid", &userid, "bank",
                         &bank, "fairshare", &fairshare, "max_active_jobs",
                         &max_active) < 0 ||
            !(u = user_find ((uint32_t)userid, true))) {
            flux_respond_error (h, msg, EINVAL, "rec_update: bad record");
            return;
        }
        snprintf (u->bank, sizeof (u->bank), "%s", bank);
        u->fairshare = fairshare;
        u->max_active_jobs = max_active;
    }
    flux_log (h, LOG_INFO, "rec_update: %zu records", json_array_size (data));
    if (flux_jobtap_reprioritize_all (p) < 0)
        flux_log_error (h, "reprioritize_all");
    flux_respond (h, msg, NULL);
}

static void reprioritize_cb (flux_t *h,
                             flux_msg_handler_t *mh,
                             const flux_msg_t *msg,
                             void *arg)
{
    (void)mh;
    if (flux_jobtap_reprioritize_all (arg) < 0)
        flux_respond_error (h, msg, errno, NULL);
    else
        flux_respond (h, msg, NULL);
}

/* The user's bank for a job submitted with none, as mf_priority fills in
 * the default bank. */
static int default_bank (flux_plugin_t *p,
                         flux_plugin_arg_t *args,
                         const struct user_rec *u)
{
    const char *bank = NULL;
    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN,
                                "{s:{s:{s:{s?s}}}}", "jobspec", "attributes",
                                "system", "bank", &bank) < 0
        || bank)
        return 0;
    return flux_jobtap_jobspec_update_pack (p, "{s:s}",
                                            "attributes.system.bank", u->bank);
}

static int new_cb (flux_plugin_t *p,
                   const char *topic,
                   flux_plugin_arg_t *args,
                   void *arg)
{
    uint32_t userid;
    struct user_rec *u;
    (void)topic;
    (void)arg;

    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:i}", "userid",
                                &userid) < 0)
        return -1;
    return (u = user_find (userid, false)) ? default_bank (p, args, u) : 0;
}

static int priority_cb (flux_plugin_t *p,
                        const char *topic,
                        flux_plugin_arg_t *args,
                        void *arg)
{
    uint32_t userid;
    struct user_rec *u;
    (void)arg;

    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:i}", "userid",
                                &userid) < 0)
        return -1;
    if (!(u = user_find (userid, false)))
        return flux_jobtap_priority_unavail (p, args);
    if (!strcmp (topic, "job.state.priority") && default_bank (p, args, u) < 0)
        return -1;
    return flux_plugin_arg_pack (args, FLUX_PLUGIN_ARG_OUT, "{s:I}",
                                 "priority",
                                 (json_int_t)llround (u->fairshare * 100000));
}

static int validate_cb (flux_plugin_t *p,
                        const char *topic,
                        flux_plugin_arg_t *args,
                        void *arg)
{
    uint32_t userid;
    struct user_rec *u;
    (void)topic;
    (void)arg;

    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:i}", "userid",
                                &userid) < 0)
        return -1;
    if ((u = user_find (userid, false)) && u->max_active_jobs > 0 &&
        u->active_jobs >= u->max_active_jobs)
        return flux_jobtap_reject_job (p, args,
                                       "user %u in bank %s has %d active jobs "
                                       "(limit %d)",
                                       userid, u->bank, u->active_jobs,
                                       u->max_active_jobs);
    if (u)
        u->active_jobs++;
    return 0;
}

static int inactive_cb (flux_plugin_t *p,
                        const char *topic,
                        flux_plugin_arg_t *args,
                        void *arg)
{
    uint32_t userid;
    struct user_rec *u;
    (void)p;
    (void)topic;
    (void)arg;

    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:i}", "userid",
                                &userid) == 0 &&
        (u = user_find (userid, false)) && u->active_jobs > 0)
        u->active_jobs--;
    return 0;
}

static int query_cb (flux_plugin_t *p,
                     const char *topic,
                     flux_plugin_arg_t *args,
                     void *arg)
{
    json_t *o = json_object ();
    (void)p;
    (void)topic;
    (void)arg;

    for (int i = 0; i < nusers && o; i++) {
        char key[16];
        snprintf (key, sizeof (key), "%u", users[i].userid);
        json_object_set_new (o, key,
                             json_pack ("{s:s s:f s:i s:i}", "bank",
                                        users[i].bank, "fairshare",
                                        users[i].fairshare, "max_active_jobs",
                                        users[i].max_active_jobs,
                                        "active_jobs", users[i].active_jobs));
    }
    if (!o || flux_plugin_arg_pack (args, FLUX_PLUGIN_ARG_OUT, "{s:o}",
                                    "users", o) < 0) {
        json_decref (o);
        return -1;
    }
    return 0;
}

static const struct flux_plugin_handler tab[] = {
    {"job.state.priority", priority_cb, NULL},
    {"job.priority.get", priority_cb, NULL},
    {"job.validate", validate_cb, NULL},
    {"job.new", new_cb, NULL},
    {"job.state.inactive", inactive_cb, NULL},
    {"plugin.query", query_cb, NULL},
    {0},
};

int flux_plugin_init (flux_plugin_t *p)
{
    if (flux_plugin_register (p, "bank-priority", tab) < 0 ||
        flux_jobtap_service_register_ex (p, "rec_update", FLUX_ROLE_USER,
                                         rec_update_cb, p) < 0 ||
        flux_jobtap_service_register (p, "reprioritize", reprioritize_cb, p) < 0)
        return -1;
    return 0;
}
