#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/instance_lock.h"
#include "base/pidfd.h"
#include "enforce/enforcer.h"
#include "observe/procfs.h"
#include "slurm_job.h"
#include "util.h"

/* The directory of the cgroups this backend writes, into buf. */
static const char *written_cgroups(struct enforcer *e, char *buf, size_t len)
{
    if (e->backend == BACKEND_SYSTEMD) {
        snprintf(buf, len, "%s/user.slice", e->env->cgroup);
        return buf;
    }
    struct counter_roots roots;
    cgroupfs_counter_roots(&e->cgroupfs, &roots);
    return roots.cpu;
}

int enforcer_open(struct enforcer *e, const struct environment *env, enum backend backend,
                  const char *cgroup_parent, char *err, size_t err_len)
{
    memset(e, 0, sizeof(*e));
    e->env = env;
    e->lock_fd = -1;
    e->backend = backend;
    if (e->backend == BACKEND_AUTO)
        e->backend = systemd_backend_available(env) ? BACKEND_SYSTEMD : BACKEND_CGROUPFS;
    int rc = e->backend == BACKEND_SYSTEMD
                 ? systemd_backend_open(&e->systemd, err, err_len)
                 : cgroupfs_open(&e->cgroupfs, env->proc, cgroup_parent, err, err_len);
    if (rc == 0) {
        char dir[4096];
        e->lock_fd = instance_lock(env->proc, written_cgroups(e, dir, sizeof(dir)), "cgroups",
                                   err, err_len);
        if (e->lock_fd < 0) {
            enforcer_close(e, false);
            return -1;
        }
    }
    return rc;
}

static size_t applied_position(const struct enforcer *e, uid_t uid)
{
    return uid_position(e->applied, e->count, sizeof(*e->applied),
                        offsetof(struct applied_limits, uid), uid);
}

static struct applied_limits *find_applied(struct enforcer *e, uid_t uid)
{
    size_t at = applied_position(e, uid);
    return at < e->count && e->applied[at].uid == uid ? &e->applied[at] : NULL;
}

static int backend_apply(struct enforcer *e, uid_t uid, const struct limits *l, char *err,
                         size_t err_len)
{
    if (e->backend == BACKEND_SYSTEMD)
        return systemd_backend_apply(&e->systemd, uid, l, err, err_len);
    return cgroupfs_apply(&e->cgroupfs, uid, l, err, err_len);
}

int enforcer_set_limits(struct enforcer *e, uid_t uid, const struct limits *l,
                        uint64_t retry_usec, char *err, size_t err_len)
{
    struct applied_limits *a = find_applied(e, uid);
    uint64_t now = env_boottime(e->env);
    if (a && limits_equal(&a->limits, l) && (!a->failed || now < a->retry_at) &&
        !a->held_above)
        return 0;
    if (!a) {
        size_t at = applied_position(e, uid);
        e->applied = insert_at(e->applied, &e->count, &e->capacity, sizeof(*e->applied), at);
        a = &e->applied[at];
        a->uid = uid;
    }
    bool was_held = a->held_above && limits_equal(&a->limits, l);
    a->limits = *l;
    int rc = backend_apply(e, uid, l, err, err_len);
    a->failed = rc < 0;
    a->held_above = rc > 0;
    a->retry_at = now + retry_usec;
    /* Held above: tried again at every call, said once. */
    if (a->held_above)
        return was_held ? 0 : 2;
    return a->failed ? -1 : 1;
}

/* Whether pid is in a Slurm job's cgroup now.  The sampler hands over
 * no job's process, but a process seen outside its owner's cgroup may
 * have been placed in a job since (pam_slurm_adopt adopts an ssh
 * session into the job it reaches): read again just before the move. */
