/* Reading users' command lines (/proc/PID/cmdline) for the sampler.
 *
 * Interim version: reads in the daemon itself, at request time, so a
 * request is answered at the next poll.  (To become a helper process
 * whose stalls cannot stall the daemon.) */
#ifndef LOGINGUARD_ARGV_READER_H
#define LOGINGUARD_ARGV_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum argv_status { ARGV_OK, ARGV_GONE, ARGV_BLOCKED, ARGV_ERROR };

struct argv_answer {
    pid_t pid;
    uint64_t start_time;
    enum argv_status status;
    const char *argv;     /* the first len bytes (at most ARGV_KEEP), NUL-separated */
    size_t len;
    size_t total;         /* the whole command line's length */
    char sha256[65];      /* of the whole command line */
};

struct argv_pending {
    pid_t pid;
    uint64_t start_time;
};

struct argv_reader {
    int proc_fd;
    struct argv_pending *queue;
    size_t count, capacity;
};

int argv_reader_start(struct argv_reader *r, const char *proc_root, char *err, size_t err_len);
void argv_reader_stop(struct argv_reader *r);
/* Ask for pid's command line; 0, or -1 when the queue is full. */
int argv_reader_request(struct argv_reader *r, pid_t pid, uint64_t start_time);
/* Hand every answer that has come to fn, waiting at most wait_usec. */
int argv_reader_poll(struct argv_reader *r, uint64_t now, uint64_t wait_usec,
                     void (*fn)(const struct argv_answer *a, void *arg), void *arg);
int argv_reader_fd(const struct argv_reader *r);
uint64_t argv_reader_deadline(const struct argv_reader *r);

#endif
