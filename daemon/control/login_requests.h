/* What the daemon answers pam_loginguard (login_requests.c). */
#ifndef LOGINGUARD_LOGIN_REQUESTS_H
#define LOGINGUARD_LOGIN_REQUESTS_H

#include <jansson.h>
#include <stdbool.h>

#include "control/control_server.h"
#include "control/control_view.h"

/* Both return NULL while the directory has not answered about uid (its
 * [exempt] groups, admin_group): the request waits (control_server.h).
 *
 * A new session of uid: the asking process placed in uid's cgroup
 * (cgroupfs, enforce mode, a root peer), and the messages to show: the
 * site's banner, the standing while a level's limits last, and the
 * unread login notices, then marked read (none of these when notices is
 * false: PAM_SILENT). */
json_t *login_session_reply(struct control_view *v, const struct control_conn *c, uid_t uid,
                            bool notices);
/* Whether a login of uid is refused at deny_level (0: never), with the
 * message to show; a refusal is a login_refused event. */
json_t *login_account_reply(struct control_view *v, uid_t uid, int deny_level);

#endif
