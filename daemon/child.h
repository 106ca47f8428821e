/* Running a short-lived child that may hang (a desktop notification over
 * a user's D-Bus, a sendmail command) without ever letting it stall the
 * daemon: the parent feeds the child's stdin and waits through a pidfd,
 * both with a deadline, and SIGKILLs and reaps it when the deadline
 * passes.  Shared by the notice channels. */
#ifndef LOGINGUARD_CHILD_H
#define LOGINGUARD_CHILD_H

#include <stddef.h>
#include <stdint.h>

/* Runs in the child; its return value is the child's exit status. */
typedef int child_fn(void *arg);

enum child_result {
    CHILD_EXITED,     /* *status is the wait status */
    CHILD_TIMED_OUT,  /* killed and reaped */
    CHILD_ERROR,      /* could not start it; errno kept */
};

/* Fork a child that runs fn(arg) and then _exit()s with its return value,
 * so none of the daemon's atexit handlers or stdio buffers run twice.  The
 * child has input (input_len bytes; NULL: nothing) on stdin, /dev/null on
 * stdout, the daemon's stderr, no other descriptor, default signal
 * handling, an empty signal mask, and dies with the daemon (a child that
 * changes its credentials must ask for that again: the kernel resets it).  The parent
 * returns within about timeout_usec whatever the child does.  Call only
 * from the daemon's single thread. */
enum child_result child_run(child_fn *fn, void *arg, const char *input, size_t input_len,
                            uint64_t timeout_usec, int *status);

/* "exited with status 3", "killed by signal 9": for error messages. */
void child_describe_status(int status, char *buf, size_t len);

#endif
