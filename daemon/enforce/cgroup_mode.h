/* Which cgroup layout the host has, for the cgroupfs backend: the v1
 * controllers it needs on their own hierarchies (pure v1, or the hybrid
 * layout where a cgroup2 mount carries none of them), or one unified
 * cgroup v2 tree. */
#ifndef LOGINGUARD_CGROUP_MODE_H
#define LOGINGUARD_CGROUP_MODE_H

#include <stddef.h>
#include <stdio.h>

enum cgroup_mode { CGROUP_MODE_NONE, CGROUP_MODE_V1, CGROUP_MODE_V2 };

/* From the text of a mountinfo file: V1 when any of cpu, cpuacct, memory
 * or pids is mounted as a v1 hierarchy (hybrid hosts included: their
 * cgroup2 mount has none of them), else V2 when a cgroup2 file system is
 * mounted (its mount point goes to v2_mount), else NONE. */
enum cgroup_mode cgroup_mode_parse(FILE *mountinfo, char *v2_mount, size_t len);

/* The same for this process, from proc_root/self/mountinfo. */
enum cgroup_mode cgroup_mode_detect(const char *proc_root, char *v2_mount, size_t len);

/* The cgroup v2 path ("/a/b") of the "0::" line of a /proc/PID/cgroup
 * file.  Returns 0, or -1 when the file has no such line. */
int cgroup_own_v2_path(const char *proc_cgroup, char *buf, size_t len);

#endif
