#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "observe/cgroup_counters.h"
#include "observe/procfs.h"
#include "util.h"

static int open_dir(const char *path)
{
    if (!path)
        return -1;
    return open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
}

int counters_open(struct user_counters *c, const struct counter_roots *roots)
{
    memset(c, 0, sizeof(*c));
    c->version = roots->version;
    c->cpu_root = open_dir(roots->cpu);
    c->memory_root = c->version == 1 ? open_dir(roots->memory) : -1;
    c->pids_root = c->version == 1 ? open_dir(roots->pids) : -1;
    c->cgroup_path = roots->cgroup_path ? xstrdup(roots->cgroup_path) : NULL;
    if (c->cpu_root < 0) {
        counters_close(c);
        return -1;
    }
    return 0;
}

static void close_group(struct user_cgroup *g)
{
    if (g->cpu_fd >= 0)
        close(g->cpu_fd);
    if (g->memory_fd >= 0)
        close(g->memory_fd);
    if (g->pids_fd >= 0)
        close(g->pids_fd);
    if (g->procs_dirfd >= 0)
        close(g->procs_dirfd);
}

void counters_close(struct user_counters *c)
{
    for (size_t i = 0; i < c->count; i++)
        close_group(&c->groups[i]);
    free(c->groups);
    if (c->cpu_root >= 0)
        close(c->cpu_root);
    if (c->memory_root >= 0)
        close(c->memory_root);
    if (c->pids_root >= 0)
        close(c->pids_root);
    free(c->cgroup_path);
    memset(c, 0, sizeof(*c));
    c->cpu_root = c->memory_root = c->pids_root = -1;
}

int counters_parse_name(const char *name, uid_t *uid)
{
    if (strncmp(name, "user-", 5) != 0)
        return -1;
    const char *p = name + 5;
    uint64_t v = 0;
    size_t digits = 0;
    while (*p >= '0' && *p <= '9' && digits < 10) {
        v = v * 10 + (uint64_t)(*p++ - '0');
        digits++;
    }
    if (digits == 0 || v >= (uid_t)-1 || (*p != '\0' && strcmp(p, ".slice") != 0))
        return -1;
    *uid = (uid_t)v;
    return 0;
}

static int open_in(int root, const char *dir, const char *file)
{
    if (root < 0)
        return -1;
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    return openat(root, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
}

/* Whether the group's descriptors are of the directory now named name:
 * a user's cgroup removed (empty at a sweep) and made again (their next
 * login) has the same name, and the old descriptors only read a cgroup
 * that is gone. */
static bool same_group(const struct user_counters *c, const struct user_cgroup *g,
                       const char *name)
{
    struct stat held, now;
    return fstat(g->procs_dirfd, &held) == 0 &&
           fstatat(c->cpu_root, name, &now, AT_SYMLINK_NOFOLLOW) == 0 &&
           held.st_ino == now.st_ino && held.st_dev == now.st_dev;
}

static void add_group(struct user_counters *c, uid_t uid, const char *name)
{
    int v2 = c->version == 2;
    struct user_cgroup g = {.uid = uid, .seen = true};
    g.cpu_fd = open_in(c->cpu_root, name, v2 ? "cpu.stat" : "cpuacct.usage");
    g.memory_fd = open_in(v2 ? c->cpu_root : c->memory_root, name, "memory.stat");
    g.pids_fd = open_in(v2 ? c->cpu_root : c->pids_root, name, "pids.current");
    g.procs_dirfd = openat(c->cpu_root, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (g.cpu_fd < 0 || g.procs_dirfd < 0) {
        close_group(&g);
        return;
    }
    size_t at = uid_position(c->groups, c->count, sizeof(*c->groups),
                             offsetof(struct user_cgroup, uid), uid);
    c->groups = insert_at(c->groups, &c->count, &c->capacity, sizeof(*c->groups), at);
    c->groups[at] = g;
}

struct user_cgroup *counters_find(struct user_counters *c, uid_t uid)
{
    size_t at = uid_position(c->groups, c->count, sizeof(*c->groups),
                             offsetof(struct user_cgroup, uid), uid);
    return at < c->count && c->groups[at].uid == uid ? &c->groups[at] : NULL;
}

void counters_discover(struct user_counters *c)
{
    for (size_t i = 0; i < c->count; i++)
        c->groups[i].seen = false;
    int fd = dup(c->cpu_root);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return;
    }
    rewinddir(d);
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        uid_t uid;
        if (de->d_type != DT_DIR || counters_parse_name(de->d_name, &uid) < 0)
            continue;
        struct user_cgroup *g = counters_find(c, uid);
        if (g && same_group(c, g, de->d_name)) {
            g->seen = true;
            continue;
        }
        if (g) { /* made again: read afresh, from a new baseline */
            close_group(g);
            memmove(g, g + 1, (size_t)(c->groups + c->count - (g + 1)) * sizeof(*g));
            c->count--;
        }
        add_group(c, uid, de->d_name);
    }
    closedir(d);
    size_t kept = 0;
    for (size_t i = 0; i < c->count; i++) {
        if (c->groups[i].seen)
            c->groups[kept++] = c->groups[i];
        else
            close_group(&c->groups[i]);
    }
    c->count = kept;
}

