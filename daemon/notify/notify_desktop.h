/* The desktop channel: a libnotify notice on the user's own session bus,
 * sent by a child that has fully become the user, so that the bus sees
 * the user and not root, and a hostile bus or notification server can do
 * nothing the user could not. */
#ifndef LOGINGUARD_NOTIFY_DESKTOP_H
#define LOGINGUARD_NOTIFY_DESKTOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/child.h"
#include "record/notify_outcome.h"

/* A desktop notice under way. */
struct desktop_send {
    struct child child;
    uid_t uid;
    char *user, *address;
    uint64_t timeout_usec;
};

/* Fork a child that becomes uid fully (initgroups, setresgid, setresuid;
 * it checks it cannot get root back), with a clean environment
 * (DBUS_SESSION_BUS_ADDRESS=unix:path=<runtime_dir>/bus, XDG_RUNTIME_DIR,
 * HOME, USER, LOGNAME), and sends summary and body through libnotify
 * (urgency critical when urgent, else normal) and exits.  NOTIFY_PENDING:
 * the child is under way in s->child; once child_check() says it has
 * ended (it is killed at timeout_usec), notify_desktop_finish() tells
 * the outcome.  runtime_dir is normally /run/user/UID; when it is not a
 * directory owned by uid holding a socket "bus" owned by uid, the result
 * is NOTIFY_SKIPPED and nothing is forked.  Text that is not UTF-8 is
 * repaired and control characters dropped; the body is escaped when the
 * server reads markup.  Never for uid 0.  The child looks uid up in the
 * user database (never the daemon: a slow directory holds up the child
 * only); user is uid's name for messages (NULL or "": "uid N").  Call only from the daemon's
 * single thread, which must not use GLib itself. */
enum notify_outcome notify_desktop_start(struct desktop_send *s, uid_t uid, const char *user,
                                         const char *runtime_dir, const char *summary,
                                         const char *body, bool urgent, uint64_t timeout_usec,
                                         char *err, size_t err_len);
/* The outcome of a child that has ended; frees s. */
enum notify_outcome notify_desktop_finish(struct desktop_send *s, enum child_result result,
                                          int status, char *err, size_t err_len);
void notify_desktop_free(struct desktop_send *s);

/* Start and wait: the whole send, for tools and tests. */
enum notify_outcome notify_desktop(uid_t uid, const char *user, const char *runtime_dir,
                                   const char *summary,
                                   const char *body, bool urgent, uint64_t timeout_usec, char *err,
                                   size_t err_len);

#endif
