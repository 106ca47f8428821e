/* Following the event log as it is written (loginguardctl events
 * --follow), across logrotate's ways of rotating it, woken by inotify:
 *   create        the file is renamed and a new one made; the daemon
 *                 goes on writing the old one until its SIGHUP, so the
 *                 old one is read to its end, and left only once the new
 *                 one has something in it (or the old one is deleted);
 *   copytruncate  the file is copied and cut to nothing: read again
 *                 from its start once it is shorter than what was read,
 *                 or no longer has a line end where the last read ended.
 * A line that is not yet whole is held until it is (event_lines.h). */
#ifndef LOGINGUARD_EVENT_FOLLOW_H
#define LOGINGUARD_EVENT_FOLLOW_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "event_lines.h"

struct event_source {
    int fd;      /* -1: none */
    int wd;      /* its inotify watch, or -1 */
    dev_t dev;
    ino_t ino;
    off_t offset;
    struct event_lines lines;
};

struct event_follow {
    char *path;
    const char *proc_root; /* the host's /proc: a file is watched as its fd there */
    int inotify;
    int dir_wd;
    struct event_source cur;  /* what is read; fd -1 until the log exists */
    struct event_source next; /* a new file at the path while cur may still grow */
    event_line_fn *fn;
    void *arg;
    uint64_t dropped;  /* lines never ended: cut by a rotation or a truncation */
    uint64_t oversized; /* of the files left behind (cur.lines counts its own) */
    uint64_t rotations, truncations;
};

/* Start following path: its lines from the start with from_start, else
 * only those written from now on.  The file may not exist yet.  0, or -1
 * with errno (the directory cannot be watched, the file cannot be read);
 * f->path says which.  proc_root is the host's /proc (kept, not copied):
 * the file itself, not whatever its name comes to mean, is watched
 * through its descriptor there. */
int event_follow_open(struct event_follow *f, const char *proc_root, const char *path,
                      bool from_start, event_line_fn *fn, void *arg);
/* Wait up to timeout_ms (-1: for ever) for the log to change, then pass
 * on every line written since.  1 if woken, 0 on the timeout, -1 with
 * errno (the new file after a rotation cannot be read, say). */
int event_follow_step(struct event_follow *f, int timeout_ms);
uint64_t event_follow_oversized(const struct event_follow *f);
void event_follow_close(struct event_follow *f);

#endif
