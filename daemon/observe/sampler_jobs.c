/* Which processes are a Slurm job's.  Slurm limits them already (its own
 * cgroups, or its process tracking), so they are not the daemon's to
 * judge, count or move.  What decides, in this order:
 *  - the process's cgroup, where Slurm's cgroup plugins made one for the
 *    job (slurm_job.h: only where root alone makes cgroups);
 *  - else its parent, where Slurm tracks processes by their tree
 *    (proctrack/linuxproc, no job cgroups): the child of a job's process
 *    is one, and so is the child of Slurm's step daemon, a process whose
 *    every uid is root's, named slurmstepd, running a regular file that
 *    root owns and no one else may write.  A user may name a program of
 *    their own slurmstepd, but cannot run it as root.
 * A process whose job came from its parent stays the job's while that
 * parent is (checked at each sweep): one that outlives it, reparented
 * (a daemon a job started, a job's orphan), is Slurm's no longer, as
 * Slurm's linuxproc loses it too, and it is judged from then on.
 *
 * What this costs a user cannot make large: the cgroup file is read where
 * the sampler read a process anyway (its first sight, an exec, a stray's
 * place); a parent is read only when the table says it is a job's (its
 * start time, one pread), or at a child's first sight or exec when the
 * table does not know it or it is root's; Slurm's step daemon alone
 * (root's) costs its status, exe and title.  A sweep asks the table once
 * a process, and reads the job's processes. */

#include "config.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "observe/sampler.h"
#include "observe/sampler_parts.h"
#include "slurm_job.h"
#include "util.h"

/* pid's stat read now; false when it is gone or unreadable. */
static bool stat_now(const struct sampler *s, pid_t pid, struct proc_stat *st)
{
    uid_t owner;
    return procfs_read_process(s->proc_fd, pid, &owner, st) && st->pid == pid;
}

/* Every uid of the process behind dirfd (real, effective, saved,
 * filesystem) is root's: not a setuid program a user started. */
