/* The tty channel: a notice written to the terminals a user has open on
 * this node.  The daemon is root and the paths come from data users
 * influence (their processes' terminals, utmp), so a terminal is written
 * only when it is, on the descriptor that was opened, a character device
 * of a known terminal kind owned by that user, reached without following
 * any link; and it is written once, without waiting, so a full or stopped
 * terminal costs nothing. */
#ifndef LOGINGUARD_NOTIFY_TTY_H
#define LOGINGUARD_NOTIFY_TTY_H

#include <stddef.h>
#include <sys/types.h>

#include "base/environment.h"

/* Write text to every terminal of uid on this node: the controlling ttys
 * of the given processes (tty_nr from /proc/PID/stat; a process that is
 * not uid's is passed over) and the utmp entries of that user.  Each
 * candidate (/dev/pts/N, /dev/ttyN, /dev/ttySN) is opened
 * O_WRONLY|O_NOCTTY|O_NONBLOCK|O_NOFOLLOW|O_CLOEXEC below a /dev opened
 * without following links, and must be a tty, a character device owned
 * by uid and the device its name stands for.  One non-blocking write: a
 * short write or EAGAIN gives up on that tty.  Control characters other
 * than newline and tab are dropped from text (a process name must not
 * drive the terminal); newlines become CRLF.  Returns the number of
 * terminals written; *skipped (may be NULL) gets how many candidates were
 * refused or could not take the text.  /proc, /dev and the utmp file (NULL:
 * none) are env's; user is uid's name, as utmp has it (NULL or "": no
 * utmp entry is looked at). */
int notify_tty(const struct environment *env, uid_t uid, const char *user, const pid_t *pids,
               size_t pid_count, const char *text, int *skipped);

#endif
