/* Taking one of loginguard's cgroups apart for good (loginguardd
 * --release, at package removal): every process still in it goes to a
 * cgroup given by the caller (the one above loginguard's parent), in
 * every hierarchy it exists in, then the directory goes.
 *
 * The processes belong to users who may be hostile: one that forks in a
 * loop keeps putting new processes into the group while it is emptied.
 * Moving the whole listing again and again converges (the forking
 * process, once moved, forks into its new cgroup), but only a bounded
 * number of rounds is tried, and what stays is said.  cgroup.procs is
 * read as untrusted text, a bounded number of pids a round. */
#ifndef LOGINGUARD_CGROUP_RELEASE_H
#define LOGINGUARD_CGROUP_RELEASE_H

#include <stddef.h>

/* One hierarchy (v1 has one per controller, v2 one in all). */
struct release_level {
    int parent_fd;          /* the directory holding the cgroup to remove */
    int dest_fd;            /* where its processes go */
    const char *parent_dir; /* their paths, for messages */
    const char *dest_dir;
};

/* Rounds of moving before giving up on a group that stays populated. */
#define RELEASE_ROUNDS 200
/* Pids read from one cgroup.procs a round: the rest waits for the next. */
#define RELEASE_PIDS_A_ROUND 65536

/* remove: rmdir of name below a directory (unlinkat with AT_REMOVEDIR on
 * cgroupfs).  Returns 0 when name is gone from every level (or was never
 * there), -1 with err naming what stayed and why. */
int cgroup_release_child(const struct release_level *levels, size_t n, const char *name,
                         int (*remove)(int dirfd, const char *name), char *err, size_t err_len);

/* The last name of a parent cgroup's path ("/a/lg/" gives "lg"), into
 * buf; NULL when there is none to remove: the root, or "." (the parent
 * is then a cgroup above, not one loginguard made). */
const char *cgroup_release_name(const char *path, char *buf, size_t len);

/* Move every process listed in from_fd's cgroup.procs into to_fd's, the
 * first RELEASE_PIDS_A_ROUND of them.  Returns how many were listed (a
 * process gone meanwhile counts), or -1 with errno and *failed_pid set
 * when one could not be moved. */
long cgroup_move_procs(int from_fd, int to_fd, int *failed_pid);

#endif
