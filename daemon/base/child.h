/* Running a short-lived child that may hang (a desktop notification over
 * a user's D-Bus, a sendmail command) without ever letting it stall the
 * daemon: the parent feeds the child's stdin and watches it through a
 * pidfd, both without blocking, and SIGKILLs and reaps it when its
 * deadline passes.  Shared by the notice channels. */
#ifndef LOGINGUARD_CHILD_H
#define LOGINGUARD_CHILD_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Runs in the child; its return value is the child's exit status. */
typedef int child_fn(void *arg);

enum child_result {
    CHILD_EXITED,     /* *status is the wait status */
    CHILD_TIMED_OUT,  /* killed and reaped */
    CHILD_ERROR,      /* could not start it; errno kept */
};

/* A child under way: the daemon's main loop feeds it, watches it and
 * kills it at its deadline without ever waiting for it. */
struct child {
    pid_t pid;
    int pidfd;            /* readable once it has exited; -1 without (util.h) */
    int input_fd;         /* its stdin, while input is left to write; else -1 */
    char *input;
    size_t input_len, input_done;
    uint64_t deadline;    /* boottime usec */
    bool killed;          /* past the deadline: SIGKILLed, to be reaped */
    /* What it writes on stdout, when it was started reading it: at most
     * output_max bytes are kept (output_cut: it wrote more), NUL-ended. */
    int output_fd;        /* -1 when not read, or at its end */
    char *output;
    size_t output_len, output_max;
    bool output_cut;
};

/* Descriptors a child is polled on at most (child_pollfds). */
#define CHILD_POLLFDS 3

/* Fork a child that runs fn(arg) and then _exit()s with its return value,
 * so none of the daemon's atexit handlers or stdio buffers run twice.  The
 * child has input (input_len bytes, copied; NULL: nothing) on stdin,
 * /dev/null on stdout, the daemon's stderr, no other descriptor, default
 * signal handling, an empty signal mask, and dies with the daemon (a child
 * that changes its credentials must ask for that again: the kernel resets
 * it).  0, or -1 with errno.  Call only from the daemon's single thread. */
int child_start(struct child *c, child_fn *fn, void *arg, const char *input, size_t input_len,
                uint64_t timeout_usec);

/* child_start without input, and with stdout read into c->output (at
 * most output_max bytes kept): a command whose answer the daemon wants.
 * The caller frees c->output. */
int child_start_reading(struct child *c, child_fn *fn, void *arg, uint64_t timeout_usec,
                        size_t output_max);

/* Without blocking: write what input the child takes, SIGKILL it once past
 * its deadline, reap it once it has exited.  True when it has been reaped:
 * *result (CHILD_EXITED or CHILD_TIMED_OUT) and *status tell how. */
bool child_check(struct child *c, enum child_result *result, int *status);

/* What to poll for it (at most CHILD_POLLFDS entries), and when to call child_check
 * at the latest (boottime usec; 0: when a descriptor says so). */
size_t child_pollfds(const struct child *c, struct pollfd *out);
uint64_t child_deadline(const struct child *c);

/* Wait for it: returns within about its timeout whatever the child does
 * (but a killed child that cannot die yet is waited for). */
enum child_result child_wait(struct child *c, int *status);

/* child_start, then child_wait. */
enum child_result child_run(child_fn *fn, void *arg, const char *input, size_t input_len,
                            uint64_t timeout_usec, int *status);

/* "exited with status 3", "killed by signal 9": for error messages. */
void child_describe_status(int status, char *buf, size_t len);

#endif
