/* The cgroupfs backend on cgroup v2: one tree, so one directory per user,
 * user-UID below cgroup_parent, written directly.
 *
 * libcgroup 2.0.2 is not used on v2: cgroup_create_cgroup() writes
 * "+controller" into cgroup.subtree_control of every ancestor from the
 * mount point down (cgroups that are not ours, and it fails with EBUSY at
 * any of them that holds processes); its paths come from its mount table,
 * so it cannot be pointed at a test tree; and its 2.0.2 headers cannot
 * say whether a controller is v1 or v2.  The files are simple enough to
 * write here, each through openat() on a held directory descriptor with
 * O_NOFOLLOW.
 *
 * v2's "no internal processes" rule: a cgroup other than the root that
 * holds processes cannot give controllers to its children.  With a
 * relative cgroup_parent the daemon's own cgroup is an ancestor of the
 * users' cgroups, so the daemon first moves itself into <own>/supervisor
 * (systemd's convention for a delegated subtree). */
#ifndef LOGINGUARD_CGROUPFS_V2_H
#define LOGINGUARD_CGROUPFS_V2_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "cgroup_limits.h"

enum { V2_CPU = 1, V2_MEMORY = 2, V2_PIDS = 4, V2_ALL = 7 };

/* Making and removing cgroup directories.  On cgroupfs the kernel fills a
 * new directory with its interface files and removes them with it; a test
 * on a plain directory tree stands in for the kernel here. */
struct cgv2_dirops {
    int (*make)(int dirfd, const char *name);   /* 0, or -1 with errno (EEXIST ok) */
    int (*remove)(int dirfd, const char *name); /* 0, or -1 with errno */
};

struct cgroupfs_v2 {
    int parent_fd;          /* <root><parent>, holding user-UID */
    char *parent_dir;       /* its path, for the sampler's counters */
    char *parent_path;      /* the same inside the cgroup tree ("/a/lg"), as
                               /proc/PID/cgroup shows it */
    unsigned controllers;   /* V2_* given to the users' cgroups */
    const struct cgv2_dirops *ops;
    char warning[512];      /* what is not applied and why, "" if all is */
};

/* root: the cgroup2 mount (a test tree in tests); own: the daemon's own
 * cgroup below it ("/" or "/a/b"); self: the daemon's pid, moved into
 * <own>/supervisor when cgroup_parent is relative and own is not the
 * root; ops NULL for the kernel's.  Makes the parent, enables cpu, memory
 * and pids down to it (those available; the others are named in
 * c->warning, and their limits left out). */
int cgv2_open(struct cgroupfs_v2 *c, const char *root, const char *own, const char *cgroup_parent,
              pid_t self, const struct cgv2_dirops *ops, char *err, size_t err_len);
void cgv2_close(struct cgroupfs_v2 *c);

/* Make user-UID if missing and write its cpu.max, memory.high,
 * memory.max and pids.max ("max" where l has no limit). */
int cgv2_apply(struct cgroupfs_v2 *c, uid_t uid, const struct limits *l, char *err,
               size_t err_len);
/* Move a process (all its threads) into user-UID. */
int cgv2_attach(struct cgroupfs_v2 *c, uid_t uid, pid_t pid, char *err, size_t err_len);
/* Remove user-UID when its cgroup.events says "populated 0" (nothing in
 * it or below); 1 if removed or already gone, 0 if kept. */
int cgv2_remove_if_empty(struct cgroupfs_v2 *c, uid_t uid);

/* --release: move every process of user-UID into the cgroup above the
 * parent (where they came from is not known; the root when the parent is
 * the root) and remove user-UID; 0 when it is gone, -1 with err naming
 * what stayed and why (cgroup_release.h). */
int cgv2_release_user(struct cgroupfs_v2 *c, uid_t uid, char *err, size_t err_len);
/* --release, last: remove the parent, which loginguard made, unless it is
 * the root; -1 with err when it stays (it holds what loginguard did not
 * put there). */
int cgv2_release_parent(struct cgroupfs_v2 *c, char *err, size_t err_len);

#endif
