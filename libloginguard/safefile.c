#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "safefile.h"
#include "util.h"

static int write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

/* text into DIR/TMP, on disk before the caller renames it: a rename that
 * reached the disk before the data would leave an empty file after a
 * power cut. */
static int write_tmp(int dirfd, const char *dir, const char *tmp, const char *text, size_t len,
                     const char *end, mode_t mode, bool sync, char *err, size_t err_len)
{
    /* A leftover of a crash, or something planted there: removed, never
     * written through.  With O_EXCL the open neither follows a symlink
     * nor truncates a hard link to some other file, as O_TRUNC on an
     * existing name would. */
    if (unlinkat(dirfd, tmp, 0) < 0 && errno != ENOENT) {
        snprintf(err, err_len, "%s/%s: cannot remove the old temporary file: %s; remove it by hand",
                 dir, tmp, strerror(errno));
        return -1;
    }
    int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0) {
        snprintf(err, err_len,
                 "%s/%s: cannot create: %s; check that %s is a directory root can write", dir,
                 tmp, strerror(errno), dir);
        return -1;
    }
    /* The mode whatever the daemon's umask. */
    int rc = fchmod(fd, mode) < 0 || write_all(fd, text, len) < 0 ||
                     write_all(fd, end, strlen(end)) < 0 || (sync && fsync(fd) < 0)
                 ? -1
                 : 0;
    int e = errno;
    if (close(fd) < 0 && rc == 0) {
        rc = -1;
        e = errno;
    }
    if (rc < 0) {
        unlinkat(dirfd, tmp, 0);
        snprintf(err, err_len, "%s/%s: cannot write: %s; check the space left on its file system",
                 dir, tmp, strerror(e));
    }
    return rc;
}

int safe_write_file(int dirfd, const char *dir, const char *name, const char *text, char *err,
                    size_t err_len)
{
    char *tmp = xasprintf("%s.tmp", name);
    int rc = -1;
    /* 0600: who is penalised, and what they were told, is for root to
     * read. */
    if (write_tmp(dirfd, dir, tmp, text, strlen(text), "\n", 0600, true, err, err_len) < 0) {
        /* err is set */
    } else if (renameat(dirfd, tmp, dirfd, name) < 0) {
        snprintf(err, err_len, "%s/%s: cannot replace it with %s: %s; check that it is not a directory",
                 dir, name, tmp, strerror(errno));
        unlinkat(dirfd, tmp, 0);
    } else if (fsync(dirfd) < 0) {
        /* The new file is in place, but its name may not be on disk. */
        snprintf(err, err_len,
                 "%s: cannot sync the directory: %s; what was saved may not survive a power cut",
                 dir, strerror(errno));
    } else {
        rc = 0;
    }
    free(tmp);
    return rc;
}

int safe_publish_file(int dirfd, const char *dir, const char *name, const char *text,
                      size_t len, char *err, size_t err_len)
{
    char *tmp = xasprintf("%s.tmp", name);
    int rc = write_tmp(dirfd, dir, tmp, text, len, "", 0644, false, err, err_len);
    if (rc == 0 && renameat(dirfd, tmp, dirfd, name) < 0) {
        snprintf(err, err_len, "%s/%s: cannot replace it with %s: %s; check that it is not a directory",
                 dir, name, tmp, strerror(errno));
        unlinkat(dirfd, tmp, 0);
        rc = -1;
    }
    free(tmp);
    return rc;
}

/* All of fd into *out (NUL-terminated).  0, -1 with errno, or 1 if the
 * file is larger than max (*out is then left alone). */
static int read_all(int fd, size_t max, char **out, size_t *len)
{
    size_t used = 0, cap = 4096;
    char *buf = xmalloc(cap);
    for (;;) {
        if (used > max) {
            free(buf);
            return 1;
        }
        if (used + 1 >= cap) {
            cap *= 2;
            buf = xreallocarray(buf, cap, 1);
        }
        ssize_t n = read(fd, buf + used, cap - used - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            free(buf);
            errno = e;
            return -1;
        }
        if (n == 0)
            break;
        used += (size_t)n;
    }
    buf[used] = '\0';
    *out = buf;
    *len = used;
    return 0;
}

/* DIR/NAME for reading if it is a regular file only we can change.
 * Returns the descriptor, -1 with err, or -2 if absent. */
static int open_own_file(int dirfd, const char *dir, const char *name, char *err, size_t err_len)
{
    /* O_NONBLOCK: a FIFO planted there must not hang the daemon. */
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT)
        return -2;
    if (fd < 0 && errno == ELOOP) {
        snprintf(err, err_len,
                 "%s/%s: is a symbolic link, which loginguardd does not follow; replace it with "
                 "the file itself, or remove it",
                 dir, name);
        return -1;
    }
    if (fd < 0) {
        snprintf(err, err_len, "%s/%s: cannot open: %s; check its owner and mode (root, 0600)", dir,
                 name, strerror(errno));
        return -1;
    }
    struct stat sb;
    const char *wrong = NULL;
    if (fstat(fd, &sb) < 0)
        wrong = strerror(errno);
    else if (!S_ISREG(sb.st_mode))
        wrong = "not a regular file";
    /* A file someone else can write would let them exempt themselves. */
    else if (sb.st_uid != geteuid() || (sb.st_mode & (S_IWGRP | S_IWOTH)))
        wrong = "owned by another user or writable by others";
    if (wrong) {
        snprintf(err, err_len,
                 "%s/%s: %s; remove it or make it a regular file owned by root, mode 0600", dir,
                 name, wrong);
        close(fd);
        return -1;
    }
    return fd;
}

int safe_read_file(int dirfd, const char *dir, const char *name, size_t max, char **text,
                   size_t *len, char *err, size_t err_len)
{
    int fd = open_own_file(dirfd, dir, name, err, err_len);
    if (fd < 0)
        return fd;
    int r = read_all(fd, max, text, len);
    if (r < 0)
        snprintf(err, err_len, "%s/%s: cannot read: %s; check the disk", dir, name,
                 strerror(errno));
    close(fd);
    return r;
}