int counters_stat_value(const char *text, size_t len, const char *key, uint64_t *value)
{
    size_t klen = strlen(key);
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *line_end = nl ? nl : end;
        if ((size_t)(line_end - p) > klen && memcmp(p, key, klen) == 0 && p[klen] == ' ') {
            uint64_t v = 0;
            const char *q = p + klen + 1;
            if (q >= line_end || *q < '0' || *q > '9')
                return -1;
            while (q < line_end && *q >= '0' && *q <= '9')
                v = v * 10 + (uint64_t)(*q++ - '0');
            *value = v;
            return 0;
        }
        p = line_end + 1;
    }
    return -1;
}

#define MEMORY_CPU_USEC 5000
#define MEMORY_KEPT_MAX 4

static int read_number_file(int fd, uint64_t *value)
{
    char buf[64];
    ssize_t n = procfs_pread(fd, buf, sizeof(buf) - 1);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    char *end;
    *value = strtoull(buf, &end, 10);
    return end == buf ? -1 : 0;
}

int64_t counters_tasks_now(const struct user_cgroup *g)
{
    uint64_t tasks;
    if (g->pids_fd < 0 || read_number_file(g->pids_fd, &tasks) < 0)
        return -1;
    return (int64_t)tasks;
}

/* A user's memory from memory.stat: anonymous, and of mapped files and
 * shared memory (tmpfs and /dev/shm files, memfds, SysV segments)
 * whichever is more.  Shared memory that no process maps any more is
 * still the user's: the kernel charged it to them.  Mapped shared memory
 * is in both figures, and the kernel does not say how much of one is the
 * other, so they are not added.  (v1's total_* include the group's
 * descendants, as v2's do.) */
static uint64_t memory_of(const struct user_counters *c, const char *buf, size_t n)
{
    uint64_t anon = 0, mapped = 0, shmem = 0;
    bool v2 = c->version == 2;
    counters_stat_value(buf, n, v2 ? "anon" : "total_rss", &anon);
    counters_stat_value(buf, n, v2 ? "file_mapped" : "total_mapped_file", &mapped);
    counters_stat_value(buf, n, v2 ? "shmem" : "total_shmem", &shmem);
    return anon + (mapped > shmem ? mapped : shmem);
}

uint64_t counters_memory_now(const struct user_counters *c, const struct user_cgroup *g)
{
    char buf[4096];
    ssize_t n = g->memory_fd >= 0 ? procfs_pread(g->memory_fd, buf, sizeof(buf)) : -1;
    return n > 0 ? memory_of(c, buf, (size_t)n) : 0;
}