static bool all_uids_root(int dirfd)
{
    char buf[2048];
    int fd = openat(dirfd, "status", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    ssize_t n = fd >= 0 ? procfs_pread(fd, buf, sizeof(buf) - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    const char *uids = strstr(buf, "\nUid:");
    return uids && strncmp(uids, "\nUid:\t0\t0\t0\t0\n", 14) == 0;
}

/* The process behind dirfd runs a regular file of root's that only root
 * may write.  Asked with AT_STATX_DONT_SYNC: no filesystem is waited on. */
static bool runs_roots_file(int dirfd)
{
    struct statx x;
    return statx(dirfd, "exe", AT_STATX_DONT_SYNC, STATX_TYPE | STATX_MODE | STATX_UID, &x) == 0 &&
           (x.stx_mask & (STATX_TYPE | STATX_MODE | STATX_UID)) ==
               (STATX_TYPE | STATX_MODE | STATX_UID) &&
           S_ISREG(x.stx_mode) && x.stx_uid == 0 && !(x.stx_mode & (S_IWGRP | S_IWOTH));
}

/* The job in slurmstepd's title (its command line), or SLURM_JOB_UNKNOWN. */
static uint32_t title_job(int dirfd)
{
    char buf[64];
    int fd = openat(dirfd, "cmdline", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    ssize_t n = fd >= 0 ? procfs_pread(fd, buf, sizeof(buf)) : -1;
    if (fd >= 0)
        close(fd);
    int64_t job = n > 0 ? slurm_job_of_title(buf, (size_t)n) : -1;
    return job > 0 ? (uint32_t)job : SLURM_JOB_UNKNOWN;
}

/* The stat of the process behind dirfd, if it is pid's. */
static bool stat_at(int dirfd, pid_t pid, struct proc_stat *st)
{
    char buf[1024];
    int fd = openat(dirfd, "stat", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    ssize_t n = fd >= 0 ? procfs_pread(fd, buf, sizeof(buf) - 1) : -1;
    if (fd >= 0)
        close(fd);
    return n > 0 && procfs_parse_stat(buf, (size_t)n, st) == 0 && st->pid == pid;
}

/* Whether pid is Slurm's step daemon: its job (SLURM_JOB_UNKNOWN when
 * its title names none), else 0.  Every answer from the one directory,
 * so that all are about one process; the cheap questions first (a root
 * parent of a user's process is most often sshd, cron or init). */
static uint32_t stepd_job(const struct sampler *s, pid_t pid)
{
    int dirfd = open_proc_dir(s, pid);
    if (dirfd < 0)
        return 0;
    struct stat dir;
    struct proc_stat st;
    uint32_t job = fstat(dirfd, &dir) == 0 && dir.st_uid == 0 && stat_at(dirfd, pid, &st) &&
                           strcmp(st.comm, SLURM_STEPD_COMM) == 0 && all_uids_root(dirfd) &&
                           runs_roots_file(dirfd)
                       ? title_job(dirfd)
                       : 0;
    close(dirfd);
    return job;
}

/* The job t is part of by its parent, or 0.  A parent the table knows as
 * a user's process answers with its job, if it is still that process (its
 * pid may have been taken by another since).  A root parent is read: with
 * look, whatever the table says of it (a process's first sight, when the
 * table may not know the parent yet, or know an older process by its
 * pid); without, only when the table knows it as a slurmstepd. */
static uint32_t job_of_parent(const struct sampler *s, const struct tracked_proc *t, bool look)
{
    if (t->ppid <= 0 || t->ppid == t->pid)
        return 0;
    struct proc_stat st;
    const struct tracked_proc *p = lookup_proc(s, t->ppid);
    if (p && !p->ignored)
        return p->slurm_job && stat_now(s, p->pid, &st) && st.start_time == p->start_time
                   ? p->slurm_job
                   : 0;
    if (!look && (!p || p->uid != 0 || strcmp(p->comm, SLURM_STEPD_COMM) != 0))
        return 0;
    return stepd_job(s, t->ppid);
}

static void set_job(struct sampler *s, struct tracked_proc *t, uint32_t job, bool by_tree)
{
    /* Joined or left: the watched processes are listed again (a job's
     * never are; one that left may be a stray now, found by the sweep). */
    s->watch_dirty |= (t->slurm_job != 0) != (job != 0);
    t->slurm_job = job;
    t->job_by_tree = job && by_tree;
    /* Slurm's cgroup, or Slurm's tracking, is where it belongs. */
    if (job)
        t->outside = t->suspect = t->arrived = false;
}

/* t's parent read now into t->ppid; false when t is gone. */
static bool reread_parent(const struct sampler *s, struct tracked_proc *t)
{
    struct proc_stat st;
    if (!stat_now(s, t->pid, &st) || st.start_time != t->start_time)
        return false;
    t->ppid = st.ppid;
    return true;
}

/* t's job by its parent.  To join one, t's parent is read again: one
 * known from an older reading may have ended since (t reparented) and
 * left its pid to a job's process. */
static void place_by_parent(struct sampler *s, struct tracked_proc *t, bool look)
{
    uint32_t job = job_of_parent(s, t, look);
    if (job && !t->slurm_job)
        job = reread_parent(s, t) ? job_of_parent(s, t, look) : 0;
    set_job(s, t, job, true);
}

/* cgroup: the text of t's /proc/PID/cgroup (len bytes). */
void place_job(struct sampler *s, struct tracked_proc *t, const char *cgroup, size_t len,
               bool look)
{
    int64_t job = slurm_job_of_cgroup(cgroup, len);
    if (job > 0)
        set_job(s, t, (uint32_t)job, false);
    else
        place_by_parent(s, t, look);
}

/* At a sweep (t's parent as last read): a job's process by its parent
 * whose parent is no job's any more is Slurm's no longer; a process
 * whose parent the table did not know at its first sight may be one. */
void recheck_job(struct sampler *s, struct tracked_proc *t)
{
    if (!t->ignored && !(t->slurm_job && !t->job_by_tree))
        place_by_parent(s, t, false);
}

/* Whether the table knows t's parent as a job's process, or as a
 * slurmstepd of root's (as recheck_job found it this sweep). */
static bool parent_in_job(const struct sampler *s, const struct tracked_proc *t)
{
    const struct tracked_proc *p = lookup_proc(s, t->ppid);
    if (!p)
        return false;
    return p->ignored ? p->uid == 0 && strcmp(p->comm, SLURM_STEPD_COMM) == 0 : p->slurm_job;
}

/* Processes that left a job leave it with all they started: after the
 * sweep's rechecks, a job's process by its parent whose parent is no
 * job's now leaves too, whatever order the table holds a chain of them
 * in.  Passes over the table alone, at most JOB_SETTLE_PASSES (the rest
 * of a longer chain leaves at the next sweeps). */
#define JOB_SETTLE_PASSES 16

void settle_jobs(struct sampler *s)
{
    bool changed = true;
    for (int pass = 0; changed && pass < JOB_SETTLE_PASSES; pass++) {
        changed = false;
        KNOWN_FOR_EACH(&s->known, t) {
            if (!t->ignored && t->job_by_tree && !parent_in_job(s, t)) {
                set_job(s, t, 0, true);
                changed = true;
            }
        }
    }
}

/* One process's share of a person's Slurm figures. */
struct job_part {
    uid_t owner;
    uint32_t job;
    double cpu;
    uint64_t memory;
};

static int by_owner_and_job(const void *a, const void *b)
{
    const struct job_part *x = a, *y = b;
    if (x->owner != y->owner)
        return x->owner < y->owner ? -1 : 1;
    return x->job < y->job ? -1 : x->job > y->job;
}

/* Each person's jobs on the node, their cores and memory, from the
 * table (its job processes as last read): s->slurm anew. */
void count_jobs(struct sampler *s)
{
    struct job_part *parts = xreallocarray(NULL, s->known.count + 1, sizeof(*parts));
    size_t n = 0;
    KNOWN_FOR_EACH(&s->known, t) {
        if (!t->ignored && t->slurm_job)
            parts[n++] = (struct job_part){t->owner, t->slurm_job, t->cpu,
                                           t->rss_pages * (uint64_t)s->page_size};
    }
    qsort(parts, n, sizeof(*parts), by_owner_and_job);
    s->slurm_count = 0;
    for (size_t i = 0; i < n; i++) {
        struct slurm_job_usage *u = s->slurm_count ? &s->slurm[s->slurm_count - 1] : NULL;
        if (!u || u->owner != parts[i].owner) {
            s->slurm = grow_array(s->slurm, s->slurm_count, &s->slurm_capacity,
                                  sizeof(*s->slurm));
            u = &s->slurm[s->slurm_count++];
            *u = (struct slurm_job_usage){.owner = parts[i].owner};
        }
        u->jobs += i == 0 || parts[i - 1].owner != parts[i].owner ||
                   parts[i - 1].job != parts[i].job;
        u->cpu += parts[i].cpu;
        u->memory += parts[i].memory;
    }
    free(parts);
}
