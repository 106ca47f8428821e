/* The walks over users' descriptors for shared memory with no name
 * (shm_fds.h), one per owner: which process the helper is asked about
 * next, from which descriptor, and what the owner holds.
 *
 * Each sweep lists the watched processes; each owner's walk goes
 * through theirs in pid order, one request out at a time (the owners
 * taking turns), and stops for the sweep once it has looked at
 * FD_WALK_BUDGET descriptors or asked FD_WALK_REQUESTS times: the next
 * sweep goes on where it stopped.  What
 * counts is the figure of the owner's last whole walk, so no number of
 * processes or descriptors hides one behind them (it only makes a walk
 * take more sweeps).  A whole walk ends at most once a sweep.
 *
 * Each object counts once for its owner, however many of their
 * descriptors and processes hold it (by device and inode, at most
 * FD_WALK_OBJECTS remembered for one walk: past them an object counts
 * each time it is seen, so more, never less).  One that two people hold
 * counts for each: either alone keeps it in RAM, and neither can pass
 * theirs on to the other by holding it too.  What of it their processes
 * also map is in their resident size already: that is for the caller to
 * subtract (shm_held.h).
 *
 * Only bookkeeping: the caller sends the requests and hands back the
 * answers, so the walks are tested on synthetic answers. */
#ifndef LOGINGUARD_SHM_FD_WALK_H
#define LOGINGUARD_SHM_FD_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "observe/argv_reader.h"
#include "observe/shm_fds.h"

/* Descriptors one owner's walk looks at in a sweep (make bench: about
 * 1 us each in the helper, more for those that may hold one)... */
#define FD_WALK_BUDGET 4096
/* ...requests it makes (each a process, or 512 more descriptors of one:
 * a process costs the opening of its /proc directory)... */
#define FD_WALK_REQUESTS 256
/* ...and descriptors one request looks at: the helper, which reads
 * everyone's command lines too, is not held long by one. */
#define FD_WALK_REQUEST 512
#define FD_WALK_OBJECTS 1024
/* Requests out at once, whoever's: a command line asked for waits behind
 * no more than these (each a few ms at most: make bench). */
#define FD_WALK_OUT 4

/* A watched process, for a sweep's list. */
struct fd_walk_proc {
    uid_t owner;
    pid_t pid;
    uint64_t start_time;
};

struct fd_walk_key {
    uint64_t dev, ino;
};

struct fd_walk_owner {
    uid_t uid;
    /* Where the walk goes on: the process (pid, start_time), or the
     * first after it, from descriptor fd. */
    pid_t pid;
    uint64_t start_time;
    int32_t fd;
    bool out;           /* a request for pid is out */
    bool finished;      /* a whole walk ended in this sweep */
    uint32_t looked, requests; /* in this sweep */
    uint64_t bytes;     /* the walk under way */
    uint64_t last;      /* the last whole walk's figure */
    struct fd_walk_key *seen; /* its objects, sorted */
    size_t seen_count, seen_capacity;
    size_t first, procs; /* its processes in the sweep's list */
};

struct fd_walk {
    struct fd_walk_owner *owners;   /* sorted by uid */
    size_t count, capacity;
    struct fd_walk_proc *procs;     /* the sweep's, sorted by owner and pid */
    size_t proc_count, proc_capacity;
};

void fd_walk_init(struct fd_walk *w);
void fd_walk_free(struct fd_walk *w);

/* A new sweep over procs (n of them, copied): budgets renewed.  An owner
 * with none of them left is forgotten once a whole walk of theirs has
 * said 0 (FD_WALK_DONE) and no request of theirs is out. */
void fd_walk_begin(struct fd_walk *w, const struct fd_walk_proc *procs, size_t n);

enum fd_walk_step {
    FD_WALK_ASK,   /* send *q (then fd_walk_sent) */
    FD_WALK_DONE,  /* a whole walk ended: *bytes is what the owner holds */
    FD_WALK_WAIT,  /* nothing until an answer or the next sweep */
};

struct fd_walk_request {
    pid_t pid;
    uint64_t start_time;
    int from;
    uint32_t budget;
};

enum fd_walk_step fd_walk_next(struct fd_walk *w, uid_t owner, struct fd_walk_request *q,
                               uint64_t *bytes);
/* The request fd_walk_next asked for is out. */
void fd_walk_sent(struct fd_walk *w, uid_t owner);

/* An answer to an ARGV_SHM_FDS request (its tag the owner). */
void fd_walk_take(struct fd_walk *w, const struct argv_answer *a);

/* The owner's processes in the sweep's list. */
const struct fd_walk_proc *fd_walk_procs_of(const struct fd_walk *w, uid_t owner, size_t *n);

#endif
