#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/environment.h"
#include "observe/shm_held.h"
#include "util.h"

void shm_held_init(struct shm_held *h, int proc_fd)
{
    memset(h, 0, sizeof(*h));
    h->proc_fd = proc_fd;
}

/* ------------------------------------------------------------ totals */

static struct shm_owner *find(const struct shm_usage *u, uid_t uid, size_t *at)
{
    size_t lo = 0, hi = u->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (u->owners[mid].uid < uid)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (at)
        *at = lo;
    return lo < u->count && u->owners[lo].uid == uid ? &u->owners[lo] : NULL;
}

static struct shm_owner *entry(struct shm_usage *u, uid_t uid)
{
    size_t at;
    struct shm_owner *o = find(u, uid, &at);
    if (!o) {
        u->owners = grow_array(u->owners, u->count, &u->capacity, sizeof(*u->owners));
        memmove(&u->owners[at + 1], &u->owners[at], (u->count - at) * sizeof(*u->owners));
        u->count++;
        o = &u->owners[at];
        *o = (struct shm_owner){.uid = uid};
    }
    return o;
}

static void add_held(struct shm_usage *u, uid_t uid, uint64_t bytes)
{
    entry(u, uid)->held += bytes;
}

static bool worth(const struct shm_owner *o)
{
    return o && o->held + o->fds >= SHM_HELD_MIN;
}

bool shm_held_worth_reading(const struct shm_held *h, uid_t uid)
{
    const struct shm_owner *o = find(&h->owners, uid, NULL);
    return worth(o) && o->mapped_reads < SHM_READS_PER_OWNER;
}

bool shm_held_set_fds(struct shm_held *h, uid_t uid, uint64_t bytes)
{
    struct shm_owner *o = find(&h->owners, uid, NULL);
    if (!o && bytes == 0)
        return false;
    bool before = worth(o);
    o = entry(&h->owners, uid);
    o->fds = bytes;
    return !before && worth(o);
}

static void add_mapped(struct shm_held *h, uid_t uid, uint64_t bytes)
{
    struct shm_owner *o = find(&h->owners, uid, NULL);
    if (o) {
        o->mapped += bytes;
        o->mapped_reads++;
    }
}

