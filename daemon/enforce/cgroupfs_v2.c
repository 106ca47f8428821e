#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "enforce/cgroup_release.h"
#include "enforce/cgroupfs_v2.h"
#include "util.h"

static const char *const v2_names[] = {"cpu", "memory", "pids"};
#define V2_NAMES (sizeof(v2_names) / sizeof(v2_names[0]))

/* cpu.max's period: 100 ms, the kernel's default. */
#define CPU_PERIOD_US 100000
/* The kernel refuses a quota under 1 ms. */
#define CPU_MIN_QUOTA_US 1000

/* 0755 whatever the daemon's umask (the unit's is 0027): a user may read
 * the limits on their own cgroup, as under systemd's user slices. */
static int kernel_make(int dirfd, const char *name)
{
    if (mkdirat(dirfd, name, 0755) < 0)
        return -1;
    return fchmodat(dirfd, name, 0755, 0);
}

static int kernel_remove(int dirfd, const char *name)
{
    /* rmdir of a cgroup takes its interface files with it. */
    return unlinkat(dirfd, name, AT_REMOVEDIR);
}

static const struct cgv2_dirops kernel_ops = {kernel_make, kernel_remove};

static int open_dir_at(int dirfd, const char *name)
{
    return openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
}

/* One write of the whole text, as the kernel wants for its knobs; errno
 * is the kernel's answer on failure. */
