/* A helper process: a child the daemon forks for work that may block
 * (NSS lookups, reading other processes' memory), talked to over a
 * SOCK_SEQPACKET socketpair, so that the loop only ever waits on a
 * socket.  One that stalls is killed and another started; a killed one
 * that does not die (a read the kernel has not ended) is kept as stuck,
 * to be reaped when it does, and no new one starts while stuck_max wait
 * so.  Used by the user directory (observe/directory.h) and the command
 * line reader (observe/argv_reader.h). */
#ifndef LOGINGUARD_HELPER_PROCESS_H
#define LOGINGUARD_HELPER_PROCESS_H

#include <stddef.h>
#include <sys/types.h>

/* Killed helpers not reaped yet, at most (stuck_max may be less). */
#define HELPER_STUCK_MAX 16
/* Descriptors a helper keeps besides its socket. */
#define HELPER_KEEP_MAX 4

struct helper_child {
    pid_t pid;   /* -1: none */
    int pidfd;   /* -1 where the kernel gives none */
};

struct helper_process {
    int sock;                     /* the daemon's end, non-blocking; -1: no helper */
    struct helper_child child;    /* the helper running */
    struct helper_child stuck[HELPER_STUCK_MAX]; /* killed, not reaped yet */
    size_t stuck_count;
    size_t stuck_max;             /* no new helper while this many are stuck */
};

/* No helper yet; at most stuck_max (HELPER_STUCK_MAX or fewer) stuck. */
void helper_process_init(struct helper_process *h, size_t stuck_max);

/* Reap the stuck helpers that have died, then start a helper unless
 * stuck_max are still stuck.  The child dies with the daemon, is called
 * name (in ps and top: not taken for a second daemon), keeps nothing of
 * the daemon's but its socket, as descriptor 3, and keep[i] as 4 + i,
 * has no signal blocked, and runs run(arg), then exits.  0, or -1 with
 * errno (EAGAIN: too many stuck). */
int helper_process_start(struct helper_process *h, const char *name, const int *keep,
                         size_t keep_count, void (*run)(void *arg), void *arg);

/* Kill the helper (if any) and close the socket: SIGKILL, and up to
 * 50 ms for it to die (its pidfd turns readable, or without one its end
 * of the socket closes); one that does not is stuck, reaped later. */
void helper_process_end(struct helper_process *h);

/* Reap the stuck helpers that have died. */
void helper_process_reap(struct helper_process *h);

/* End the helper; the stuck ones are sent SIGKILL again and left to
 * init (a read that never ends would keep them for ever). */
void helper_process_stop(struct helper_process *h);

#endif
