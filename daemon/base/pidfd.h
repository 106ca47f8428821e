/* Signals through pidfds: the daemon signals processes only this way
 * (or, for its own unreaped children, by pid), so that a recycled pid
 * is never hit. */
#ifndef LOGINGUARD_PIDFD_H
#define LOGINGUARD_PIDFD_H

#include <sys/types.h>

/* pidfd_open(2) and pidfd_send_signal(2): glibc 2.36 has the wrappers,
 * older ones do not; the syscalls are what the kernel offers (5.3+). */
int pidfd_open_(pid_t pid);
int pidfd_signal_(int pidfd, int sig);

/* A signal to one of the daemon's own children (the command line reader,
 * a notice child), not reaped yet, so its pid cannot have been recycled:
 * through its pidfd when it has one, else by pid.  (Where pidfd_open is
 * refused, by valgrind 3.19 or a container's seccomp filter, those
 * children go without one; the stopper, which signals other people's
 * processes, never does.) */
int own_child_signal(pid_t pid, int pidfd, int sig);

#endif
