/* Reading one process: its stat through a held descriptor, where it is
 * (its owner's cgroup or not), and its usage since the last reading. */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "observe/sampler.h"
#include "observe/sampler_parts.h"
#include "units.h"
#include "util.h"


/* Walking /proc: the pids of its numeric entries, 0 at the end. */
pid_t next_proc_pid(struct sampler *s)
{
    struct dirent *de;
    while ((de = readdir(s->proc_dir)) != NULL)
        if (de->d_name[0] >= '1' && de->d_name[0] <= '9')
            return (pid_t)strtol(de->d_name, NULL, 10);
    return 0;
}

pid_t first_proc_pid(struct sampler *s)
{
    rewinddir(s->proc_dir);
    return next_proc_pid(s);
}

static int open_in_proc(const struct sampler *s, pid_t pid, const char *file)
{
    char name[48];
    snprintf(name, sizeof(name), "%d/%s", (int)pid, file);
    return openat(s->proc_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
}

/* Hold schedstat for a single-threaded process, stat for one with
 * threads (schedstat counts the main thread only); nothing for a zombie
 * (see update_usage), which never runs again, nor past a cap (FD_RESERVE,
 * HELD_PER_OWNER): stat is then opened by path at every sample. */
static void hold_descriptor(struct sampler *s, struct tracked_proc *t)
{
    bool want_sched = t->threads == 1;
    if (t->held_fd >= 0 && t->held_is_sched == want_sched && !t->zombie)
        return;
    release_descriptor(s, t);
    if (t->zombie)
        return;
    uint32_t *owner_held = owner_held_of(s, t->owner);
    if (s->stats.held_fds >= s->held_max || *owner_held >= HELD_PER_OWNER) {
        s->stats.held_refused++;
        return;
    }
    t->held_fd = open_in_proc(s, t->pid, want_sched ? "schedstat" : "stat");
    t->held_is_sched = want_sched;
    t->sched_runtime = 0;
    if (t->held_fd >= 0) {
        s->stats.held_fds++;
        (*owner_held)++;
    }
}

/* pread the held stat, or open it by path. */
static ssize_t read_stat(const struct sampler *s, const struct tracked_proc *t, char *buf)
{
    if (t->held_fd >= 0 && !t->held_is_sched)
        return procfs_pread(t->held_fd, buf, STAT_BUF - 1);
    int fd = open_in_proc(s, t->pid, "stat");
    if (fd < 0)
        return -1;
    ssize_t n = procfs_pread(fd, buf, STAT_BUF - 1);
    close(fd);
    return n;
}

/* The process's stat, if it still is the process t was. */
bool read_own_stat(const struct sampler *s, const struct tracked_proc *t,
                          struct proc_stat *st)
{
    char buf[STAT_BUF];
    ssize_t n = read_stat(s, t, buf);
    return n > 0 && procfs_parse_stat(buf, (size_t)n, st) == 0 && st->pid == t->pid &&
           st->start_time == t->start_time;
}

/* The held schedstat's run time; -1 when the process is gone. */
int read_proc_runtime(const struct tracked_proc *t, uint64_t *runtime)
{
    char buf[128];
    ssize_t n = procfs_pread(t->held_fd, buf, sizeof(buf) - 1);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    char *end;
    *runtime = strtoull(buf, &end, 10);
    return end == buf ? -1 : 0;
}

/* ---- where a process is: a Slurm job, its owner's cgroup ---- */

/* t's /proc/PID/cgroup into buf (CGROUP_BUF bytes): its length, or -1.
 * A text that fills buf may end in the middle of a line (a user can make
 * their cgroups' paths long): only its whole lines are kept, so that a
 * job's id is never read cut short. */
static ssize_t read_cgroup(const struct sampler *s, const struct tracked_proc *t, int dirfd,
                           char *buf)
{
    int fd = dirfd >= 0 ? openat(dirfd, "cgroup", O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
                        : open_in_proc(s, t->pid, "cgroup");
    if (fd < 0)
        return -1;
    ssize_t n = procfs_pread(fd, buf, CGROUP_BUF);
    close(fd);
    if (n == CGROUP_BUF) {
        const char *last = memrchr(buf, '\n', (size_t)n);
        n = last ? last + 1 - buf : 0;
    }
    return n;
}

/* Whether t is a Slurm job's (look: see place_job), from its cgroup and
 * its parent.  An exec is where a process Slurm placed in a job's cgroup
 * starts the task, so it is asked again then. */
static void read_job(struct sampler *s, struct tracked_proc *t, int dirfd, bool look)
{
    char buf[CGROUP_BUF];
    ssize_t n = read_cgroup(s, t, dirfd, buf);
    place_job(s, t, buf, n > 0 ? (size_t)n : 0, look);
}

/* Whether t is a Slurm job's, and with counters whether it is in its
 * owner's cgroup, both from /proc/PID/cgroup.  A job's process is not
 * outside: Slurm's cgroup is where it belongs. */
void read_proc_place(struct sampler *s, struct tracked_proc *t, int dirfd, bool look)
{
    char buf[CGROUP_BUF];
    ssize_t n = read_cgroup(s, t, dirfd, buf);
    /* Unread (no cgroups here, or it is gone): its parent may say. */
    place_job(s, t, buf, n > 0 ? (size_t)n : 0, look);
    if (n <= 0 || !s->use_counters)
        return;
    t->outside = !t->slurm_job && !counters_holds(&s->counters, buf, (size_t)n, t->owner);
    s->watch_dirty |= t->outside;
}

void sampler_adopted(struct sampler *s, pid_t pid)
{
    struct tracked_proc *t = lookup_proc(s, pid);
    if (!t)
        return;
    t->outside = false;
    t->arrived = t->rss_pages * (uint64_t)s->page_size >= ARRIVED_MIN;
    s->watch_dirty |= t->arrived;
}

/* ---- usage ---- */

/* CPU rate since this process's last reading.  A first reading is
 * averaged over the process's life, but never over less than the
 * interval, so a process born mid-interval adds what it really used to
 * its user's total.  A reading too soon after the last one (the sweep
 * found it just before a sample) says nothing yet: the rate stands. */
static void update_usage(const struct sampler *s, struct tracked_proc *t,
                         const struct proc_stat *st, uint64_t now, uint64_t interval,
                         bool first)
{
    uint64_t ticks = st->utime + st->stime;
    double hz = (double)s->hz;
    if (first) {
        uint64_t born = st->start_time * USEC_PER_SEC / (uint64_t)s->hz;
        uint64_t age = now > born ? now - born : 0;
        t->cpu = (double)ticks / hz / ((double)(age > interval ? age : interval) / 1e6);
        t->ticks = ticks;
        t->read_at = now;
    } else if (now - t->read_at >= interval / 2) {
        double seconds = (double)(now - t->read_at) / 1e6;
        t->cpu = ticks >= t->ticks ? (double)(ticks - t->ticks) / hz / seconds : 0;
        t->ticks = ticks;
        t->read_at = now;
    }
    /* Ended and not reaped: what it used came with its exit record.  (A
     * leader that ended while its threads run shows Z too, with more
     * than one thread: that one is alive.) */
    t->zombie = st->state == 'Z' && st->num_threads <= 1;
    if (t->zombie)
        t->cpu = 0;
    t->rss_pages = st->rss_pages;
    t->threads = st->num_threads > UINT32_MAX ? UINT32_MAX : (uint32_t)st->num_threads;
    t->ppid = st->ppid;
    t->session = st->session;
}

/* After an exec (or, without the proc connector, a new name that may be
 * one): a new name and program.  Returns -1 when the pid is gone or now
 * another process's. */
int reread_program(struct sampler *s, struct tracked_proc *t)
{
    struct proc_stat st;
    int dirfd = open_proc_dir(s, t->pid);
    if (dirfd < 0 || !read_own_stat(s, t, &st)) {
        if (dirfd >= 0)
            close(dirfd);
        return -1;
    }
    memcpy(t->comm, st.comm, sizeof(t->comm));
    read_program(s, t, dirfd);
    read_job(s, t, dirfd, true);
    close(dirfd);
    return 0;
}

/* Read a known process.  Returns -1 when it is gone (the caller forgets it). */
/* Whether t's executable is another than its program's (an exec whose
 * event has not been read yet).  One readlink, at most once a sample. */
static bool exe_changed(const struct sampler *s, const struct tracked_proc *t)
{
    char name[32], path[EXE_SHOWN + 1];
    snprintf(name, sizeof(name), "%d/exe", (int)t->pid);
    ssize_t n = readlinkat(s->proc_fd, name, path, sizeof(path) - 1);
    const char *known = t->prog ? t->prog->exe : NULL;
    if (n <= 0 || !known)
        return (n > 0) != (known != NULL);
    path[n] = '\0';
    return strncmp(path, known, EXE_SHOWN) != 0;
}

int refresh_proc(struct sampler *s, struct tracked_proc *t,
                   uint64_t now, uint64_t interval)
{
    /* A zombie costs nothing: with the connector a new process on its pid
     * is reported (a fork), and the sweep forgets it once it is reaped. */
    if (t->zombie && s->events_live)
        return 0;
    if (t->held_fd >= 0 && t->held_is_sched) {
        uint64_t runtime;
        if (read_proc_runtime(t, &runtime) < 0)
            return -1;
        s->stats.procs_read++;
        if (runtime == t->sched_runtime && !t->stat_due) {
            /* It has not run: same ticks, same program, and the same
             * memory unless another process wrote into it (its parent
             * with process_vm_writev, a tracer): stat is read again
             * after every sweep, whatever the run time. */
            if (now - t->read_at >= interval / 2) {
                t->cpu = 0;
                t->read_at = now;
            }
            return 0;
        }
        t->sched_runtime = runtime;
    }
    struct proc_stat st;
    if (!read_own_stat(s, t, &st))
        return -1;
    if (strcmp(st.comm, t->comm) != 0) {
        memcpy(t->comm, st.comm, sizeof(t->comm));
        /* A rename changes only the name: only the rules' comm parts
         * are checked again.  Without the proc connector a new name may
         * also be an exec, which is not reported otherwise; with it, the
         * exec's event may still be on its way (it came after the last
         * drain): a new executable says so. */
        if (s->events_live && !exe_changed(s, t))
            judge_proc(s, t);
        else if (reread_program(s, t) < 0)
            return -1;
    }
    update_usage(s, t, &st, now, interval, false);
    t->stat_due = false;
    hold_descriptor(s, t);
    ask_code_check(s, t);
    return 0;
}

void remember_new_proc(struct sampler *s, const struct tracked_proc *t)
{
    s->new_procs = grow_array(s->new_procs, s->new_count, &s->new_capacity,
                              sizeof(*s->new_procs));
    s->new_procs[s->new_count++] = (struct new_proc){t->pid, t->start_time, t->owner, t->class,
                                                      t->outside};
}

/* First sight of a pid.  Returns the new entry or NULL (already gone). */
struct tracked_proc *discover_proc(struct sampler *s, pid_t pid,
                                     uint64_t now, uint64_t interval)
{
    int dirfd = open_proc_dir(s, pid);
    if (dirfd < 0)
        return NULL;
    struct stat dir_st;
    if (fstat(dirfd, &dir_st) < 0) {
        close(dirfd);
        return NULL;
    }
    struct tracked_proc *t = xcalloc(1, sizeof(*t));
    t->pid = pid;
    t->uid = dir_st.st_uid;
    t->owner = subuid_owner(&s->subuids, t->uid);
    t->held_fd = -1;
    t->generation = s->generation;
    /* root's daemons, kernel threads and system users are never judged:
     * remember them without a descriptor (see still_ignored).  A
     * subordinate uid is judged by its owner's. */
    t->ignored = t->owner < s->scope.min_uid;
    char buf[STAT_BUF];
    struct proc_stat st;
    ssize_t n = read_stat(s, t, buf);
    if (n <= 0 || procfs_parse_stat(buf, (size_t)n, &st) < 0 || st.pid != pid) {
        close(dirfd);
        free_proc(s, t);
        return NULL;
    }
    s->stats.procs_read++;
    t->start_time = st.start_time;
    memcpy(t->comm, st.comm, sizeof(t->comm));
    if (!t->ignored) {
        update_usage(s, t, &st, now, interval, true);
        read_program(s, t, dirfd);
        read_proc_place(s, t, dirfd, true);
        hold_descriptor(s, t);
        remember_new_proc(s, t);
    }
    close(dirfd);
    insert_proc(s, t);
    return t;
}

/* Whether /proc/PID still belongs to the uid it had when first seen. */
bool same_proc_owner(const struct sampler *s, const struct tracked_proc *t)
{
    char name[24];
    struct stat st;
    snprintf(name, sizeof(name), "%d", (int)t->pid);
    return fstatat(s->proc_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_uid == t->uid;
}

/* A process is born with its parent's uid and may take the user's a
 * moment later (sshd's session child, sudo, su, a daemon's fork-setuid-
 * exec).  Such a switch happens young, so a young ignored process has its
 * uid looked at every sample; older ones wait for the sweep. */
bool proc_still_ignored(const struct sampler *s,
                          const struct tracked_proc *t, uint64_t now)
{
    uint64_t born = t->start_time * USEC_PER_SEC / (uint64_t)s->hz;
    return now > born + s->scope.scan_interval || same_proc_owner(s, t);
}

/* Make sure pid is tracked and freshly read this generation. */
struct tracked_proc *visit_proc(struct sampler *s, pid_t pid,
                                  uint64_t now, uint64_t interval)
{
    struct tracked_proc *t = lookup_proc(s, pid);
    if (t && t->generation == s->generation)
        return t;
    if (t && !t->ignored) {
        if (refresh_proc(s, t, now, interval) == 0) {
            t->generation = s->generation;
            return t;
        }
        forget_proc(s, t); /* gone, or its pid now belongs to someone else */
        t = NULL;
    }
    if (t && proc_still_ignored(s, t, now)) {
        t->generation = s->generation;
        return t;
    }
    if (t)
        forget_proc(s, t);
    return discover_proc(s, pid, now, interval);
}
