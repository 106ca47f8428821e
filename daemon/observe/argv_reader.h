/* Reading users' command lines (/proc/PID/cmdline) without ever letting
 * one hold up the daemon.
 *
 * Reading a command line makes the kernel read the target process's own
 * memory, under that process's memory-map lock, and a process can make
 * such a read wait: kernels before 4.17 follow its argument pages into a
 * file of a FUSE filesystem its user runs (which need never answer), and
 * any kernel makes the reader queue for the lock behind whoever holds
 * it.  A FUSE wait does not even end with SIGKILL once the server has
 * the request.  So the reads are done by a helper process: the daemon
 * sends it (pid, start time) requests over a socket and takes the
 * answers when they come.  When the helper has been on one request
 * longer than ARGV_STALL_USEC and is asleep (a read held by a FUSE
 * server or by the lock sleeps; a helper that only waits for a CPU on a
 * busy machine is runnable, and has up to ARGV_RUNNABLE_MAX_USEC), it
 * is killed (it dies when its read ends, whenever that is, and is
 * reaped then), that request and the others of the same tag (the
 * process's owner) are answered ARGV_BLOCKED, and a fresh helper takes
 * the rest.  At most ARGV_STUCK_MAX killed helpers may wait for their
 * reads to end: past that, requests are answered ARGV_ERROR (nothing
 * read) until one has ended.
 *
 * The helper reads at most ARGV_CAP bytes of a command line: the first
 * ARGV_KEEP come back (snapshot.h), with the whole length and a SHA-256
 * of what was read.  It also checks, when asked, whether a process runs
 * only its own code (code_check.h), which reads the same memory, and
 * which shared memory with no name a process holds through its
 * descriptors (shm_fds.h), which looks at files a user may have put on
 * a filesystem they run. */
#ifndef LOGINGUARD_ARGV_READER_H
#define LOGINGUARD_ARGV_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/helper_process.h"
#include "snapshot.h"

#define ARGV_STALL_USEC (500 * 1000)
#define ARGV_RUNNABLE_MAX_USEC (5 * 1000 * 1000)
#define ARGV_STUCK_MAX 16
#define ARGV_CAP (256 * 1024)
#define ARGV_QUEUE_MAX 65536
/* An answer on the wire: a fixed part of at most this, then the argv. */
#define ARGV_WIRE_FIXED 128

enum argv_status {
    ARGV_OK,
    ARGV_GONE,      /* the process has ended, or the pid is another's now */
    ARGV_BLOCKED,   /* the read did not end in time: do not ask again */
    ARGV_ERROR,     /* not read: no helper could take it, or it died on it */
};

/* What a request asks: the command line, whether the process runs
 * only its own code (code_check.h), which reads its memory map too, or
 * the shared memory it holds through descriptors (shm_fds.h). */
enum argv_kind {
    ARGV_CMDLINE,
    ARGV_CODE,
    ARGV_SHM_FDS,
};

struct argv_answer {
    enum argv_kind kind;
    pid_t pid;
    uint64_t start_time;
    uint32_t tag;
    enum argv_status status;
    /* ARGV_CMDLINE: the first len bytes (at most ARGV_KEEP), NUL-separated.
     * ARGV_CODE: "" when it runs only its own code, else why not.
     * ARGV_SHM_FDS: a struct shm_fds_reply of len bytes. */
    const char *argv;
    size_t len;
    size_t total;         /* the whole command line's length (ARGV_CAP at most) */
    bool cut;             /* longer than ARGV_CAP: total and sha256 cover ARGV_CAP */
    char sha256[65];      /* of the first total bytes */
};

/* Sent to the helper as it is: no padding, so no stray bytes. */
struct argv_request {
    uint64_t start_time;
    pid_t pid;
    uint32_t tag;
    uint32_t kind;        /* enum argv_kind */
    int32_t from;         /* ARGV_SHM_FDS: the first descriptor looked at... */
    uint32_t budget;      /* ...and how many at most */
    uint32_t zero;
};

struct argv_reader {
    int proc_fd;                  /* the /proc the helper reads */
    struct helper_process helper; /* its sock -1: no helper */
    /* Requests not answered yet, oldest first; the first `sent` of them
     * have been written to the helper, which answers them in order. */
    struct argv_request *queue;
    size_t head, count, capacity, sent;
    uint64_t head_since;          /* boottime usec the oldest sent one was sent */
    uint64_t head_check;          /* when the helper is next looked at for a stall */
    uint64_t stall_usec;          /* ARGV_STALL_USEC; a test may choose another */
    uint64_t restarts, blocked;   /* for status and metrics */
    char answer[ARGV_WIRE_FIXED + ARGV_KEEP]; /* the one being taken */
};

/* Start the helper on proc_root ("/proc" but in tests).  -1 with err. */
int argv_reader_start(struct argv_reader *r, const char *proc_root, char *err, size_t err_len);
void argv_reader_stop(struct argv_reader *r);

/* Ask for pid's command line; tag comes back with the answer.  -1 when
 * ARGV_QUEUE_MAX requests are waiting already: ask again later. */
int argv_reader_request(struct argv_reader *r, pid_t pid, uint64_t start_time, uint32_t tag);
/* The same for whether it runs only its own code. */
int argv_reader_request_code(struct argv_reader *r, pid_t pid, uint64_t start_time, uint32_t tag);
/* The same for the shared memory it holds through descriptors, budget
 * of them from descriptor `from` on. */
int argv_reader_request_fds(struct argv_reader *r, pid_t pid, uint64_t start_time, uint32_t tag,
                            int from, uint32_t budget);

/* Hand every answer that has come to fn, waiting up to wait_usec for
 * the ones asked for; deal with a helper that stalled.  Returns how many
 * answers were handed over. */
size_t argv_reader_poll(struct argv_reader *r, uint64_t wait_usec,
                        void (*fn)(const struct argv_answer *a, void *arg), void *arg);

/* For the main loop: the descriptor to watch (readable: answers, or a
 * stuck helper ended), -1 when there is none... */
int argv_reader_fd(const struct argv_reader *r);
/* ...and when to call argv_reader_poll anyway (boottime usec; 0: no
 * request out). */
uint64_t argv_reader_deadline(const struct argv_reader *r);

#endif
