/* Whose a uid is.  Rootless containers (podman, apptainer with user
 * namespaces, unshare --map-auto) run a person's processes under
 * subordinate uids, 100000 and up, that newuidmap grants from
 * /etc/subuid ("name:first:count" a line).  Judged by their own uids,
 * one person would get a fresh share for every uid of their range; so
 * the sampler counts such processes for the owner of the range.
 *
 * Why /etc/subuid and not the audit login uid (/proc/PID/loginuid):
 * newuidmap itself grants ranges from this file, so it says exactly
 * whose every subordinate uid is, for processes started by cron, at,
 * systemd --user or a login alike; the login uid is set only where
 * pam_loginuid runs, and is inherited into processes that are not the
 * login user's (sudo, su). */
#ifndef LOGINGUARD_SUBUID_H
#define LOGINGUARD_SUBUID_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

struct subuid_range {
    uid_t first;
    uid_t count;
    uid_t owner;
};

struct subuid_map {
    struct subuid_range *ranges;   /* sorted by first, not overlapping */
    size_t count;
    size_t skipped;                /* lines not understood, unknown names, overlaps */
    dev_t dev;                     /* the file as last read, to see a change */
    ino_t ino;
    struct timespec mtime;
    off_t size;
    bool present;
};

/* Parse text (the file's contents): "name:first:count" or
 * "uid:first:count" a line; names are resolved with getpwnam_r.  A line
 * that is not understood, names nobody, or overlaps an earlier range is
 * skipped and counted.  Replaces m's ranges. */
void subuid_parse(struct subuid_map *m, const char *text, size_t len);

/* Read path (the environment's subuid, base/environment.h) again if it
 * changed since the last call (or was never read).  Returns 1 when the ranges changed, else 0.  A missing file is
 * no ranges. */
int subuid_refresh(struct subuid_map *m, const char *path);

/* The owner of uid's range, or uid itself when it is in none. */
uid_t subuid_owner(const struct subuid_map *m, uid_t uid);

void subuid_free(struct subuid_map *m);

#endif
