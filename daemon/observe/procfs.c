#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "observe/procfs.h"
#include "util.h"

static const char *last_paren(const char *buf, size_t len)
{
    for (size_t i = len; i > 0; i--)
        if (buf[i - 1] == ')')
            return buf + i - 1;
    return NULL;
}

/* Parse a decimal field; advance *p past it and one following space. */
static int next_number(const char **p, const char *end, int64_t *out)
{
    const char *s = *p;
    bool negative = false;
    if (s < end && *s == '-') {
        negative = true;
        s++;
    }
    if (s >= end || *s < '0' || *s > '9')
        return -1;
    uint64_t v = 0;
    while (s < end && *s >= '0' && *s <= '9') {
        /* No field the kernel writes comes near; more is not a stat line. */
        if (v > (uint64_t)(INT64_MAX - (*s - '0')) / 10)
            return -1;
        v = v * 10 + (uint64_t)(*s - '0');
        s++;
    }
    if (s < end && *s != ' ' && *s != '\n')
        return -1;
    if (s < end)
        s++;
    *p = s;
    *out = negative ? -(int64_t)v : (int64_t)v;
    return 0;
}

int procfs_parse_stat(const char *buf, size_t len, struct proc_stat *out)
{
    const char *end = buf + len;
    const char *open = memchr(buf, '(', len);
    const char *close = last_paren(buf, len);
    if (!open || !close || close < open || close + 4 > end || close[1] != ' ')
        return -1;

    const char *p = buf;
    int64_t v;
    if (next_number(&p, open, &v) < 0 || p != open || v <= 0 || v > INT32_MAX)
        return -1;
    memset(out, 0, sizeof(*out));
    out->pid = (pid_t)v;
    size_t comm_len = (size_t)(close - open - 1);
    if (comm_len >= COMM_LEN)
        comm_len = COMM_LEN - 1;
    memcpy(out->comm, open + 1, comm_len);
    out->comm[comm_len] = '\0';

    p = close + 2;
    out->state = *p;
    p += 2;
    /* Fields 4.. as numbered in proc(5). */
    int64_t f[25];
    for (int i = 4; i <= 24; i++) {
        if (next_number(&p, end, &f[i]) < 0)
            return -1;
    }
    out->ppid = (pid_t)f[4];
    out->session = (pid_t)f[6];
    out->tty_nr = (int)f[7];
    out->utime = (uint64_t)f[14];
    out->stime = (uint64_t)f[15];
    out->num_threads = (uint64_t)f[20];
    out->start_time = (uint64_t)f[22];
    out->rss_pages = f[24] > 0 ? (uint64_t)f[24] : 0;
    return 0;
}

ssize_t procfs_pread(int fd, char *buf, size_t len)
{
    ssize_t n;
    do {
        n = pread(fd, buf, len, 0);
    } while (n < 0 && errno == EINTR);
    return n;
}

bool procfs_read_process(int proc_fd, pid_t pid, uid_t *uid, struct proc_stat *st)
{
    char name[24], buf[1024];
    snprintf(name, sizeof(name), "%d", (int)pid);
    int dirfd = openat(proc_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (dirfd < 0)
        return false;
    struct stat dir_st;
    int fd = openat(dirfd, "stat", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    ssize_t n = fd >= 0 ? procfs_pread(fd, buf, sizeof(buf) - 1) : -1;
    bool ok = n > 0 && fstat(dirfd, &dir_st) == 0 &&
              procfs_parse_stat(buf, (size_t)n, st) == 0 && st->pid == pid;
    if (fd >= 0)
        close(fd);
    close(dirfd);
    *uid = ok ? dir_st.st_uid : 0;
    return ok;
}
