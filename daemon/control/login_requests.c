/* pam_loginguard's requests on the control socket (loginguard-control(7)).
 *
 * The module asks as root from inside sshd, login or su, and names the
 * user by uid (it did the NSS lookup: the daemon does none for a login,
 * which on an LDAP node could stall its loop).  A peer that is not root
 * may ask only about itself, and its process is never moved: a process
 * can exit while its request waits, and its pid then names another. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/login_requests.h"
#include "enforce/actions.h"
#include "notice_build.h"
#include "observe/procfs.h"
#include "record/login_notices.h"
#include "record/persist.h"
#include "user_standing.h"
#include "utf8.h"
#include "util.h"

/* The user's level while its limits last, in enforce mode: their
 * standing is not normal.  (In observe mode nothing is limited or
 * refused, so nothing is said.) */
static const struct user_state *at_level(struct control_view *v, uid_t uid, uint64_t now)
{
    const struct user_state *us = engine_user(v->engine, uid, false);
    return *v->enforcing && us && us->level > 0 && us->until > now ? us : NULL;
}

/* Never limited, so never told about limits or refused: root, system
 * accounts, [exempt] users and groups, a temporary exemption. */
static bool protected(struct control_view *v, uid_t uid, uint64_t now)
{
    struct user_sample u = directory_sample(v->directory, uid);
    return user_protected(v->policy, engine_user(v->engine, uid, false), &u, now);
}

/* The body of a login notice (standing or login_refused) for uid's
 * level, as a new JSON string; NULL if the template cannot render. */
static json_t *render_standing(struct control_view *v, const struct user_state *us,
                               enum notice_kind kind)
{
    struct decision x = notice_standing_decision(us);
    struct notice_facts f = {.policy = v->policy, .decision = &x, .kind = kind,
                             .user = directory_name_of(v->directory, us->uid),
                             .host = v->events->host};
    struct notice_values vals;
    notice_values_build(&vals, &f);
    struct notice n;
    json_t *text = NULL;
    if (notice_render(&v->policy->notices, kind, vals.fields, vals.count, &n) == 0) {
        size_t len = strlen(n.body);
        while (len && n.body[len - 1] == '\n')
            len--;
        text = json_from_bytes(n.body, len);
        notice_free(&n);
    }
    notice_values_free(&vals);
    return text;
}

/* The site's banner, its controls shown escaped. */
static json_t *banner(const struct policy *p)
{
    size_t len = strlen(p->login_banner);
    char *shown = xmalloc(4 * len + 1);
    utf8_escape(p->login_banner, len, shown, 4 * len + 1);
    json_t *text = json_string(shown);
    free(shown);
    return text;
}

/* The unread notices kept for uid's login, each as "subject\n\nbody",
 * now marked read.  Notices not yet written (a full disk) are written
 * first, so none is left behind. */
static void add_notices(struct control_view *v, uid_t uid, json_t *messages)
{
    if (v->persist->login.pending)
        v->save_pending(v->core);
    json_t *list;
    char err[512];
    if (login_notices_take(v->policy->state_dir, uid, &list, err, sizeof(err)) < 0) {
        event_log_write(v->events, event_daemon("state_error", err, v->policy, v->events->host,
                                                 env_realtime(v->env)));
        return;
    }
    size_t i;
    json_t *n;
    json_array_foreach(list, i, n) {
        const char *subject = json_string_value(json_object_get(n, "subject"));
        const char *body = json_string_value(json_object_get(n, "body"));
        if (!subject || !body)
            continue;
        size_t len = strlen(body);
        while (len && body[len - 1] == '\n')
            len--;
        json_array_append_new(messages, json_sprintf("%s\n\n%.*s", subject, (int)len, body));
    }
    json_decref(list);
}

/* cgroupfs in enforce mode: the asking process (root's, from
 * SO_PEERCRED) into uid's cgroup before the reply, so that the session
 * it opens is born there. */
static bool place(struct control_view *v, const struct control_conn *c, uid_t uid)
{
    struct proc_stat st;
    uid_t owner;
    if (!*v->enforcing || c->peer.uid != 0 || c->peer.pid <= 0 ||
        !procfs_read_process(v->sampler->proc_fd, c->peer.pid, &owner, &st) || owner != 0)
        return false;
    struct actions a = v->actions(v->core);
    bool made = false;
    bool placed = place_session(&a, uid, c->peer.pid, st.start_time, &made);
    if (made)
        v->counters_changed(v->core);
    return placed;
}

static json_t *standing_fields(json_t *r, const struct user_state *us)
{
    json_object_set_new(r, "level", json_integer(us ? us->level : 0));
    json_object_set_new(r, "until", us ? json_from_time(us->until) : json_null());
    return r;
}

json_t *login_session_reply(struct control_view *v, const struct control_conn *c, uid_t uid,
                            bool notices)
{
    if (!directory_user(v->directory, uid)->answered)
        return NULL; /* whether uid is protected: the directory is asked */
    uint64_t now = env_realtime(v->env);
    bool guarded = !protected(v, uid, now);
    const struct user_state *us = guarded ? at_level(v, uid, now) : NULL;
    json_t *messages = json_array();
    if (notices && v->policy->login_banner && v->policy->login_banner[0])
        json_array_append_new(messages, banner(v->policy));
    json_t *standing = notices && us ? render_standing(v, us, NOTICE_STANDING) : NULL;
    if (standing)
        json_array_append_new(messages, standing);
    if (notices)
        add_notices(v, uid, messages);
    json_t *r = standing_fields(control_reply_ok(), us);
    json_object_set_new(r, "placed", json_boolean(guarded && place(v, c, uid)));
    json_object_set_new(r, "messages", messages);
    return r;
}

/* Whether deny_level refuses uid now: at that level or above while its
 * limits last, and not protected; admin_group members never are (the
 * group is looked up only for someone who would be refused).  -1: the
 * directory has not answered yet. */
static int refused(struct control_view *v, uid_t uid, int deny_level, uint64_t now,
                   const struct user_state **out)
{
    const struct user_state *us = deny_level > 0 ? at_level(v, uid, now) : NULL;
    *out = NULL;
    if (!us || us->level < deny_level)
        return 0;
    int admin = directory_user(v->directory, uid)->answered ? v->admin(v->core, uid) : -1;
    if (admin < 0)
        return -1;
    *out = admin || protected(v, uid, now) ? NULL : us;
    return *out != NULL;
}

json_t *login_account_reply(struct control_view *v, uid_t uid, int deny_level)
{
    uint64_t now = env_realtime(v->env);
    const struct user_state *us;
    if (refused(v, uid, deny_level, now, &us) < 0)
        return NULL;
    json_t *r = standing_fields(control_reply_ok(), at_level(v, uid, now));
    json_object_set_new(r, "refuse", json_boolean(us != NULL));
    if (!us)
        return r;
    json_t *message = render_standing(v, us, NOTICE_LOGIN_REFUSED);
    json_object_set_new(r, "message", message ? message : json_string("loginguard: refused"));
    json_t *e = event_action("login_refused", uid, directory_name_of(v->directory, uid),
                             mode_name(v->policy->mode), v->events->host, now);
    json_object_set_new(e, "level", json_integer(us->level));
    json_object_set_new(e, "until", json_from_time(us->until));
    json_object_set_new(e, "deny_level", json_integer(deny_level));
    event_log_write(v->events, e);
    return r;
}
