#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "event_follow.h"
#include "util.h"

#define FILE_EVENTS (IN_MODIFY | IN_ATTRIB | IN_MOVE_SELF | IN_DELETE_SELF)
#define DIR_EVENTS (IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE)

static void source_init(struct event_source *s)
{
    memset(s, 0, sizeof(*s));
    s->fd = -1;
    s->wd = -1;
}

static void source_close(struct event_follow *f, struct event_source *s)
{
    if (s->wd >= 0)
        inotify_rm_watch(f->inotify, s->wd); /* EINVAL once the file is gone: fine */
    if (s->fd >= 0)
        close(s->fd);
    f->oversized += s->lines.oversized;
    event_lines_free(&s->lines);
    source_init(s);
}

/* Open the file now at the path, watched by its inode (through the
 * descriptor: the path may be another file by then). */
static int source_open(struct event_follow *f, struct event_source *s)
{
    source_init(s);
    s->fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (s->fd < 0)
        return -1;
    struct stat st;
    if (fstat(s->fd, &st) < 0) {
        int e = errno;
        source_close(f, s);
        errno = e;
        return -1;
    }
    s->dev = st.st_dev;
    s->ino = st.st_ino;
    char self[512];
    snprintf(self, sizeof(self), "%s/self/fd/%d", f->proc_root, s->fd);
    s->wd = inotify_add_watch(f->inotify, self, FILE_EVENTS);
    return 0;
}

/* Begin at the end: lines written from now on.  A line being written
 * right now is not one of them. */
static void source_at_end(struct event_source *s)
{
    off_t end = lseek(s->fd, 0, SEEK_END);
    char last = '\n';
    s->offset = end > 0 ? end : 0;
    if (end > 0 && pread(s->fd, &last, 1, end - 1) == 1 && last != '\n')
        s->lines.skipping = true;
}

/* Cut short by copytruncate (and perhaps written again since): shorter
 * than what was read, or no line end where the last whole line ended. */
static bool truncated(const struct event_source *s, off_t size)
{
    if (size < s->offset)
        return true;
    char last;
    return s->offset > 0 && !event_lines_pending(&s->lines) &&
           pread(s->fd, &last, 1, s->offset - 1) == 1 && last != '\n';
}

/* Everything written to s since the last time. */
static void drain(struct event_follow *f, struct event_source *s)
{
    struct stat st;
    if (fstat(s->fd, &st) == 0 && truncated(s, st.st_size)) {
        f->truncations++;
        f->dropped += event_lines_drop(&s->lines);
        s->offset = 0;
    }
    char buf[65536];
    for (;;) {
        ssize_t n = pread(s->fd, buf, sizeof(buf), s->offset);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
        s->offset += n;
        event_lines_feed(&s->lines, buf, (size_t)n, f->fn, f->arg);
    }
}

static bool same_file(const struct event_source *s, const struct stat *st)
{
    return s->fd >= 0 && s->dev == st->st_dev && s->ino == st->st_ino;
}

/* The old file is done with once the daemon writes the new one (it has
 * reopened the path) or nobody can any more (deleted). */
static bool old_done(const struct event_follow *f)
{
    struct stat old, neu;
    return fstat(f->next.fd, &neu) == 0 && (neu.st_size > 0 ||
           (fstat(f->cur.fd, &old) == 0 && old.st_nlink == 0));
}

static int catch_up(struct event_follow *f)
{
    if (f->cur.fd >= 0)
        drain(f, &f->cur);
    struct stat st;
    if (stat(f->path, &st) < 0 || same_file(&f->cur, &st))
        return 0; /* renamed away and not made again yet, or no change */
    if (f->cur.fd < 0) {
        if (source_open(f, &f->cur) < 0)
            return errno == ENOENT ? 0 : -1;
        drain(f, &f->cur);
        return 0;
    }
    if (!same_file(&f->next, &st)) {
        source_close(f, &f->next);
        if (source_open(f, &f->next) < 0)
            return errno == ENOENT ? 0 : -1;
    }
    if (!old_done(f))
        return 0;
    drain(f, &f->cur); /* the last of the old file first */
    f->dropped += event_lines_drop(&f->cur.lines);
    source_close(f, &f->cur);
    f->cur = f->next;
    source_init(&f->next);
    f->rotations++;
    drain(f, &f->cur);
    return 0;
}

int event_follow_open(struct event_follow *f, const char *proc_root, const char *path,
                      bool from_start, event_line_fn *fn, void *arg)
{
    memset(f, 0, sizeof(*f));
    f->proc_root = proc_root;
    source_init(&f->cur);
    source_init(&f->next);
    f->path = xstrdup(path);
    f->fn = fn;
    f->arg = arg;
    f->inotify = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (f->inotify < 0)
        return -1;
    const char *slash = strrchr(path, '/');
    char *dir = slash ? xstrndup(path, slash == path ? 1 : (size_t)(slash - path)) : xstrdup(".");
    f->dir_wd = inotify_add_watch(f->inotify, dir, DIR_EVENTS | IN_ONLYDIR);
    int e = errno;
    free(dir);
    if (f->dir_wd < 0) {
        errno = e;
        return -1;
    }
    if (source_open(f, &f->cur) < 0)
        return errno == ENOENT ? 0 : -1;
    if (!from_start)
        source_at_end(&f->cur);
    drain(f, &f->cur);
    return 0;
}

int event_follow_step(struct event_follow *f, int timeout_ms)
{
    struct pollfd p = {.fd = f->inotify, .events = POLLIN};
    int r = poll(&p, 1, timeout_ms);
    if (r < 0)
        return errno == EINTR ? 0 : -1;
    if (r == 0)
        return 0;
    /* Which events they were does not matter: what changed is found by
     * looking. */
    char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    while (read(f->inotify, buf, sizeof(buf)) > 0)
        ;
    return catch_up(f) < 0 ? -1 : 1;
}

uint64_t event_follow_oversized(const struct event_follow *f)
{
    return f->oversized + f->cur.lines.oversized + f->next.lines.oversized;
}

void event_follow_close(struct event_follow *f)
{
    source_close(f, &f->next);
    source_close(f, &f->cur);
    if (f->inotify >= 0)
        close(f->inotify);
    free(f->path);
    memset(f, 0, sizeof(*f));
    f->inotify = -1;
}
