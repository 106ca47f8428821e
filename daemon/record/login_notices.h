/* Notices kept for a user's next login (channel "login"): the PAM module
 * shows the unread ones when the user logs in, and they are then marked
 * read.
 *
 * STATE_DIR/login-notices/UID.json, one file a user, written atomically:
 *   {"notices": [{"time": usec, "kind": "throttled", "subject": "...",
 *                 "body": "...", "read": false}, ...]}
 * oldest first, at most LOGIN_NOTICES_KEPT (older ones are dropped, read
 * or not: a user away for a month needs the latest, not all). */
#ifndef LOGINGUARD_LOGIN_NOTICES_H
#define LOGINGUARD_LOGIN_NOTICES_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define LOGIN_NOTICES_KEPT 10

/* Append one unread notice.  Returns 0, or -1 with err. */
int login_notice_add(const char *state_dir, uid_t uid, uint64_t now, const char *kind,
                     const char *subject, const char *body, char *err, size_t err_len);

/* The unread notices of uid, oldest first, as a new JSON array in *out
 * (empty if none), marked read in the file.  Returns 0, or -1 with err
 * (*out is then NULL). */
int login_notices_take(const char *state_dir, uid_t uid, json_t **out, char *err, size_t err_len);

#endif
