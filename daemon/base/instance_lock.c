#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "base/instance_lock.h"

/* A line of /proc/locks:
 *   "12: FLOCK  ADVISORY  WRITE 4242 00:1f:12345 0 EOF"
 * (a blocked waiter's line has "->" after the number). */
static pid_t holder_on_line(const char *line, dev_t dev, ino_t ino)
{
    char kind[16], mode[16], access[16];
    long pid;
    unsigned major, minor;
    uintmax_t inode;
    if (strstr(line, "->") ||
        sscanf(line, "%*d: %15s %15s %15s %ld %x:%x:%ju", kind, mode, access, &pid, &major,
               &minor, &inode) != 7)
        return 0;
    if (strcmp(kind, "FLOCK") != 0 || major != major(dev) || minor != minor(dev) ||
        inode != (uintmax_t)ino || pid <= 0 || pid > INT32_MAX)
        return 0;
    return (pid_t)pid;
}

pid_t instance_lock_holder(const char *locks, size_t len, dev_t dev, ino_t ino)
{
    char line[256];
    for (const char *p = locks, *end = locks + len; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = (size_t)((nl ? nl : end) - p);
        if (n < sizeof(line)) {
            memcpy(line, p, n);
            line[n] = '\0';
            pid_t pid = holder_on_line(line, dev, ino);
            if (pid)
                return pid;
        }
        p += n + 1;
    }
    return 0;
}

static pid_t find_holder(const char *proc_root, int fd)
{
    struct stat st;
    if (fstat(fd, &st) < 0)
        return 0;
    char path[4096];
    snprintf(path, sizeof(path), "%s/locks", proc_root);
    int locks = open(path, O_RDONLY | O_CLOEXEC);
    if (locks < 0)
        return 0;
    size_t cap = 1 << 20, used = 0;
    char *text = malloc(cap);
    ssize_t n;
    while (text && used < cap && (n = read(locks, text + used, cap - used)) > 0)
        used += (size_t)n;
    close(locks);
    pid_t pid = text ? instance_lock_holder(text, used, st.st_dev, st.st_ino) : 0;
    free(text);
    return pid;
}

int instance_lock(const char *proc_root, const char *path, const char *what, char *err,
                  size_t err_len)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, err_len, "cannot open the %s %s to lock it: %s", what, path,
                 strerror(errno));
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) == 0)
        return fd;
    int e = errno;
    pid_t holder = e == EWOULDBLOCK ? find_holder(proc_root, fd) : 0;
    close(fd);
    if (e != EWOULDBLOCK)
        snprintf(err, err_len, "cannot lock the %s %s: %s", what, path, strerror(e));
    else if (holder)
        snprintf(err, err_len,
                 "another loginguardd (pid %d) already uses the %s %s; two would undo each "
                 "other's limits: stop that one first (systemctl stop loginguard, or kill %d)",
                 (int)holder, what, path, (int)holder);
    else
        snprintf(err, err_len,
                 "another loginguardd already uses the %s %s (its pid is not listed in "
                 "%s/locks); stop it first",
                 what, path, proc_root);
    return -1;
}
