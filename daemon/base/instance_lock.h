/* One loginguardd per node.  Two would fight over the same cgroups (one
 * sets a level's quota, the other writes the share back) and the same
 * state file.  So the daemon locks what it would share with another:
 * its state directory always, and in enforce mode the directory of the
 * cgroups it writes (the cgroupfs parent, or user.slice under systemd).
 * The lock is flock(2) on the directory itself: nothing is written
 * there, the kernel drops it when the daemon dies however it dies, and
 * /proc/locks names the holder, so a second instance can say whose it
 * is. */
#ifndef LOGINGUARD_INSTANCE_LOCK_H
#define LOGINGUARD_INSTANCE_LOCK_H

#include <stddef.h>
#include <sys/types.h>

/* Lock directory path for this process (what: "state directory",
 * "cgroup parent", for the message; the holder is looked up in
 * proc_root/locks).  Returns a descriptor that holds the
 * lock, or -1 with err naming the other instance's pid where it can be
 * found and what to do. */
int instance_lock(const char *proc_root, const char *path, const char *what, char *err,
                  size_t err_len);

/* The pid holding an flock on the file (dev, ino), from the text of
 * /proc/locks; 0 when none is listed. */
pid_t instance_lock_holder(const char *locks, size_t len, dev_t dev, ino_t ino);

#endif
