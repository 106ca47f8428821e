#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "base/environment.h"
#include "observe/shm_fds.h"
#include "observe/shm_held.h"
#include "util.h"

#define MOUNTS_EVERY_USEC (1000 * 1000)
#define DELETED " (deleted)"

/* ------------------------------------------------------------ mounts */

static void add_mount(struct shm_mounts *m, int id, dev_t dev)
{
    m->list = grow_array(m->list, m->count, &m->capacity, sizeof(*m->list));
    m->list[m->count++] = (struct shm_mount){id, dev};
}

static int fdinfo_mnt_id(int fdinfo_dir, const char *name)
{
    char buf[512];
    int fd = openat(fdinfo_dir, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    const char *at = strstr(buf, "\nmnt_id:");
    int id;
    return at && sscanf(at + 8, "%d", &id) == 1 ? id : -1;
}

/* The kernel's own shared-memory mount, where every memfd lives: its id
 * and device, from a memfd of our own (the real /proc's view of it,
 * whatever /proc the requests read). */
static void add_kernel_mount(struct shm_mounts *m)
{
    int fd = memfd_create("loginguard-probe", MFD_CLOEXEC);
    if (fd < 0)
        return;
    struct stat st;
    char path[64];
    snprintf(path, sizeof(path), "%s/self/fdinfo", environment_host_proc);
    int dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    char name[16];
    snprintf(name, sizeof(name), "%d", fd);
    int id = dir >= 0 ? fdinfo_mnt_id(dir, name) : -1;
    if (id >= 0 && fstat(fd, &st) == 0)
        add_mount(m, id, st.st_dev);
    if (dir >= 0)
        close(dir);
    close(fd);
}

/* One mountinfo line ("id parent major:minor root point options ... -
 * fstype source ..."): a tmpfs mount onto the list. */
static void add_if_tmpfs(struct shm_mounts *m, const char *line)
{
    int id;
    unsigned major, minor;
    const char *dash = strstr(line, " - ");
    if (dash && strncmp(dash + 3, "tmpfs ", 6) == 0 &&
        sscanf(line, "%d %*d %u:%u", &id, &major, &minor) == 3)
        add_mount(m, id, makedev(major, minor));
}

/* PID 1's tmpfs mounts (the same ones shm_held walks), or the helper's
 * own where PID 1's cannot be read. */
static void add_tmpfs_mounts(struct shm_mounts *m, int proc_fd)
{
    int fd = openat(proc_fd, "1/mountinfo", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        fd = openat(proc_fd, "self/mountinfo", O_RDONLY | O_CLOEXEC);
    FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
    if (!f) {
        if (fd >= 0)
            close(fd);
        return;
    }
    char line[4096];
    bool whole = true; /* the last piece ended its line */
    while (m->count < SHM_MOUNTS_MAX && fgets(line, sizeof(line), f)) {
        /* A line longer than the buffer is left out, not read as lines. */
        bool starts = whole;
        whole = strchr(line, '\n') != NULL;
        if (starts && whole)
            add_if_tmpfs(m, line);
    }
    fclose(f);
}

void shm_mounts_refresh(struct shm_mounts *m, int proc_fd)
{
    uint64_t now = now_boottime_usec();
    if (m->read_at && now - m->read_at < MOUNTS_EVERY_USEC)
        return;
    m->read_at = now;
    m->count = 0;
    add_kernel_mount(m);
    add_tmpfs_mounts(m, proc_fd);
}

void shm_mounts_free(struct shm_mounts *m)
{
    free(m->list);
    memset(m, 0, sizeof(*m));
}

static const struct shm_mount *find_mount(const struct shm_mounts *m, int id)
{
    for (size_t i = 0; i < m->count; i++)
        if (m->list[i].id == id)
            return &m->list[i];
    return NULL;
}

/* ------------------------------------------------------------ descriptors */

/* Whether descriptor name may be a file with no name: its link ends in
 * " (deleted)", or cannot be read whole (a path near PATH_MAX long, which
 * a user can make).  False for one closed meanwhile. */
static bool may_be_nameless(int fd_dir, const char *name)
{
    char link[PATH_MAX + 1];
    ssize_t n = readlinkat(fd_dir, name, link, sizeof(link));
    if (n < 0)
        return errno != ENOENT;
    size_t tail = sizeof(DELETED) - 1;
    if ((size_t)n == sizeof(link))
        return true;
    return (size_t)n >= tail && memcmp(link + n - tail, DELETED, tail) == 0;
}

static void add_object(struct shm_fds_reply *out, const struct shm_fd_object *o)
{
    for (uint32_t i = 0; i < out->count; i++)
        if (out->objects[i].dev == o->dev && out->objects[i].ino == o->ino)
            return;
    out->objects[out->count++] = *o;
}

/* Descriptor name, if it holds shared memory with no name. */
static void look_at(int fd_dir, int *fdinfo_dir, int dir, const struct shm_mounts *m,
                    const char *name, struct shm_fds_reply *out)
{
    if (!may_be_nameless(fd_dir, name))
        return;
    if (*fdinfo_dir < 0)
        *fdinfo_dir = openat(dir, "fdinfo", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    const struct shm_mount *mount =
        *fdinfo_dir >= 0 ? find_mount(m, fdinfo_mnt_id(*fdinfo_dir, name)) : NULL;
    struct statx sx;
    if (!mount || statx(fd_dir, name, AT_STATX_DONT_SYNC | AT_NO_AUTOMOUNT,
                        STATX_NLINK | STATX_INO | STATX_BLOCKS, &sx) != 0)
        return;
    bool blocks = (sx.stx_mask & STATX_BLOCKS) && (sx.stx_mask & STATX_NLINK);
    if (!blocks || makedev(sx.stx_dev_major, sx.stx_dev_minor) != mount->dev ||
        sx.stx_nlink != 0 || sx.stx_blocks == 0)
        return;
    struct shm_fd_object o = {
        .dev = mount->dev, .ino = sx.stx_ino, .bytes = sx.stx_blocks * 512,
    };
    add_object(out, &o);
}

/* The descriptors from `from` on, in order: /proc/PID/fd lists a
 * descriptor n at directory offset n + 2, so a walk that stopped goes on
 * there without listing those before it again. */
int shm_fds_read(int dir, const struct shm_mounts *m, int from, uint32_t budget,
                 struct shm_fds_reply *out)
{
    memset(out, 0, offsetof(struct shm_fds_reply, objects));
    out->next_fd = -1;
    int fd_dir = openat(dir, "fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (fd_dir < 0)
        return -1;
    int fdinfo_dir = -1;
    char buf[8192];
    ssize_t n = lseek(fd_dir, (off_t)from + 2, SEEK_SET) < 0 ? -1 : 0;
    while (n >= 0 && out->next_fd < 0 && (n = getdents64(fd_dir, buf, sizeof(buf))) > 0) {
        for (ssize_t at = 0; at < n;) {
            const struct dirent64 *e = (const struct dirent64 *)(buf + at);
            at += e->d_reclen;
            char *end;
            long fd = strtol(e->d_name, &end, 10);
            if (*end || end == e->d_name || fd < from || fd > INT32_MAX)
                continue;
            if (out->looked == budget || out->count == SHM_FDS_OBJECTS) {
                out->next_fd = (int32_t)fd;
                break;
            }
            out->looked++;
            look_at(fd_dir, &fdinfo_dir, dir, m, e->d_name, out);
        }
    }
    if (fdinfo_dir >= 0)
        close(fdinfo_dir);
    close(fd_dir);
    return n < 0 && out->looked == 0 ? -1 : 0;
}