static bool in_slurm_job(const char *proc_root, pid_t pid)
{
    char path[64], buf[4096];
    snprintf(path, sizeof(path), "%s/%d/cgroup", proc_root, (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    ssize_t n = fd >= 0 ? procfs_pread(fd, buf, sizeof(buf)) : -1;
    if (fd >= 0)
        close(fd);
    return n > 0 && slurm_job_of_cgroup(buf, (size_t)n) > 0;
}

int enforcer_adopt(struct enforcer *e, uid_t uid, pid_t pid, uint64_t start_time, char *err,
                   size_t err_len)
{
    /* The pid may have been reused since the sample: a pidfd pins the
     * process, checked to be the one seen; what remains is the moment
     * between the check and the write, which takes a pid number. */
    int pidfd = pidfd_open_(pid);
    if (pidfd < 0 || !process_is(e->env->proc, pid, start_time)) {
        if (pidfd >= 0)
            close(pidfd);
        return 1;
    }
    if (in_slurm_job(e->env->proc, pid)) {
        close(pidfd);
        return 2;
    }
    int rc = e->backend == BACKEND_SYSTEMD
                 ? systemd_backend_adopt(&e->systemd, uid, pid, start_time, err, err_len)
                 : cgroupfs_attach(&e->cgroupfs, uid, pid, err, err_len);
    close(pidfd);
    if (rc < 0 && strstr(err, "No such process"))
        return 1;
    /* A cron job of a user with no session: systemd made the slice just
     * now, and limits that failed on it go on at once. */
    struct applied_limits *a = find_applied(e, uid);
    if (rc == 0 && a && a->failed)
        a->retry_at = 0;
    return rc < 0 ? -1 : 0;
}

void enforcer_remove_empty(struct enforcer *e, bool (*busy)(uid_t uid, void *arg), void *arg)
{
    if (e->backend != BACKEND_CGROUPFS)
        return;
    size_t kept = 0;
    for (size_t i = 0; i < e->count; i++)
        if ((busy && busy(e->applied[i].uid, arg)) ||
            cgroupfs_remove_if_empty(&e->cgroupfs, e->applied[i].uid) == 0)
            e->applied[kept++] = e->applied[i];
    e->count = kept;
}

void enforcer_close(struct enforcer *e, bool release)
{
    char err[512];
    static const struct limits none = {0, 0, 0};
    for (size_t i = 0; release && i < e->count; i++)
        backend_apply(e, e->applied[i].uid, &none, err, sizeof(err));
    stopper_free(&e->stopper);
    if (e->lock_fd >= 0)
        close(e->lock_fd);
    if (e->backend == BACKEND_SYSTEMD)
        systemd_backend_close(&e->systemd);
    else
        cgroupfs_close(&e->cgroupfs);
    free(e->applied);
    memset(e, 0, sizeof(*e));
    e->lock_fd = -1;
}

/* Every user-UID[.slice] directory in dir (user-UID.slice.d too: the
 * drop-ins systemd keeps for a slice, whose user may have logged out). */
static int release_listed(struct enforcer *e, const char *dir)
{
    static const struct limits none = {0, 0, 0};
    char err[1024]; /* a cgroup that stays: two paths and why */
    DIR *d = opendir(dir);
    if (!d)
        return 0; /* nothing was ever made there */
    int failed = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        char name[sizeof(de->d_name)];
        uid_t uid;
        memcpy(name, de->d_name, sizeof(name));
        size_t len = strlen(name);
        if (len > 8 && strcmp(name + len - 8, ".slice.d") == 0)
            name[len - 2] = '\0';
        if (de->d_type != DT_DIR || counters_parse_name(name, &uid) < 0)
            continue;
        if (backend_apply(e, uid, &none, err, sizeof(err)) < 0) {
            fprintf(stderr, "loginguardd: cannot lift the limits of %s: %s\n", name, err);
            failed++;
        } else if (e->backend == BACKEND_CGROUPFS &&
                   cgroupfs_release_user(&e->cgroupfs, uid, err, sizeof(err)) < 0) {
            fprintf(stderr, "loginguardd: %s\n", err);
            failed++;
        }
    }
    closedir(d);
    return failed;
}

int enforcer_release_all(struct enforcer *e)
{
    char dir[4096];
    int failed = release_listed(e, written_cgroups(e, dir, sizeof(dir)));
    if (e->backend == BACKEND_SYSTEMD) {
        snprintf(dir, sizeof(dir), "%s/systemd/system.control", e->env->run);
        failed += release_listed(e, dir);
    }
    /* The parent goes last, once nothing of the users' is left in it. */
    if (e->backend == BACKEND_CGROUPFS) {
        char err[1024];
        const char *parent = written_cgroups(e, dir, sizeof(dir));
        if (failed)
            fprintf(stderr, "loginguardd: kept %s: it still holds the user cgroups above\n",
                    parent);
        else if (cgroupfs_release_parent(&e->cgroupfs, err, sizeof(err)) < 0) {
            fprintf(stderr, "loginguardd: %s\n", err);
            failed++;
        }
    }
    return failed;
}