int counters_read(const struct user_counters *c, struct user_cgroup *g, struct user_usage *out)
{
    char buf[4096];
    ssize_t n;
    uint64_t cpu_usec;
    if (c->version == 2) {
        n = procfs_pread(g->cpu_fd, buf, sizeof(buf));
        if (n <= 0 || counters_stat_value(buf, (size_t)n, "usage_usec", &cpu_usec) < 0)
            return -1;
    } else {
        uint64_t ns;
        if (read_number_file(g->cpu_fd, &ns) < 0)
            return -1;
        cpu_usec = ns / 1000;
    }
    /* memory.stat is the costly file (about 40 lines, 10 us on v1).  A
     * group whose CPU counter stood still ran nothing, so its memory and
     * tasks are as they were.  One that used less than MEMORY_CPU_USEC
     * since they were read (a shell waking, a process renaming itself)
     * cannot have grown much (the kernel zeroes about 4 GiB of new memory
     * a CPU second: 20 MiB), so they are read again only every
     * MEMORY_KEPT_MAX + 1 samples: a node's hundreds of users who do
     * next to nothing cost one read each, not three. */
    uint64_t since = cpu_usec - g->usage.cpu_usec;
    if (g->have_usage && cpu_usec >= g->usage.cpu_usec &&
        (since == 0 || (since < MEMORY_CPU_USEC && g->usage_kept < MEMORY_KEPT_MAX))) {
        g->usage_kept += since > 0;
        *out = g->usage;
        out->cpu_usec = cpu_usec;
        return 0;
    }
    g->usage_kept = 0;
    memset(out, 0, sizeof(*out));
    out->cpu_usec = cpu_usec;
    out->memory = counters_memory_now(c, g);
    if (g->pids_fd >= 0)
        read_number_file(g->pids_fd, &out->tasks);
    g->usage = *out;
    g->have_usage = true;
    return 0;
}

int counters_sample(const struct user_counters *c, struct user_cgroup *g, uint64_t now,
                    uint64_t interval, struct user_usage *out, double *cpu)
{
    *cpu = 0;
    g->passed_over = g->have_last && g->stood_still && !g->passed_over;
    if (g->passed_over) {
        *out = g->usage;
        return 0;
    }
    if (counters_read(c, g, out) < 0)
        return -1;
    uint64_t since = g->last_read_at && now > g->last_read_at ? now - g->last_read_at : interval;
    if (g->have_last && out->cpu_usec >= g->last_cpu_usec && since > 0)
        *cpu = (double)(out->cpu_usec - g->last_cpu_usec) / (double)since;
    g->stood_still = g->have_last && out->cpu_usec == g->last_cpu_usec;
    g->last_cpu_usec = out->cpu_usec;
    g->last_read_at = now;
    g->have_last = true;
    return 1;
}

struct pid_list {
    pid_t *pids;
    size_t count, capacity;
};

static void add_pid(struct pid_list *out, pid_t pid)
{
    out->pids = grow_array(out->pids, out->count, &out->capacity, sizeof(*out->pids));
    out->pids[out->count++] = pid;
}

/* One pid a line.  Parsed by hand: the sweep reads every user's list,
 * and fscanf cost more than the kernel's side of it. */
static void read_procs_file(int dirfd, struct pid_list *out)
{
    int fd = openat(dirfd, "cgroup.procs", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return;
    char buf[8192];
    uint64_t pid = 0;
    bool digits = false;
    ssize_t n;
    while ((n = read(fd, buf, sizeof(buf))) > 0) {
        for (ssize_t i = 0; i < n; i++) {
            if (buf[i] >= '0' && buf[i] <= '9') {
                if (pid < INT32_MAX)
                    pid = pid * 10 + (uint64_t)(buf[i] - '0');
                digits = true;
            } else {
                if (digits && pid > 0 && pid < INT32_MAX)
                    add_pid(out, (pid_t)pid);
                pid = 0;
                digits = false;
            }
        }
    }
    if (digits && pid > 0 && pid < INT32_MAX)
        add_pid(out, (pid_t)pid);
    close(fd);
}

/* systemd keeps a user's processes in session-N.scope and user@UID.service
 * below user-UID.slice, not in the slice itself: walk the whole subtree.
 * A cgroup directory's link count is 2 and one for each child cgroup
 * (kernfs): the listing of one without children (some 30 control files,
 * most of the sweep's cost with cgroupfs) is not read. */
static void collect_pids(int dirfd, int depth, struct pid_list *out)
{
    read_procs_file(dirfd, out);
    struct stat st;
    if (depth == 0 || (fstat(dirfd, &st) == 0 && st.st_nlink == 2))
        return;
    int fd = dup(dirfd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return;
    }
    /* The duplicate shares its offset with the held descriptor, which the
     * last sweep left at the end of the listing: without this, every sweep
     * after the first would see no session below the slice. */
    rewinddir(d);
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_type != DT_DIR || de->d_name[0] == '.')
            continue;
        int sub = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (sub >= 0) {
            collect_pids(sub, depth - 1, out);
            close(sub);
        }
    }
    closedir(d);
}

