#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "enforce/cgroup_release.h"

static int open_procs(int dirfd, int flags)
{
    return openat(dirfd, "cgroup.procs", flags | O_CLOEXEC | O_NOFOLLOW);
}

/* One pid into to's cgroup.procs: 0 when moved or already gone. */
static int move_one(int to, long pid)
{
    char text[24];
    int n = snprintf(text, sizeof(text), "%ld", pid);
    if (write(to, text, (size_t)n) == n || errno == ESRCH)
        return 0;
    return -1;
}

/* The kernel's PID_MAX_LIMIT on 64-bit: no pid is larger. */
#define PID_CEILING 4194304L

/* A pid as cgroup.procs has it: digits only, 1 to PID_CEILING; a token
 * that is anything else is skipped. */
struct pid_token {
    long value;
    bool digits, bad;
};

static void token_add(struct pid_token *t, char ch)
{
    if (ch < '0' || ch > '9' || t->value > PID_CEILING) {
        t->bad = true;
        return;
    }
    t->value = t->value * 10 + (ch - '0');
    t->digits = true;
}

static bool token_pid(const struct pid_token *t)
{
    return t->digits && !t->bad && t->value > 0 && t->value <= PID_CEILING;
}

long cgroup_move_procs(int from_fd, int to_fd, int *failed_pid)
{
    int from = open_procs(from_fd, O_RDONLY);
    int to = from >= 0 ? open_procs(to_fd, O_WRONLY) : -1;
    if (to < 0) {
        int e = errno;
        if (from >= 0)
            close(from);
        *failed_pid = 0;
        errno = e;
        return -1;
    }
    long listed = 0;
    int rc = 0;
    struct pid_token t = {0, false, false};
    char buf[4096];
    ssize_t n;
    while (rc == 0 && listed < RELEASE_PIDS_A_ROUND && (n = read(from, buf, sizeof(buf))) > 0) {
        for (ssize_t i = 0; i < n && rc == 0 && listed < RELEASE_PIDS_A_ROUND; i++) {
            if (buf[i] != '\n') {
                token_add(&t, buf[i]);
                continue;
            }
            if (token_pid(&t)) {
                listed++;
                if (move_one(to, t.value) < 0) {
                    *failed_pid = (int)t.value;
                    rc = -1;
                }
            }
            t = (struct pid_token){0, false, false};
        }
    }
    int e = errno;
    close(from);
    close(to);
    errno = e;
    return rc < 0 ? -1 : listed;
}

/* One round over the levels where name is still there: move what it
 * holds, then try to remove it.  Returns how many levels still have it,
 * or -1 with err on an error that another round would not mend. */
static int release_round(const struct release_level *lv, size_t n, const char *name,
                         int (*remove)(int, const char *), long *listed, int *busy_errno,
                         size_t *stuck, char *err, size_t err_len)
{
    int left = 0;
    for (size_t i = 0; i < n; i++) {
        int fd = openat(lv[i].parent_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0 && errno == ENOENT)
            continue;
        if (fd < 0) {
            snprintf(err, err_len, "cannot open %s/%s: %s", lv[i].parent_dir, name,
                     strerror(errno));
            return -1;
        }
        int pid = 0;
        long moved = cgroup_move_procs(fd, lv[i].dest_fd, &pid);
        int e = errno;
        close(fd);
        if (moved < 0) {
            snprintf(err, err_len, "cannot move %s %d from %s/%s into %s: %s%s",
                     pid ? "process" : "the processes (cgroup.procs)", pid, lv[i].parent_dir,
                     name, lv[i].dest_dir, strerror(e),
                     e == EBUSY ? " (cgroup v2 lets processes into no cgroup but the root that "
                                  "gives controllers to its children: set cgroup_parent to a "
                                  "cgroup just below the root, such as /loginguard)"
                                : "");
            return -1;
        }
        *listed += moved;
        if (remove(lv[i].parent_fd, name) == 0 || errno == ENOENT)
            continue;
        if (errno != EBUSY && errno != ENOTEMPTY) {
            snprintf(err, err_len, "cannot remove %s/%s: %s", lv[i].parent_dir, name,
                     strerror(errno));
            return -1;
        }
        *busy_errno = errno;
        *stuck = i;
        left++;
    }
    return left;
}

int cgroup_release_child(const struct release_level *levels, size_t n, const char *name,
                         int (*remove)(int dirfd, const char *name), char *err, size_t err_len)
{
    long listed = 0;
    int busy = 0;
    size_t stuck = 0;
    for (int round = 0; round < RELEASE_ROUNDS; round++) {
        long this_round = 0;
        int left = release_round(levels, n, name, remove, &this_round, &busy, &stuck, err,
                                 err_len);
        if (left <= 0)
            return left;
        listed += this_round;
    }
    snprintf(err, err_len,
             "kept %s/%s: %s after %d rounds that moved %ld processes out of it into %s (a "
             "process forking faster than it can be moved, or a cgroup below it that loginguard "
             "did not make); its limits are lifted; move or end its processes, then rmdir it",
             levels[stuck].parent_dir, name, strerror(busy), RELEASE_ROUNDS, listed,
             levels[stuck].dest_dir);
    return -1;
}

const char *cgroup_release_name(const char *path, char *buf, size_t len)
{
    size_t end = strlen(path);
    while (end > 0 && path[end - 1] == '/')
        end--;
    size_t start = end;
    while (start > 0 && path[start - 1] != '/')
        start--;
    if (end == start || end - start >= len || (end - start == 1 && path[start] == '.'))
        return NULL;
    memcpy(buf, path + start, end - start);
    buf[end - start] = '\0';
    return buf;
}
