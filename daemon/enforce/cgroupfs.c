#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libcgroup.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "enforce/cgroup_mode.h"
#include "enforce/cgroup_release.h"
#include "enforce/cgroupfs.h"
#include "util.h"

static const char *const controller_names[CG_COUNT] = {"cpu", "cpuacct", "memory", "pids"};

/* CFS period for the CPU quota: 100 ms, the kernel's default. */
#define CFS_PERIOD_US 100000

int cgroupfs_own_path(const char *proc_root, const char *controller, char *buf, size_t len)
{
    char own_cgroups[4096];
    snprintf(own_cgroups, sizeof(own_cgroups), "%s/self/cgroup", proc_root);
    FILE *f = fopen(own_cgroups, "re");
    if (!f)
        return -1;
    char line[4096];
    int rc = -1;
    while (rc < 0 && fgets(line, sizeof(line), f)) {
        /* "4:memory:/process_api/x" or "2:cpu,cpuacct:/" */
        char *list = strchr(line, ':');
        char *path = list ? strchr(list + 1, ':') : NULL;
        if (!path)
            continue;
        *path++ = '\0';
        path[strcspn(path, "\n")] = '\0';
        char *save = NULL;
        for (char *name = strtok_r(list + 1, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
            if (strcmp(name, controller) == 0) {
                copy_string(buf, len, path);
                rc = 0;
            }
        }
    }
    fclose(f);
    return rc;
}

static char *user_path(const struct cgroupfs *c, enum cg_controller which, uid_t uid)
{
    return xasprintf("%s/user-%u", strcmp(c->parent[which], "/") == 0 ? "" : c->parent[which],
                     (unsigned)uid);
}

/* libcgroup names cgroups relative to the hierarchy root, without the
 * leading '/'. */
static struct cgroup *new_cgroup(const char *path, enum cg_controller which,
                                 struct cgroup_controller **ctrl)
{
    struct cgroup *cg = cgroup_new_cgroup(path[0] == '/' ? path + 1 : path);
    if (!cg)
        return NULL;
    *ctrl = cgroup_add_controller(cg, controller_names[which]);
    if (!*ctrl) {
        cgroup_free(&cg);
        return NULL;
    }
    return cg;
}

static void say_error(char *err, size_t err_len, const char *what, const char *path, int rc)
{
    snprintf(err, err_len, "%s %s: %s", what, path,
             rc == ECGOTHER ? strerror(cgroup_get_last_errno()) : cgroup_strerror(rc));
}

static int open_v1(struct cgroupfs *c, const char *proc_root, const char *cgroup_parent, char *err,
                   size_t err_len)
{
    int rc = cgroup_init();
    if (rc != 0) {
        snprintf(err, err_len, "libcgroup: %s", cgroup_strerror(rc));
        return -1;
    }
    int found = 0;
    for (int i = 0; i < CG_COUNT; i++) {
        char *mount = NULL;
        char own[4096];
        if (cgroup_get_subsys_mount_point(controller_names[i], &mount) != 0 ||
            cgroupfs_own_path(proc_root, controller_names[i], own, sizeof(own)) < 0) {
            free(mount);
            continue;
        }
        c->mount[i] = mount;
        if (cgroup_parent[0] == '/')
            c->parent[i] = xstrdup(cgroup_parent);
        else
            c->parent[i] = xasprintf("%s/%s", strcmp(own, "/") == 0 ? "" : own, cgroup_parent);
        /* The parent itself, made without limits: they go on the users. */
        struct cgroup_controller *ctrl;
        struct cgroup *cg = new_cgroup(c->parent[i], (enum cg_controller)i, &ctrl);
        rc = cg ? cgroup_create_cgroup(cg, 0) : ECGFAIL;
        cgroup_free(&cg);
        if (rc != 0) {
            say_error(err, err_len, "cannot create", c->parent[i], rc);
            cgroupfs_close(c);
            return -1;
        }
        found++;
    }
    if (found == 0 || !c->mount[CG_CPUACCT]) {
        snprintf(err, err_len, "no cgroup v1 cpuacct hierarchy: the cgroupfs backend needs "
                               "cpu, cpuacct, memory and pids mounted");
        cgroupfs_close(c);
        return -1;
    }
    return 0;
}

static int open_v2(struct cgroupfs *c, const char *proc_root, const char *mount,
                   const char *cgroup_parent, char *err, size_t err_len)
{
    char own[4096], path[4096];
    snprintf(path, sizeof(path), "%s/self/cgroup", proc_root);
    if (cgroup_own_v2_path(path, own, sizeof(own)) < 0) {
        snprintf(err, err_len, "no cgroup v2 line (0::) in %s", path);
        return -1;
    }
    c->version = 2;
    return cgv2_open(&c->v2, mount, own, cgroup_parent, getpid(), NULL, err, err_len);
}

int cgroupfs_open(struct cgroupfs *c, const char *proc_root, const char *cgroup_parent, char *err,
                  size_t err_len)
{
    memset(c, 0, sizeof(*c));
    c->v2.parent_fd = -1;
    c->version = 1;
    char mount[4096];
    if (cgroup_mode_detect(proc_root, mount, sizeof(mount)) == CGROUP_MODE_V2)
        return open_v2(c, proc_root, mount, cgroup_parent, err, err_len);
    return open_v1(c, proc_root, cgroup_parent, err, err_len);
}

const char *cgroupfs_warning(const struct cgroupfs *c)
{
    return c->version == 2 ? c->v2.warning : "";
}

void cgroupfs_close(struct cgroupfs *c)
{
    if (c->version == 2)
        cgv2_close(&c->v2);
    for (int i = 0; i < CG_COUNT; i++) {
        free(c->parent[i]);
        free(c->mount[i]);
        free(c->counter_dir[i]);
    }
    memset(c, 0, sizeof(*c));
    c->v2.parent_fd = -1;
}

/* The knobs for one controller's share of the limits. */
static int add_limits(struct cgroup_controller *ctrl, enum cg_controller which,
                      const struct limits *l)
{
    switch (which) {
    case CG_CPU:
        if (cgroup_add_value_int64(ctrl, "cpu.cfs_period_us", CFS_PERIOD_US) != 0)
            return -1;
        return cgroup_add_value_int64(ctrl, "cpu.cfs_quota_us",
                                      l->cpu > 0 ? (int64_t)(l->cpu * CFS_PERIOD_US) : -1);
    case CG_MEMORY:
        return 0; /* written by set_memory_limit */
    case CG_PIDS:
        if (l->tasks == 0)
            return cgroup_add_value_string(ctrl, "pids.max", "max");
        return cgroup_add_value_uint64(ctrl, "pids.max", l->tasks);
    default:
        return 0; /* cpuacct only counts */
    }
}

static int write_number(int fd, uint64_t value)
{
    char text[24];
    int n = snprintf(text, sizeof(text), "%llu", (unsigned long long)value);
    return pwrite(fd, text, (size_t)n, 0) == n ? 0 : -1;
}

/* v1 refuses a memory.limit_in_bytes below what the cgroup holds when it
 * cannot reclaim it (no swap, anonymous memory in use): EBUSY, and the
 * user would go on growing under the share.  The limit then goes to what
 * the cgroup holds now, so that it cannot grow; the caller tries the
 * level's again at each sample, which lowers the hold as usage falls.
 * (v1 leaves a moved process's memory charged where it was made, and
 * memory.move_charge_at_immigrate is refused by current kernels: the
 * limit holds what a process allocates after it is moved.)  Returns 0 at
 * the limit wanted, 1 held above it (*held says where), -1 on an error. */
static int set_memory_limit(const struct cgroupfs *c, const char *path, uint64_t want,
                            uint64_t *held, char *err, size_t err_len)
{
    char *dir = xasprintf("%s%s", c->mount[CG_MEMORY], path);
    int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    int limit = dirfd >= 0 ? openat(dirfd, "memory.limit_in_bytes",
                                    O_WRONLY | O_CLOEXEC | O_NOFOLLOW) : -1;
    int usage = dirfd >= 0 ? openat(dirfd, "memory.usage_in_bytes",
                                    O_RDONLY | O_CLOEXEC | O_NOFOLLOW) : -1;
    int rc = -1;
    if (limit >= 0) /* -1: no limit */
        rc = want ? write_number(limit, want) : pwrite(limit, "-1", 2, 0) == 2 ? 0 : -1;
    /* Held where it stands; it may grow between the read and the write. */
    for (int tries = 0; rc < 0 && errno == EBUSY && usage >= 0 && tries < 4; tries++) {
        char buf[32];
        ssize_t n = pread(usage, buf, sizeof(buf) - 1, 0);
        if (n <= 0)
            break;
        buf[n] = '\0';
        uint64_t holds = (strtoull(buf, NULL, 10) + 4095) & ~4095ULL;
        *held = holds > want ? holds : want; /* it may have fallen meanwhile */
        if (write_number(limit, *held) == 0)
            rc = *held > want;
    }
    if (rc < 0)
        snprintf(err, err_len, "cannot set the memory limit on %s: %s", path, strerror(errno));
    if (limit >= 0)
        close(limit);
    if (usage >= 0)
        close(usage);
    if (dirfd >= 0)
        close(dirfd);
    free(dir);
    return rc;
}

int cgroupfs_apply(struct cgroupfs *c, uid_t uid, const struct limits *l, char *err,
                   size_t err_len)
{
    if (c->version == 2)
        return cgv2_apply(&c->v2, uid, l, err, err_len);
    int failed = 0;
    for (int i = 0; i < CG_COUNT; i++) {
        if (!c->mount[i])
            continue;
        char *path = user_path(c, (enum cg_controller)i, uid);
        struct cgroup_controller *ctrl;
        struct cgroup *cg = new_cgroup(path, (enum cg_controller)i, &ctrl);
        int rc = ECGFAIL;
        if (cg && add_limits(ctrl, (enum cg_controller)i, l) == 0)
            rc = cgroup_create_cgroup(cg, 0); /* writes the values, made or not */
        if (rc != 0 && failed >= 0) {
            say_error(err, err_len, "cannot set limits on", path, rc);
            failed = -1;
        }
        uint64_t held = 0;
        int memory = rc == 0 && i == CG_MEMORY
                         ? set_memory_limit(c, path, l->memory, &held, err, err_len) : 0;
        if (memory < 0)
            failed = -1;
        if (memory > 0 && !failed) {
            snprintf(err, err_len, "memory of %s held at %llu bytes, what it holds now, above "
                     "the %llu wanted: v1 cannot reclaim it; lowered as it falls", path,
                     (unsigned long long)held, (unsigned long long)l->memory);
            failed = 1;
        }
        cgroup_free(&cg);
        free(path);
    }
    return failed;
}

/* libcgroup 2.0.2 attaches through the "tasks" file, which moves one
 * thread: a multi-threaded program would leave its other threads behind,
 * unlimited and uncounted.  cgroup.procs moves the whole process. */
int cgroupfs_attach(struct cgroupfs *c, uid_t uid, pid_t pid, char *err, size_t err_len)
{
    if (c->version == 2)
        return cgv2_attach(&c->v2, uid, pid, err, err_len);
    for (int i = 0; i < CG_COUNT; i++) {
        if (!c->mount[i])
            continue;
        char *path = user_path(c, (enum cg_controller)i, uid);
        char *procs = xasprintf("%s%s/cgroup.procs", c->mount[i], path);
        int fd = open(procs, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
        char text[24];
        int n = snprintf(text, sizeof(text), "%d", (int)pid);
        int rc = fd >= 0 && write(fd, text, (size_t)n) == n ? 0 : -1;
        if (rc < 0)
            snprintf(err, err_len, "cannot move process %d into %s: %s", (int)pid, path,
                     strerror(errno));
        if (fd >= 0)
            close(fd);
        free(procs);
        free(path);
        if (rc < 0)
            return -1;
    }
    return 0;
}

static bool has_processes(const struct cgroupfs *c, enum cg_controller which, uid_t uid)
{
    char *path = user_path(c, which, uid);
    char *procs = xasprintf("%s%s/cgroup.procs", c->mount[which], path);
    free(path);
    FILE *f = fopen(procs, "re");
    free(procs);
    if (!f)
        return false;
    int ch = fgetc(f);
    fclose(f);
    return ch != EOF;
}

int cgroupfs_remove_if_empty(struct cgroupfs *c, uid_t uid)
{
    if (c->version == 2)
        return cgv2_remove_if_empty(&c->v2, uid);
    if (has_processes(c, CG_CPUACCT, uid))
        return 0;
    for (int i = 0; i < CG_COUNT; i++) {
        if (!c->mount[i])
            continue;
        char *path = user_path(c, (enum cg_controller)i, uid);
        struct cgroup_controller *ctrl;
        struct cgroup *cg = new_cgroup(path, (enum cg_controller)i, &ctrl);
        /* A process that arrived since the check goes to the parent. */
        if (cg)
            cgroup_delete_cgroup(cg, 1);
        cgroup_free(&cg);
        free(path);
    }
    return 1;
}

static const char *dir_v1(struct cgroupfs *c, enum cg_controller which)
{
    if (!c->mount[which])
        return NULL;
    free(c->counter_dir[which]);
    c->counter_dir[which] = xasprintf("%s%s", c->mount[which],
                                      strcmp(c->parent[which], "/") == 0 ? "" : c->parent[which]);
    return c->counter_dir[which];
}

void cgroupfs_counter_roots(struct cgroupfs *c, struct counter_roots *roots)
{
    memset(roots, 0, sizeof(*roots));
    roots->version = c->version;
    if (c->version == 2) {
        roots->cpu = c->v2.parent_dir;
        roots->cgroup_path = c->v2.parent_path;
        return;
    }
    roots->cpu = dir_v1(c, CG_CPUACCT);
    roots->memory = dir_v1(c, CG_MEMORY);
    roots->pids = dir_v1(c, CG_PIDS);
    roots->cgroup_path = c->parent[CG_CPUACCT];
}

/* --release: per hierarchy written, the parent's directory and the one
 * above it (the parent itself when it is the hierarchy's root), opened
 * without following links. */
struct v1_levels {
    struct release_level at[CG_COUNT];
    char *dirs[2 * CG_COUNT];
    size_t n;
};

static void levels_close(struct v1_levels *l)
{
    for (size_t i = 0; i < l->n; i++) {
        close(l->at[i].parent_fd);
        close(l->at[i].dest_fd);
    }
    for (size_t i = 0; i < 2 * CG_COUNT; i++)
        free(l->dirs[i]);
    memset(l, 0, sizeof(*l));
}

static bool is_root(const char *path)
{
    return strcmp(path, "/") == 0;
}

static int levels_open(const struct cgroupfs *c, struct v1_levels *l, char *err, size_t err_len)
{
    memset(l, 0, sizeof(*l));
    for (int i = 0; i < CG_COUNT; i++) {
        if (!c->mount[i])
            continue;
        char *dir = xasprintf("%s%s", c->mount[i], is_root(c->parent[i]) ? "" : c->parent[i]);
        char *above = xstrdup(dir);
        size_t end = strlen(above);
        while (!is_root(c->parent[i]) && end > strlen(c->mount[i]) && above[end - 1] == '/')
            above[--end] = '\0';
        if (!is_root(c->parent[i]))
            *strrchr(above, '/') = '\0';
        l->dirs[2 * l->n] = dir;
        l->dirs[2 * l->n + 1] = above;
        int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        int up = fd < 0 ? -1
                 : is_root(c->parent[i])
                     ? dup(fd)
                     : openat(fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (up < 0) {
            snprintf(err, err_len, "cannot open %s: %s", fd < 0 ? dir : above, strerror(errno));
            if (fd >= 0)
                close(fd);
            levels_close(l);
            return -1;
        }
        l->at[l->n++] = (struct release_level){fd, up, dir, above};
    }
    return 0;
}

static int remove_dir_at(int dirfd, const char *name)
{
    return unlinkat(dirfd, name, AT_REMOVEDIR);
}

int cgroupfs_release_user(struct cgroupfs *c, uid_t uid, char *err, size_t err_len)
{
    if (c->version == 2)
        return cgv2_release_user(&c->v2, uid, err, err_len);
    struct v1_levels l;
    if (levels_open(c, &l, err, err_len) < 0)
        return -1;
    char name[32];
    snprintf(name, sizeof(name), "user-%u", (unsigned)uid);
    int rc = cgroup_release_child(l.at, l.n, name, remove_dir_at, err, err_len);
    levels_close(&l);
    return rc;
}

int cgroupfs_release_parent(struct cgroupfs *c, char *err, size_t err_len)
{
    if (c->version == 2)
        return cgv2_release_parent(&c->v2, err, err_len);
    struct v1_levels l;
    if (levels_open(c, &l, err, err_len) < 0)
        return -1;
    int rc = 0;
    size_t at = 0;
    for (int i = 0; i < CG_COUNT; i++) {
        if (!c->mount[i])
            continue;
        const struct release_level *lv = &l.at[at++];
        char buf[256];
        const char *name = cgroup_release_name(c->parent[i], buf, sizeof(buf));
        if (!name)
            continue; /* the hierarchy's root is nobody's to remove */
        /* cpu and cpuacct may share a hierarchy: the second finds it gone. */
        if (remove_dir_at(lv->dest_fd, name) < 0 && errno != ENOENT && rc == 0) {
            snprintf(err, err_len, "kept %s: %s (it holds processes or cgroups that loginguard "
                     "did not make)", lv->parent_dir, strerror(errno));
            rc = -1;
        }
    }
    levels_close(&l);
    return rc;
}