size_t counters_pids(const struct user_cgroup *g, pid_t **pids)
{
    struct pid_list list = {0};
    collect_pids(g->procs_dirfd, 8, &list);
    *pids = list.pids;
    return list.count;
}

static bool exists_below(const char *dir, const char *name)
{
    char *path = xasprintf("%s/%s", dir, name);
    bool found = access(path, F_OK) == 0;
    free(path);
    return found;
}

int counters_open_host(struct user_counters *c, const char *cgroup_root)
{
    char *v2 = xasprintf("%s/user.slice", cgroup_root);
    char *cpu = xasprintf("%s/cpuacct/user.slice", cgroup_root);
    char *memory = xasprintf("%s/memory/user.slice", cgroup_root);
    char *pids = xasprintf("%s/pids/user.slice", cgroup_root);
    struct counter_roots roots = {.cgroup_path = "/user.slice"};
    if (exists_below(cgroup_root, "cgroup.controllers") && exists_below(v2, "cpu.stat"))
        roots = (struct counter_roots){.version = 2, .cpu = v2, .cgroup_path = "/user.slice"};
    else if (exists_below(cpu, "cpuacct.usage"))
        roots = (struct counter_roots){.version = 1, .cpu = cpu, .memory = memory, .pids = pids,
                                       .cgroup_path = "/user.slice"};
    int rc = roots.version ? counters_open(c, &roots) : -1;
    free(v2);
    free(cpu);
    free(memory);
    free(pids);
    return rc;
}

/* The path on the line of /proc/PID/cgroup that the counters read:
 * "0::/a/b" on v2, "4:cpu,cpuacct:/a/b" (the line naming cpuacct) on v1. */
static bool counted_line(const char *line, size_t len, int version, const char **path,
                         size_t *path_len)
{
    const char *c1 = memchr(line, ':', len);
    const char *c2 = c1 ? memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - line)) : NULL;
    if (!c2)
        return false;
    *path = c2 + 1;
    *path_len = len - (size_t)(c2 + 1 - line);
    if (version == 2)
        return c1 - line == 1 && line[0] == '0' && c2 == c1 + 1;
    for (const char *p = c1 + 1; p < c2;) {
        const char *comma = memchr(p, ',', (size_t)(c2 - p));
        const char *end = comma ? comma : c2;
        if (end - p == 7 && memcmp(p, "cpuacct", 7) == 0)
            return true;
        p = end + 1;
    }
    return false;
}

/* path is root/user-UID or root/user-UID.slice, or below either. */
static bool path_in_user_group(const char *path, size_t len, const char *root, uid_t uid)
{
    char group[64];
    size_t rlen = strcmp(root, "/") == 0 ? 0 : strlen(root);
    if (len < rlen || memcmp(path, root, rlen) != 0)
        return false;
    path += rlen;
    len -= rlen;
    int n = snprintf(group, sizeof(group), "/user-%u", (unsigned)uid);
    if (len < (size_t)n || memcmp(path, group, (size_t)n) != 0)
        return false;
    path += n;
    len -= (size_t)n;
    if (len >= 6 && memcmp(path, ".slice", 6) == 0) {
        path += 6;
        len -= 6;
    }
    return len == 0 || path[0] == '/';
}

bool counters_holds(const struct user_counters *c, const char *text, size_t len, uid_t uid)
{
    if (!c->cgroup_path)
        return true;
    for (const char *p = text, *end = text + len; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = (size_t)((nl ? nl : end) - p);
        const char *path;
        size_t path_len;
        if (counted_line(p, n, c->version, &path, &path_len))
            return path_in_user_group(path, path_len, c->cgroup_path, uid);
        p += n + 1;
    }
    return false;
}
