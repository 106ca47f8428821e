/* Shared memory each user holds that no process's resident size may show:
 * files in tmpfs (POSIX shared memory in /dev/shm, a tmpfs /tmp,
 * /run/user/UID) and System V segments.  Such memory stays in RAM after
 * the last process that wrote it has unmapped it or ended, and counts for
 * the user on the /proc path (the cgroup path reads the cgroup's shmem).
 *
 * Files are charged to their owner (a user cannot give one away) and
 * segments to their creator (the owner a segment names can be changed by
 * its creator: to act on someone else).  What the user's processes map
 * of it is in their resident size already, so only the rest is added:
 * held less what their processes map (RssShmem).  Below SHM_HELD_MIN
 * nothing is added (and nothing read): a session's few files in
 * /run/user are no memory worth a look at every process.
 *
 * What has no name left (a memfd, an unlinked tmpfs file) is held only
 * through descriptors: the walks of those (shm_fd_walk.h) hand in each
 * holder's figure, which counts with the rest, for the process's owner
 * (fds), and what they map of it is subtracted the same way: the pool
 * less what is mapped is never more than what no mapping shows (a page
 * mapped counts in some process's RssShmem), though shared memory a user
 * maps that is in no pool (an anonymous shared mapping) hides as much of
 * the pool.
 *
 * The tmpfs mounts are those of PID 1's mount namespace (the service's
 * own /tmp is private; the daemon's own where PID 1's root cannot be
 * entered), walked without following links, at most
 * SHM_WALK_BUDGET entries a sweep: a walk that does not finish goes on
 * where it stopped at the next sweep, and the totals are those of the
 * last whole walk, so no number of files hides one behind them. */
#ifndef LOGINGUARD_SHM_HELD_H
#define LOGINGUARD_SHM_HELD_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SHM_WALK_BUDGET 4096 /* directory entries looked at in one sweep: ~12 ms (make bench) */
#define SHM_HELD_MIN (16ULL << 20)
/* Processes of one owner whose RssShmem is read in a sweep: past them,
 * what the rest map is not subtracted (the user is counted more, never
 * less, than they hold). */
#define SHM_READS_PER_OWNER 1024
#define SHM_WALK_DEPTH 16     /* directories below a mount walked into */
/* tmpfs mounts walked: a login node has one per user logged in
 * (/run/user/UID), which only the system makes. */
#define SHM_MOUNTS_MAX 4096

struct shm_owner {
    uid_t uid;
    uint64_t held;   /* bytes in tmpfs files and segments */
    uint64_t fds;    /* bytes with no name, held through descriptors */
    uint64_t mapped; /* bytes of shared memory their processes map */
    uint32_t mapped_reads; /* processes read for it at this sweep */
};

struct shm_usage {
    struct shm_owner *owners;
    size_t count, capacity;
};

struct shm_held {
    int proc_fd;                 /* the /proc the daemon reads (not owned) */
    struct shm_usage owners;     /* the last whole walk, and fds */
    struct shm_usage walking;    /* the walk under way */
    const char *ns;              /* "1" or "self": whose mounts are walked */
    char **mounts;               /* the walk's tmpfs mount points */
    size_t mount_count, mount_capacity, mount_next;
    dev_t mount_dev;             /* the mount being walked: not into others below it */
    DIR *dirs[SHM_WALK_DEPTH + 1]; /* open directories, the deepest last */
    size_t depth;                /* 0: between mounts */
    uint64_t walks;              /* whole walks done (bench_shm counts them) */
};

void shm_held_init(struct shm_held *h, int proc_fd);
void shm_held_free(struct shm_held *h);

/* Up to SHM_WALK_BUDGET entries of the walk; at its end, the segments
 * too, and the totals replace the last walk's.  What processes map is
 * forgotten: the sweep reads it again (shm_held_read_mapped). */
void shm_held_sweep(struct shm_held *h);

/* Whether uid held SHM_HELD_MIN or more at the last whole walk (with
 * fds): then what their processes map is read. */
bool shm_held_worth_reading(const struct shm_held *h, uid_t uid);

/* What uid holds through descriptors now (shm_fd_walk.h).  True when
 * that brings them to SHM_HELD_MIN: what their processes map was not
 * read at this sweep, and must be before the figure counts. */
bool shm_held_set_fds(struct shm_held *h, uid_t uid, uint64_t bytes);

/* A process of uid maps shared memory: its RssShmem, read from its
 * status. */
void shm_held_read_mapped(struct shm_held *h, pid_t pid, uid_t uid);

/* The owners of the last whole walk, and those who hold memory through
 * descriptors: held and fds less mapped is what each holds beyond their
 * processes' resident size (when held and fds are SHM_HELD_MIN or more). */
const struct shm_usage *shm_held_owners(const struct shm_held *h);

#endif
