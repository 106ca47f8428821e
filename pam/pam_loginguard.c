/* pam_loginguard: a new session's first word with loginguardd.
 *
 * open_session asks the daemon about the user: with the cgroupfs
 * backend the daemon moves this process into the user's cgroup before
 * it answers, so the session is born there; the reply holds what to
 * show (the site's banner, the user's standing, unread notices).
 * account, with deny_level=N, asks whether the user is refused.  The
 * daemon is the one writer of cgroups and state; this module only
 * talks, within a deadline, and when the daemon cannot answer it lets
 * the login through (fail=open) or refuses it (fail=closed), saying so
 * in one syslog line.  No global state, no signal handlers: it lives
 * inside long-running sshd processes. */
#include "config.h"

#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>

#include <security/pam_ext.h>
#include <security/pam_modules.h>
#include <security/pam_modutil.h>

#include "login_client.h"
#include "pam_options.h"

#define NOT_ANSWERING "loginguard: the login guard is not answering; try again shortly."

static void complain(void *pamh, const char *message)
{
    pam_syslog(pamh, LOG_ERR, "%s", message);
}

static void options(pam_handle_t *pamh, struct pam_lg_options *o, int argc, const char **argv)
{
    pam_lg_parse_options(o, argc, argv, complain, pamh);
}

/* The user's passwd entry through PAM's own helper (thread-safe, freed
 * at pam_end); NULL, said in syslog, if there is none. */
static const struct passwd *login_user(pam_handle_t *pamh)
{
    const char *name = NULL;
    if (pam_get_user(pamh, &name, NULL) != PAM_SUCCESS || !name || !*name) {
        pam_syslog(pamh, LOG_ERR, "cannot tell which user logs in");
        return NULL;
    }
    const struct passwd *pw = pam_modutil_getpwnam(pamh, name);
    if (!pw)
        pam_syslog(pamh, LOG_ERR, "user '%.64s' has no passwd entry", name);
    return pw;
}

/* The daemon could not answer: one syslog line, then the admin's
 * choice.  closed is the refusal code of the calling function. */
static int unanswered(pam_handle_t *pamh, const struct pam_lg_options *o, int flags,
                      const char *user, const char *why, int closed)
{
    pam_syslog(pamh, LOG_ERR, "loginguard daemon at %s did not answer for %s (%s): %s",
               o->socket, user, why, o->fail_closed ? "refusing (fail=closed)" : "letting in (fail=open)");
    if (!o->fail_closed)
        return PAM_SUCCESS;
    if (!(flags & PAM_SILENT))
        pam_error(pamh, "%s", NOT_ANSWERING);
    return closed;
}

static json_t *ask(pam_handle_t *pamh, const struct pam_lg_options *o, const char *request,
                   char *err, size_t errlen)
{
    json_t *reply = login_exchange(o->socket, request, o->timeout_ms, err, errlen);
    if (o->debug)
        pam_syslog(pamh, LOG_DEBUG, "asked %s: %.*s -> %s", o->socket,
                   (int)strcspn(request, "\n"), request, reply ? "answered" : err);
    return reply;
}

static void show_messages(pam_handle_t *pamh, json_t *reply)
{
    size_t i;
    json_t *m;
    json_array_foreach(json_object_get(reply, "messages"), i, m) {
        if (json_is_string(m))
            pam_info(pamh, "%s", json_string_value(m));
    }
}

PAM_EXTERN int pam_sm_open_session(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
    struct pam_lg_options o;
    options(pamh, &o, argc, argv);
    const struct passwd *pw = login_user(pamh);
    if (!pw)
        return o.fail_closed ? PAM_SESSION_ERR : PAM_SUCCESS;
    if (pw->pw_uid == 0)
        return PAM_SUCCESS;
    bool silent = flags & PAM_SILENT;
    char request[128], err[256];
    snprintf(request, sizeof(request),
             "{\"version\":1,\"request\":\"session\",\"user\":%u,\"notices\":%s}\n",
             (unsigned)pw->pw_uid, silent ? "false" : "true");
    json_t *reply = ask(pamh, &o, request, err, sizeof(err));
    if (!reply)
        return unanswered(pamh, &o, flags, pw->pw_name, err, PAM_SESSION_ERR);
    if (!silent)
        show_messages(pamh, reply);
    json_decref(reply);
    return PAM_SUCCESS;
}

PAM_EXTERN int pam_sm_close_session(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
    (void)pamh, (void)flags, (void)argc, (void)argv;
    return PAM_SUCCESS;
}

PAM_EXTERN int pam_sm_acct_mgmt(pam_handle_t *pamh, int flags, int argc, const char **argv)
{
    struct pam_lg_options o;
    options(pamh, &o, argc, argv);
    if (o.deny_level == 0)
        return PAM_IGNORE;
    const struct passwd *pw = login_user(pamh);
    if (!pw)
        return o.fail_closed ? PAM_USER_UNKNOWN : PAM_IGNORE;
    if (pw->pw_uid == 0)
        return PAM_IGNORE;
    char request[128], err[256];
    snprintf(request, sizeof(request),
             "{\"version\":1,\"request\":\"account\",\"user\":%u,\"deny_level\":%d}\n",
             (unsigned)pw->pw_uid, o.deny_level);
    json_t *reply = ask(pamh, &o, request, err, sizeof(err));
    if (!reply)
        return unanswered(pamh, &o, flags, pw->pw_name, err, PAM_PERM_DENIED);
    int rc = PAM_SUCCESS;
    if (json_is_true(json_object_get(reply, "refuse"))) {
        const char *message = json_string_value(json_object_get(reply, "message"));
        pam_syslog(pamh, LOG_NOTICE, "refused %s: level %lld, deny_level=%d", pw->pw_name,
                   json_integer_value(json_object_get(reply, "level")), o.deny_level);
        if (!(flags & PAM_SILENT))
            pam_error(pamh, "%s", message ? message : "loginguard: login refused.");
        rc = PAM_PERM_DENIED;
    }
    json_decref(reply);
    return rc;
}
