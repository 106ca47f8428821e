#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "argv_reader.h"
#include "procfs.h"
#include "programs.h"
#include "snapshot.h"
#include "util.h"

#define ARGV_CAP (256 * 1024)

int argv_reader_start(struct argv_reader *r, const char *proc_root, char *err, size_t err_len)
{
    memset(r, 0, sizeof(*r));
    r->proc_fd = open(proc_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (r->proc_fd < 0) {
        snprintf(err, err_len, "cannot open %s", proc_root);
        return -1;
    }
    return 0;
}

void argv_reader_stop(struct argv_reader *r)
{
    if (r->proc_fd >= 0)
        close(r->proc_fd);
    free(r->queue);
    memset(r, 0, sizeof(*r));
    r->proc_fd = -1;
}

int argv_reader_request(struct argv_reader *r, pid_t pid, uint64_t start_time)
{
    r->queue = grow_array(r->queue, r->count, &r->capacity, sizeof(*r->queue));
    r->queue[r->count++] = (struct argv_pending){pid, start_time};
    return 0;
}

static void read_one(int proc_fd, const struct argv_pending *q, struct argv_answer *a, char *buf)
{
    char name[32];
    snprintf(name, sizeof(name), "%d", (int)q->pid);
    a->pid = q->pid;
    a->start_time = q->start_time;
    a->status = ARGV_GONE;
    int dirfd = openat(proc_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (dirfd < 0)
        return;
    char stat[1024];
    struct proc_stat st;
    int fd = openat(dirfd, "stat", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, stat, sizeof(stat)) : -1;
    if (fd >= 0)
        close(fd);
    if (n <= 0 || procfs_parse_stat(stat, (size_t)n, &st) < 0 || st.start_time != q->start_time) {
        close(dirfd);
        return;
    }
    fd = openat(dirfd, "cmdline", O_RDONLY | O_CLOEXEC);
    close(dirfd);
    if (fd < 0)
        return;
    size_t used = 0;
    while (used < ARGV_CAP && (n = read(fd, buf + used, ARGV_CAP - used)) > 0)
        used += (size_t)n;
    close(fd);
    if (used > 0 && buf[used - 1] == '\0')
        used--;
    a->status = ARGV_OK;
    a->argv = buf;
    a->len = used < ARGV_KEEP ? used : ARGV_KEEP;
    a->total = used;
    sha256_hex(buf, used, a->sha256);
}

int argv_reader_poll(struct argv_reader *r, uint64_t now, uint64_t wait_usec,
                     void (*fn)(const struct argv_answer *a, void *arg), void *arg)
{
    (void)now;
    (void)wait_usec;
    char *buf = xmalloc(ARGV_CAP);
    for (size_t i = 0; i < r->count; i++) {
        struct argv_answer a = {0};
        read_one(r->proc_fd, &r->queue[i], &a, buf);
        fn(&a, arg);
    }
    r->count = 0;
    free(buf);
    return 0;
}

int argv_reader_fd(const struct argv_reader *r)
{
    (void)r;
    return -1;
}

uint64_t argv_reader_deadline(const struct argv_reader *r)
{
    (void)r;
    return 0;
}
