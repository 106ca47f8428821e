/* In a child of the daemon that acts as a user (a desktop notice, a
 * Slurm check): become that user for good, with their groups, before
 * anything of theirs is touched or run. */
#ifndef LOGINGUARD_BECOME_USER_H
#define LOGINGUARD_BECOME_USER_H

#include <stdbool.h>
#include <sys/types.h>

/* name and gid from the user's passwd entry; parent: the daemon's pid
 * (the child must still end with it).  False when any step failed or
 * root is still within reach. */
bool become_user(const char *name, uid_t uid, gid_t gid, pid_t parent);

#endif
