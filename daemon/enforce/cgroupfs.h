/* The cgroupfs backend: loginguard's own per-user cgroups, user-UID,
 * below [daemon] cgroup_parent, made and changed through libcgroup on
 * cgroup v1 (and on hybrid hosts, whose v2 mount has no controller we
 * use), and written directly on a pure cgroup v2 host (cgroupfs_v2.h).
 *
 * On cgroup v1 each controller is its own tree and a process may sit at
 * a different path in each, so the parent is resolved per controller: a
 * relative cgroup_parent is taken below the daemon's own cgroup in that
 * controller (a daemon in a container or a slice, and the tests, stay in
 * their own subtree); an absolute one from the root of each hierarchy. */
#ifndef LOGINGUARD_CGROUPFS_H
#define LOGINGUARD_CGROUPFS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "cgroup_limits.h"
#include "enforce/cgroupfs_v2.h"
#include "observe/cgroup_counters.h"

enum cg_controller { CG_CPU, CG_CPUACCT, CG_MEMORY, CG_PIDS, CG_COUNT };

struct cgroupfs {
    int version;  /* 1 or 2 */
    struct cgroupfs_v2 v2;
    /* v1, per controller: the parent's path inside its hierarchy ("/a/b"),
     * and the hierarchy's mount point; NULL where the controller is not
     * mounted (then its limits are not applied, and said so once). */
    char *parent[CG_COUNT];
    char *mount[CG_COUNT];
    char *counter_dir[CG_COUNT];  /* v1: <mount><parent>, made by cgroupfs_counter_roots */
};

/* The daemon's own cgroups, and the mounts, are read below proc_root. */
int cgroupfs_open(struct cgroupfs *c, const char *proc_root, const char *cgroup_parent, char *err,
                  size_t err_len);
void cgroupfs_close(struct cgroupfs *c);

/* Make user-UID in every controller (if missing) and set limits on it.
 * 0, or -1 with err; 1 when v1 refused the memory limit because the user
 * holds more and it cannot be reclaimed: the memory is held where it is,
 * and err says so (call again to lower it as usage falls). */
int cgroupfs_apply(struct cgroupfs *c, uid_t uid, const struct limits *l, char *err,
                   size_t err_len);
/* Move a process into its user's cgroup in every controller. */
int cgroupfs_attach(struct cgroupfs *c, uid_t uid, pid_t pid, char *err, size_t err_len);
/* Remove user-UID everywhere if no process is left in it; 1 if removed. */
int cgroupfs_remove_if_empty(struct cgroupfs *c, uid_t uid);

/* --release (package removal): move every process of user-UID into the
 * cgroup above the parent, in every hierarchy written (where the
 * processes came from is not known), and remove user-UID everywhere; 0
 * when it is gone, -1 with err naming what stayed and why. */
int cgroupfs_release_user(struct cgroupfs *c, uid_t uid, char *err, size_t err_len);
/* --release, after every user: remove the parent, which the daemon makes
 * at every start, in every hierarchy (never a hierarchy's root); -1 with
 * err when it stays. */
int cgroupfs_release_parent(struct cgroupfs *c, char *err, size_t err_len);

/* Where the sampler reads the per-user counters (counters_open's
 * argument): on v1 "<mount><parent>" of cpuacct, memory and pids (NULL
 * where absent); on v2 the one parent directory.  The strings stay valid
 * while c is open. */
void cgroupfs_counter_roots(struct cgroupfs *c, struct counter_roots *roots);

/* What open could not set up (a v2 controller missing, say), for the
 * daemon to say once; "" when nothing. */
const char *cgroupfs_warning(const struct cgroupfs *c);

/* The daemon's own cgroup path in a v1 controller, from
 * proc_root/self/cgroup. */
int cgroupfs_own_path(const char *proc_root, const char *controller, char *buf, size_t len);

#endif
