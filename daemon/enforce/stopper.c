#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/pidfd.h"
#include "enforce/stopper.h"
#include "util.h"

/* /proc/PID's owner when it is the process started at start_time, or
 * (uid_t)-1. */
static uid_t owner_if_same(const char *proc_root, pid_t pid, uint64_t start_time)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/%d", proc_root, (int)pid);
    int dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (dirfd < 0)
        return (uid_t)-1;
    struct stat st;
    char buf[1024];
    struct proc_stat ps;
    uid_t owner = (uid_t)-1;
    int fd = openat(dirfd, "stat", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd >= 0 && fstat(dirfd, &st) == 0) {
        ssize_t n = procfs_pread(fd, buf, sizeof(buf));
        if (n > 0 && procfs_parse_stat(buf, (size_t)n, &ps) == 0 && ps.pid == pid &&
            ps.start_time == start_time)
            owner = st.st_uid;
    }
    if (fd >= 0)
        close(fd);
    close(dirfd);
    return owner;
}

bool process_is(const char *proc_root, pid_t pid, uint64_t start_time)
{
    return owner_if_same(proc_root, pid, start_time) != (uid_t)-1;
}

/* Is the process behind pidfd still the one the sampler saw?  Read after
 * the pidfd exists: if /proc/PID still shows the same start time and
 * owner now, the pidfd refers to that process. */
static bool same_identity(const char *proc_root, const struct stop_target *t)
{
    return owner_if_same(proc_root, t->pid, t->start_time) == t->uid;
}

enum stop_result stopper_terminate(struct stopper *s, const char *proc_root,
                                   const struct stop_target *t, uint64_t grace_usec,
                                   uint64_t now)
{
    /* root is never stopped, whatever a caller got wrong. */
    if (t->uid == 0 || t->pid <= 1)
        return STOP_IDENTITY_CHANGED;
    int pidfd = pidfd_open_(t->pid);
    if (pidfd < 0)
        return errno == ESRCH ? STOP_GONE : STOP_FAILED;
    if (!same_identity(proc_root, t)) {
        close(pidfd);
        return STOP_IDENTITY_CHANGED;
    }
    if (pidfd_signal_(pidfd, SIGTERM) < 0) {
        int e = errno;
        close(pidfd);
        errno = e;
        return e == ESRCH ? STOP_GONE : STOP_FAILED;
    }
    s->pending = grow_array(s->pending, s->count, &s->capacity, sizeof(*s->pending));
    s->pending[s->count++] = (struct pending_stop){*t, pidfd, now + grace_usec};
    return STOP_SIGNALLED;
}

/* A pidfd polls readable once its process has exited. */
static bool exited(int pidfd)
{
    struct pollfd p = {.fd = pidfd, .events = POLLIN};
    return poll(&p, 1, 0) > 0;
}

uint64_t stopper_tick(struct stopper *s, uint64_t now, stop_report_fn *report, void *arg)
{
    uint64_t next = 0;
    size_t kept = 0;
    for (size_t i = 0; i < s->count; i++) {
        struct pending_stop *p = &s->pending[i];
        if (exited(p->pidfd)) {
            report(&p->target, STOP_EXITED, arg);
        } else if (now >= p->deadline) {
            pidfd_signal_(p->pidfd, SIGKILL);
            report(&p->target, STOP_KILLED, arg);
        } else {
            if (!next || p->deadline < next)
                next = p->deadline;
            s->pending[kept++] = *p;
            continue;
        }
        close(p->pidfd);
    }
    s->count = kept;
    return next;
}

void stopper_free(struct stopper *s)
{
    for (size_t i = 0; i < s->count; i++)
        close(s->pending[i].pidfd);
    free(s->pending);
    memset(s, 0, sizeof(*s));
}
