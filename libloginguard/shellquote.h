/* A process's argv as a command line that a user can copy, paste and run:
 * notices put it into `sbatch --wrap` and `srun --pty` lines.  The argv is
 * hostile (any byte but NUL), so the result must also be harmless on a
 * terminal. */
#ifndef LOGINGUARD_SHELLQUOTE_H
#define LOGINGUARD_SHELLQUOTE_H

#include <stdbool.h>
#include <stddef.h>

/* argv as read from /proc/PID/cmdline (NUL-separated, maybe without the
 * final NUL, bytes may be anything but NUL) as one POSIX sh command line
 * that reproduces argv byte for byte under Debian's /bin/sh (dash: it has
 * no $'...'), bash and zsh, and that is safe to show on a terminal:
 * printable ASCII plus (only inside single quotes) newline.  Other bytes
 * are written as "$(printf '\NNN')".  When the result would exceed max
 * bytes (0: no limit), it keeps whole leading words, ends with
 * "<N more arguments not shown>" and sets *elided; that marker is a shell
 * syntax error, so a pasted elided line fails instead of running a
 * different command.  *elided may be NULL. */
char *shell_quote_argv(const char *cmdline, size_t len, size_t max, bool *elided);

/* One word, same rules. */
char *shell_quote_word(const char *s, size_t len);

#endif