void shm_held_read_mapped(struct shm_held *h, pid_t pid, uid_t uid)
{
    char path[32], buf[4096];
    snprintf(path, sizeof(path), "%d/status", (int)pid);
    int fd = openat(h->proc_fd, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return;
    buf[n] = '\0';
    const char *at = strstr(buf, "\nRssShmem:");
    unsigned long long kb;
    if (at && sscanf(at + 11, "%llu", &kb) == 1)
        add_mapped(h, uid, kb << 10);
}

const struct shm_usage *shm_held_owners(const struct shm_held *h)
{
    return &h->owners;
}

/* ------------------------------------------------------------ segments */

/* System V segments, by creator: "key shmid perms size cpid lpid nattch
 * uid gid cuid cgid atime dtime ctime rss swap". */
static void add_segments(struct shm_held *h)
{
    int fd = openat(h->proc_fd, "sysvipc/shm", O_RDONLY | O_CLOEXEC);
    FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
    if (!f) {
        if (fd >= 0)
            close(fd);
        return;
    }
    char line[512];
    /* At most the kernel's own limit of segments (shmmni, 4096 by default). */
    for (int n = 0; n < 65536 && fgets(line, sizeof(line), f); n++) {
        unsigned long long size, rss;
        unsigned cuid;
        if (sscanf(line, "%*d %*d %*o %llu %*d %*d %*u %*u %*u %u %*u %*u %*u %*u %llu", &size,
                   &cuid, &rss) == 3)
            add_held(&h->walking, (uid_t)cuid, rss);
    }
    fclose(f);
}

/* ------------------------------------------------------------ the walk */

/* The tmpfs mount points ("id parent major:minor root mountpoint
 * options ... - fstype source ..."), /proc and /sys left out. */
static void read_mounts(struct shm_held *h)
{
    for (size_t i = 0; i < h->mount_count; i++)
        free(h->mounts[i]);
    h->mount_count = h->mount_next = 0;
    /* PID 1's mounts, or where its root cannot be entered (a container,
     * a sandbox), the daemon's own. */
    int root = openat(h->proc_fd, "1/root", O_PATH | O_DIRECTORY | O_CLOEXEC);
    h->ns = root >= 0 ? "1" : "self";
    if (root >= 0)
        close(root);
    char path[32];
    snprintf(path, sizeof(path), "%s/mountinfo", h->ns);
    int fd = openat(h->proc_fd, path, O_RDONLY | O_CLOEXEC);
    FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
    if (!f) {
        if (fd >= 0)
            close(fd);
        return;
    }
    char line[4096], point[4096], type[64];
    while (h->mount_count < SHM_MOUNTS_MAX && fgets(line, sizeof(line), f)) {
        const char *dash = strstr(line, " - ");
        if (!dash || sscanf(line, "%*s %*s %*s %*s %4095s", point) != 1 ||
            sscanf(dash + 3, "%63s", type) != 1 || strcmp(type, "tmpfs") != 0 ||
            environment_kernel_mount(point))
            continue;
        /* The kernel writes a space, a tab, a newline and a backslash in
         * octal (\040): such a mount point is left out. */
        if (strchr(point, '\\'))
            continue;
        /* One mounted over another is walked once, the top one. */
        bool seen = false;
        for (size_t i = 0; i < h->mount_count && !seen; i++)
            seen = strcmp(h->mounts[i], point) == 0;
        if (!seen) {
            h->mounts = grow_array(h->mounts, h->mount_count, &h->mount_capacity,
                                   sizeof(*h->mounts));
            h->mounts[h->mount_count++] = xstrdup(point);
        }
    }
    fclose(f);
}

static void close_dirs(struct shm_held *h)
{
    while (h->depth > 0)
        closedir(h->dirs[--h->depth]);
}

/* The next mount's top directory, through PID 1's root (or the
 * daemon's); false when the walk is over. */
static bool open_next_mount(struct shm_held *h)
{
    while (h->mount_next < h->mount_count) {
        char path[4200];
        snprintf(path, sizeof(path), "%s/root%s", h->ns, h->mounts[h->mount_next++]);
        int fd = openat(h->proc_fd, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        DIR *d = fd >= 0 && fstat(fd, &st) == 0 ? fdopendir(fd) : NULL;
        if (d) {
            h->mount_dev = st.st_dev;
            h->dirs[h->depth++] = d;
            return true;
        }
        if (fd >= 0)
            close(fd);
    }
    return false;
}

/* One entry of the directory being walked: a file's blocks to its owner,
 * a directory walked into (not another mount, never through a link). */
static void visit_entry(struct shm_held *h, DIR *d, const struct dirent *e)
{
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
        return;
    struct stat st;
    if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return;
    if (S_ISREG(st.st_mode)) {
        add_held(&h->walking, st.st_uid, (uint64_t)st.st_blocks * 512);
        return;
    }
    if (!S_ISDIR(st.st_mode) || h->depth > SHM_WALK_DEPTH || st.st_dev != h->mount_dev)
        return;
    int fd = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *sub = fd >= 0 ? fdopendir(fd) : NULL;
    if (sub)
        h->dirs[h->depth++] = sub;
    else if (fd >= 0)
        close(fd);
}

/* The walk's figures replace the last walk's; what owners hold through
 * descriptors stays (its own walks change it). */
static void finish_walk(struct shm_held *h)
{
    add_segments(h);
    struct shm_usage *u = &h->owners;
    for (size_t i = 0; i < u->count; i++)
        u->owners[i].held = 0;
    for (size_t i = 0; i < h->walking.count; i++)
        add_held(u, h->walking.owners[i].uid, h->walking.owners[i].held);
    size_t kept = 0;
    for (size_t i = 0; i < u->count; i++)
        if (u->owners[i].held || u->owners[i].fds)
            u->owners[kept++] = u->owners[i];
    u->count = kept;
    free(h->walking.owners);
    memset(&h->walking, 0, sizeof(h->walking));
    h->walks++;
}

void shm_held_sweep(struct shm_held *h)
{
    for (size_t i = 0; i < h->owners.count; i++)
        h->owners.owners[i].mapped = h->owners.owners[i].mapped_reads = 0;
    if (h->mount_count == 0 || (h->depth == 0 && h->mount_next == h->mount_count))
        read_mounts(h);
    for (size_t budget = SHM_WALK_BUDGET; budget > 0;) {
        if (h->depth == 0 && !open_next_mount(h)) {
            finish_walk(h); /* the next sweep starts again */
            return;
        }
        DIR *d = h->dirs[h->depth - 1];
        errno = 0;
        const struct dirent *e = readdir(d);
        if (!e) {
            closedir(d);
            h->depth--;
            continue;
        }
        budget--;
        visit_entry(h, d, e);
    }
}

void shm_held_free(struct shm_held *h)
{
    close_dirs(h);
    for (size_t i = 0; i < h->mount_count; i++)
        free(h->mounts[i]);
    free(h->mounts);
    free(h->owners.owners);
    free(h->walking.owners);
    memset(h, 0, sizeof(*h));
}