static int write_at(int dirfd, const char *file, const char *text)
{
    int fd = openat(dirfd, file, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -1;
    size_t n = strlen(text);
    ssize_t w = write(fd, text, n);
    int saved = errno;
    close(fd);
    errno = saved;
    return w == (ssize_t)n ? 0 : -1;
}

static ssize_t read_at(int dirfd, const char *file, char *buf, size_t len)
{
    int fd = openat(dirfd, file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, len - 1);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    return n;
}

/* "cpu io memory pids" (cgroup.controllers, cgroup.subtree_control) to
 * V2_* bits; a leading '+' is allowed. */
static unsigned parse_controllers(const char *text)
{
    unsigned mask = 0;
    char copy[1024];
    copy_string(copy, sizeof(copy), text);
    char *save = NULL;
    for (char *t = strtok_r(copy, " \t\n", &save); t; t = strtok_r(NULL, " \t\n", &save)) {
        if (*t == '+')
            t++;
        for (size_t i = 0; i < V2_NAMES; i++)
            if (strcmp(t, v2_names[i]) == 0)
                mask |= 1u << i;
    }
    return mask;
}

/* "+cpu +memory" (prefix "+") or "cpu, memory" (prefix ""). */
static void controller_list(unsigned mask, const char *prefix, const char *sep, char *buf,
                            size_t len)
{
    buf[0] = '\0';
    for (size_t i = 0; i < V2_NAMES; i++) {
        if (!(mask & (1u << i)))
            continue;
        size_t used = strlen(buf);
        snprintf(buf + used, len - used, "%s%s%s", used ? sep : "", prefix, v2_names[i]);
    }
}

/* Give dirfd's children the controllers in want that it does not give
 * yet: all in one write, so the file is written only when needed. */
static int enable_controllers(int dirfd, const char *where, unsigned want, char *err,
                              size_t err_len)
{
    char text[256];
    unsigned have = read_at(dirfd, "cgroup.subtree_control", text, sizeof(text)) >= 0
                        ? parse_controllers(text)
                        : 0;
    if ((want & ~have) == 0)
        return 0;
    controller_list(want & ~have, "+", " ", text, sizeof(text));
    if (write_at(dirfd, "cgroup.subtree_control", text) == 0)
        return 0;
    int e = errno;
    snprintf(err, err_len, "cannot write '%s' to %s/cgroup.subtree_control: %s%s", text, where,
             strerror(e),
             e == EBUSY ? " (cgroup v2 gives controllers only to the children of a cgroup that "
                          "holds no process: move the other processes of that cgroup into a "
                          "child, or set an absolute cgroup_parent)"
                        : "");
    return -1;
}

/* Open path's directories below dirfd one by one without following
 * links; with create, make those missing. */
static int open_path(int dirfd, const char *path, bool create, const struct cgv2_dirops *ops)
{
    char copy[4096];
    copy_string(copy, sizeof(copy), path);
    int fd = dup(dirfd);
    char *save = NULL;
    for (char *name = strtok_r(copy, "/", &save); fd >= 0 && name;
         name = strtok_r(NULL, "/", &save)) {
        if (create && ops->make(fd, name) < 0 && errno != EEXIST) {
            int e = errno;
            close(fd);
            errno = e;
            return -1;
        }
        int next = open_dir_at(fd, name);
        int e = errno;
        close(fd);
        errno = e;
        fd = next;
    }
    return fd;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* The daemon's own cgroup is about to get children with controllers; it
 * must hold no process then, the daemon included. */
static int move_self(int own_fd, const char *where, pid_t self, const struct cgv2_dirops *ops,
                     char *err, size_t err_len)
{
    char pid[24];
    snprintf(pid, sizeof(pid), "%d", (int)self);
    int fd = -1;
    if ((ops->make(own_fd, "supervisor") == 0 || errno == EEXIST) &&
        (fd = open_dir_at(own_fd, "supervisor")) >= 0 && write_at(fd, "cgroup.procs", pid) == 0) {
        close(fd);
        return 0;
    }
    snprintf(err, err_len, "cannot move loginguardd (pid %s) into %s/supervisor: %s", pid, where,
             strerror(errno));
    if (fd >= 0)
        close(fd);
    return -1;
}

static void say_missing(struct cgroupfs_v2 *c, const char *where, unsigned missing)
{
    char names[64];
    controller_list(missing, "", ", ", names, sizeof(names));
    size_t used = strlen(c->warning);
    snprintf(c->warning + used, sizeof(c->warning) - used,
             "%scgroup v2: %s not in %s/cgroup.controllers, so those limits are not applied "
             "(enable them in the parent's cgroup.subtree_control; under systemd: Delegate=yes)",
             used ? "; " : "", names, where);
}

/* Walk from base (the daemon's cgroup, or the root) down to the parent,
 * making what is missing and giving each level the controllers. */
static int make_parent(struct cgroupfs_v2 *c, int base_fd, size_t root_len, char *where,
                       size_t where_len, const char *rest, char *err, size_t err_len)
{
    char copy[4096];
    copy_string(copy, sizeof(copy), rest);
    int fd = dup(base_fd);
    char *save = NULL;
    for (char *name = strtok_r(copy, "/", &save); name; name = strtok_r(NULL, "/", &save)) {
        if (enable_controllers(fd, where, c->controllers, err, err_len) < 0) {
            close(fd);
            return -1;
        }
        size_t used = strlen(where);
        snprintf(where + used, where_len - used, "/%s", name);
        int next = c->ops->make(fd, name) < 0 && errno != EEXIST ? -1 : open_dir_at(fd, name);
        close(fd);
        if (next < 0) {
            snprintf(err, err_len, "cannot create %s: %s", where, strerror(errno));
            return -1;
        }
        fd = next;
    }
    if (enable_controllers(fd, where, c->controllers, err, err_len) < 0) {
        close(fd);
        return -1;
    }
    c->parent_fd = fd;
    c->parent_dir = xstrdup(where);
    c->parent_path = xstrdup(where[root_len] ? where + root_len : "/");
    return 0;
}

int cgv2_open(struct cgroupfs_v2 *c, const char *root, const char *own, const char *cgroup_parent,
              pid_t self, const struct cgv2_dirops *ops, char *err, size_t err_len)
{
    memset(c, 0, sizeof(*c));
    c->parent_fd = -1;
    c->ops = ops ? ops : &kernel_ops;
    bool relative = cgroup_parent[0] != '/';
    /* After a reload into enforce mode the daemon already sits in its
     * supervisor leaf: the base is the cgroup above it, as the first time. */
    char own_base[4096];
    copy_string(own_base, sizeof(own_base), own);
    if (ends_with(own_base, "/supervisor"))
        own_base[strlen(own_base) - strlen("/supervisor")] = '\0';
    if (own_base[0] == '\0')
        copy_string(own_base, sizeof(own_base), "/");
    own = own_base;
    const char *base = relative ? own : "/";
    /* systemd stops a unit by ending every process in its cgroup: with
     * the users below it, a restart of loginguardd would end their work. */
    if (relative && (ends_with(own, ".service") || ends_with(own, ".scope"))) {
        snprintf(err, err_len,
                 "cgroup_parent = %s is relative and loginguardd runs in the systemd unit %s: the "
                 "users' processes would go into that unit's cgroup, and stopping the unit would "
                 "end them; set an absolute cgroup_parent (such as /loginguard) or use "
                 "backend = systemd",
                 cgroup_parent, own);
        return -1;
    }
    char where[4096];
    snprintf(where, sizeof(where), "%s%s", root, strcmp(base, "/") == 0 ? "" : base);
    int root_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    int base_fd = root_fd >= 0 ? open_path(root_fd, base, false, c->ops) : -1;
    if (root_fd >= 0)
        close(root_fd);
    if (base_fd < 0) {
        snprintf(err, err_len, "cannot open the cgroup %s: %s", where, strerror(errno));
        return -1;
    }
    if (relative && strcmp(own, "/") != 0 &&
        move_self(base_fd, where, self, c->ops, err, err_len) < 0) {
        close(base_fd);
        return -1;
    }
    char text[256];
    unsigned available = read_at(base_fd, "cgroup.controllers", text, sizeof(text)) >= 0
                             ? parse_controllers(text)
                             : 0;
    c->controllers = available & V2_ALL;
    if (c->controllers != V2_ALL)
        say_missing(c, where, V2_ALL & ~c->controllers);
    int rc = make_parent(c, base_fd, strlen(root), where, sizeof(where), cgroup_parent, err,
                         err_len);
    close(base_fd);
    return rc;
}

void cgv2_close(struct cgroupfs_v2 *c)
{
    if (c->parent_fd >= 0)
        close(c->parent_fd);
    free(c->parent_dir);
    free(c->parent_path);
    memset(c, 0, sizeof(*c));
    c->parent_fd = -1;
}

static void user_name(uid_t uid, char *buf, size_t len)
{
    snprintf(buf, len, "user-%u", (unsigned)uid);
}

/* Knob texts: "max" is no limit in every v2 file. */
static void number_or_max(uint64_t v, char *buf, size_t len)
{
    if (v == 0)
        snprintf(buf, len, "max");
    else
        snprintf(buf, len, "%llu", (unsigned long long)v);
}

static void cpu_max_text(double cores, char *buf, size_t len)
{
    if (!(cores > 0)) {
        snprintf(buf, len, "max %d", CPU_PERIOD_US);
        return;
    }
    double quota = cores * CPU_PERIOD_US + 0.5;
    if (quota >= 1e15) { /* beyond any machine: no limit, not an overflow */
        snprintf(buf, len, "max %d", CPU_PERIOD_US);
        return;
    }
    unsigned long long q = (unsigned long long)quota;
    snprintf(buf, len, "%llu %d", q < CPU_MIN_QUOTA_US ? CPU_MIN_QUOTA_US : q, CPU_PERIOD_US);
}

struct knob {
    unsigned controller;
    const char *file;
    char text[64];
};

static size_t limit_knobs(const struct limits *l, struct knob k[4])
{
    k[0] = (struct knob){V2_CPU, "cpu.max", ""};
    cpu_max_text(l->cpu, k[0].text, sizeof(k[0].text));
    /* As the systemd backend does: memory.high below memory.max makes the
     * kernel throttle and reclaim before the OOM killer acts at max. */
    k[1] = (struct knob){V2_MEMORY, "memory.high", ""};
    number_or_max(l->memory ? limits_memory_high(l->memory) : 0, k[1].text, sizeof(k[1].text));
    k[2] = (struct knob){V2_MEMORY, "memory.max", ""};
    number_or_max(l->memory, k[2].text, sizeof(k[2].text));
    k[3] = (struct knob){V2_PIDS, "pids.max", ""};
    number_or_max(l->tasks, k[3].text, sizeof(k[3].text));
    return 4;
}

int cgv2_apply(struct cgroupfs_v2 *c, uid_t uid, const struct limits *l, char *err,
               size_t err_len)
{
    char name[32];
    user_name(uid, name, sizeof(name));
    int fd = c->ops->make(c->parent_fd, name) < 0 && errno != EEXIST
                 ? -1
                 : open_dir_at(c->parent_fd, name);
    if (fd < 0) {
        snprintf(err, err_len, "cannot create %s/%s: %s", c->parent_dir, name, strerror(errno));
        return -1;
    }
    struct knob knobs[4];
    size_t n = limit_knobs(l, knobs);
    int failed = 0;
    for (size_t i = 0; i < n; i++) {
        /* A controller the parent cannot give was reported once at open. */
        if (!(c->controllers & knobs[i].controller))
            continue;
        if (write_at(fd, knobs[i].file, knobs[i].text) < 0 && !failed) {
            snprintf(err, err_len, "cannot write '%s' to %s/%s/%s: %s", knobs[i].text,
                     c->parent_dir, name, knobs[i].file, strerror(errno));
            failed = -1;
        }
    }
    close(fd);
    return failed;
}

int cgv2_attach(struct cgroupfs_v2 *c, uid_t uid, pid_t pid, char *err, size_t err_len)
{
    char name[32], file[64], text[24];
    user_name(uid, name, sizeof(name));
    snprintf(file, sizeof(file), "%s/cgroup.procs", name);
    snprintf(text, sizeof(text), "%d", (int)pid);
    if (write_at(c->parent_fd, file, text) == 0)
        return 0;
    snprintf(err, err_len, "cannot move process %d into %s/%s: %s", (int)pid, c->parent_dir,
             name, strerror(errno));
    return -1;
}

int cgv2_remove_if_empty(struct cgroupfs_v2 *c, uid_t uid)
{
    char name[32], file[64], text[256];
    user_name(uid, name, sizeof(name));
    snprintf(file, sizeof(file), "%s/cgroup.events", name);
    /* cgroup.events is one small read; cgroup.procs would list every pid
     * and miss those in child cgroups. */
    if (read_at(c->parent_fd, file, text, sizeof(text)) < 0)
        return errno == ENOENT ? 1 : 0;
    if (!strstr(text, "populated 0"))
        return 0;
    /* A process that arrived since the read makes this fail (EBUSY). */
    return c->ops->remove(c->parent_fd, name) == 0 || errno == ENOENT ? 1 : 0;
}

/* The cgroup above the parent, and its path: the parent's ".." (a cgroup
 * directory's ".." is its parent cgroup), or the parent itself when it is
 * the root.  -1 when it cannot be opened. */
static int open_above(const struct cgroupfs_v2 *c, char *dir, size_t len)
{
    copy_string(dir, len, c->parent_dir);
    if (strcmp(c->parent_path, "/") == 0)
        return dup(c->parent_fd);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    return open_dir_at(c->parent_fd, "..");
}

int cgv2_release_user(struct cgroupfs_v2 *c, uid_t uid, char *err, size_t err_len)
{
    char name[32], above[4096];
    user_name(uid, name, sizeof(name));
    int fd = open_above(c, above, sizeof(above));
    if (fd < 0) {
        snprintf(err, err_len, "cannot open %s: %s", above, strerror(errno));
        return -1;
    }
    struct release_level level = {c->parent_fd, fd, c->parent_dir, above};
    int rc = cgroup_release_child(&level, 1, name, c->ops->remove, err, err_len);
    close(fd);
    return rc;
}

int cgv2_release_parent(struct cgroupfs_v2 *c, char *err, size_t err_len)
{
    char buf[256];
    const char *name = cgroup_release_name(c->parent_path, buf, sizeof(buf));
    if (!name)
        return 0; /* the root is nobody's to remove */
    char above[4096];
    int fd = open_above(c, above, sizeof(above));
    int rc = fd >= 0 && (c->ops->remove(fd, name) == 0 || errno == ENOENT) ? 0 : -1;
    if (rc < 0)
        snprintf(err, err_len, "kept %s: %s (it holds processes or cgroups that loginguard did "
                 "not make)", c->parent_dir, strerror(errno));
    if (fd >= 0)
        close(fd);
    return rc;
}
