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

#include "notify_outcome.h"

/* Fork a child that becomes uid fully (initgroups, setresgid, setresuid;
 * it checks it cannot get root back), with a clean environment
 * (DBUS_SESSION_BUS_ADDRESS=unix:path=<runtime_dir>/bus, XDG_RUNTIME_DIR,
 * HOME, USER, LOGNAME), and sends summary and body through libnotify
 * (urgency critical when urgent, else normal) and exits.  The parent waits
 * at most timeout_usec through a pidfd, then SIGKILLs and reaps it.
 * runtime_dir is normally /run/user/UID; when it is not a directory owned
 * by uid holding a socket "bus" owned by uid, the result is
 * NOTIFY_SKIPPED and nothing is forked.  Text that is not UTF-8 is
 * repaired and control characters dropped; the body is escaped when the
 * server reads markup.  Never for uid 0.  Call only from the daemon's
 * single thread, which must not use GLib itself. */
enum notify_outcome notify_desktop(uid_t uid, const char *runtime_dir, const char *summary,
                                   const char *body, bool urgent, uint64_t timeout_usec, char *err,
                                   size_t err_len);

#endif
