/* The sampler's news between samples: processes that ended (taskstats,
 * their CPU credited to their owner) and the proc connector's forks,
 * execs and uid changes. */

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
#include "slurm_job.h"
#include "units.h"
#include "util.h"

static uint64_t ticks_usec(const struct sampler *s, uint64_t ticks)
{
    return ticks * USEC_PER_SEC / (uint64_t)s->hz;
}

static void credit(struct sampler *s, uid_t owner, uint64_t usec)
{
    size_t at;
    s->credits = uid_entry(s->credits, &s->credit_count, &s->credit_capacity,
                           sizeof(*s->credits), offsetof(struct exit_credit, owner), owner, &at);
    s->credits[at].cpu_usec += usec;
}

/* Whether t is the process an exit record is about: the same pid,
 * started at the same moment (taskstats gives whole seconds). */
static bool same_start(const struct sampler *s, const struct tracked_proc *t,
                       const struct ts_exit *e)
{
    uint64_t started = s->boot_realtime_usec + ticks_usec(s, t->start_time);
    uint64_t diff = started > e->start_realtime_usec ? started - e->start_realtime_usec
                                                     : e->start_realtime_usec - started;
    return diff <= 2 * USEC_PER_SEC;
}

/* A process that lives less than a sample is never read, and one read
 * once takes what it used since to its end: a loop of 0.3 s busy
 * processes would pass for a tenth of what it uses.  The kernel's exit
 * record has it all, for processes reaped by their parent and orphans
 * alike. */
void sampler_note_exit(struct sampler *s, const struct ts_exit *e)
{
    uid_t owner = subuid_owner(&s->subuids, e->uid);
    if (owner < s->scope.min_uid)
        return;
    struct tracked_proc *t = lookup_proc(s, e->tgid);
    /* A Slurm job's: Slurm's, no one's here. */
    if (t && !t->ignored && same_start(s, t, e) && t->slurm_job)
        return;
    /* (Before Linux 5.19 a record is one thread's: of a process that was
     * read, what it adds cannot be told.  One handed over ungrouped is a
     * thread of a process that may live on: if it was read, its stat has
     * that thread's CPU.) */
    if (t && !t->ignored && same_start(s, t, e) && (e->per_thread || e->ungrouped))
        return;
    if (t && !t->ignored && same_start(s, t, e)) {
        /* With counters, what ran in its owner's cgroup is in the counter. */
        uint64_t seen = ticks_usec(s, t->ticks);
        if ((!s->use_counters || t->outside) && e->cpu_usec > seen)
            credit(s, owner, e->cpu_usec - seen);
        /* A read of what is left of it (a zombie) adds nothing more. */
        t->ticks = e->cpu_usec * (uint64_t)s->hz / USEC_PER_SEC;
        return;
    }
    /* Never read: born and gone between two samples.  With counters its
     * CPU is in its cgroup's counter, unless it ran outside, as the
     * parent it was forked from does.  Born of a Slurm job's process, it
     * was the job's. */
    const struct tracked_proc *parent = lookup_proc(s, e->ppid);
    if (parent && !parent->ignored && parent->slurm_job)
        return;
    if (s->use_counters && (!parent || !parent->outside))
        return;
    credit(s, owner, e->cpu_usec);
}

/* ---- news from the proc connector ---- */

enum {
    MARK_FORKED = 1, /* a new process took this pid */
    MARK_EXECED = 2,
    MARK_UID = 4,
    MARK_GONE = 8,   /* the last word about this pid was its exit */
};

void sampler_note_event(struct sampler *s, const struct pc_event *ev)
{
    unsigned *f = pid_marks_get(&s->marks, ev->pid);
    switch (ev->kind) {
    case PC_FORK:
        *f = (*f & ~(unsigned)MARK_GONE) | MARK_FORKED;
        break;
    case PC_EXEC:
        /* An exec from another thread than the leader ends the leader
         * first (an exit event for the pid), then the process goes on
         * under the same pid: the exec is the last word. */
        *f = (*f & ~(unsigned)MARK_GONE) | MARK_EXECED;
        if (s->exec_count < EXEC_JUDGE_MAX)
            s->execs[s->exec_count++] = ev->pid;
        break;
    case PC_UID:
        *f |= MARK_UID;
        if (s->uid_change_count < EXEC_JUDGE_MAX)
            s->uid_changes[s->uid_change_count++] = ev->pid;
        break;
    case PC_EXIT:
        *f |= MARK_GONE;
        break;
    }
}

/* Whether pid runs a forbidden program, by its executable and name, for
 * a person the rules apply to. */
static bool runs_forbidden(struct sampler *s, pid_t pid)
{
    int dirfd = open_proc_dir(s, pid);
    if (dirfd < 0)
        return false;
    bool forbidden = false;
    struct stat dir_st;
    char buf[STAT_BUF];
    struct proc_stat st;
    int fd = openat(dirfd, "stat", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    ssize_t n = fd >= 0 ? procfs_pread(fd, buf, STAT_BUF - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n > 0 && procfs_parse_stat(buf, (size_t)n, &st) == 0 && fstat(dirfd, &dir_st) == 0 &&
        subuid_owner(&s->subuids, dir_st.st_uid) >= s->scope.min_uid) {
        char *exe = read_exe(dirfd);
        struct program_facts f = {.exe = exe};
        if (exe)
            exe_identity(s, dirfd, &f);
        struct judge *j = s->scope.judge;
        const struct program *prog = j->program(j, &f);
        forbidden = j->verdict(j, prog, st.comm, false).class == CLASS_FORBIDDEN;
        j->put(j, prog);
        free(exe);
    }
    close(dirfd);
    return forbidden;
}

bool sampler_forbidden_exec(struct sampler *s)
{
    bool found = false;
    for (size_t i = 0; i < s->exec_count && !found; i++)
        found = runs_forbidden(s, s->execs[i]);
    s->exec_count = 0;
    return found;
}

/* Whether pid now runs as a person, outside their cgroup (not in a Slurm
 * job's, which is where Slurm starts a job's task). */
static bool runs_outside(struct sampler *s, pid_t pid)
{
    int dirfd = open_proc_dir(s, pid);
    if (dirfd < 0)
        return false;
    bool outside = false;
    struct stat dir_st;
    if (fstat(dirfd, &dir_st) == 0) {
        uid_t owner = subuid_owner(&s->subuids, dir_st.st_uid);
        char buf[CGROUP_BUF];
        int fd = owner >= s->scope.min_uid ? openat(dirfd, "cgroup", O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
                                     : -1;
        ssize_t n = fd >= 0 ? procfs_pread(fd, buf, sizeof(buf)) : -1;
        if (fd >= 0)
            close(fd);
        outside = n > 0 && !counters_holds(&s->counters, buf, (size_t)n, owner) &&
                  slurm_job_of_cgroup(buf, (size_t)n) < 0;
    }
    close(dirfd);
    return outside;
}

bool sampler_arrived_outside(struct sampler *s, bool look)
{
    bool found = false;
    for (size_t i = 0; look && s->use_counters && i < s->uid_change_count && !found; i++)
        found = runs_outside(s, s->uid_changes[i]);
    s->uid_change_count = 0;
    return found;
}

void sampler_note_lost(struct sampler *s)
{
    s->rescan = true;
}

void sampler_events_live(struct sampler *s, bool live)
{
    s->events_live = live;
    s->rescan = s->rescan || live;
    pid_marks_clear(&s->marks);
    s->exec_count = s->uid_change_count = 0;
}

/* What the connector reported since the last sample: new processes are
 * read (a forbidden program is judged at this sample, a stray one is
 * handed to the backend), exec'd ones classified again, a uid change
 * looked at, the dead forgotten.  A process born and gone within the
 * interval costs nothing. */
void apply_marks(struct sampler *s, uint64_t now,
                        uint64_t interval)
{
    for (size_t i = 0; i < s->marks.count; i++) {
        pid_t pid = s->marks.marks[i].pid;
        unsigned f = s->marks.marks[i].flags;
        struct tracked_proc *t = lookup_proc(s, pid);
        /* A fork names a new process: what had the pid before is gone. */
        if (t && ((f & (MARK_GONE | MARK_FORKED)) || ((f & MARK_UID) && !same_proc_owner(s, t)))) {
            forget_proc(s, t);
            t = NULL;
        }
        if (f & MARK_GONE)
            continue;
        if (!t)
            discover_proc(s, pid, now, interval);
        else if ((f & MARK_EXECED) && !t->ignored && reread_program(s, t) < 0)
            forget_proc(s, t);
    }
    pid_marks_clear(&s->marks);
    s->exec_count = s->uid_change_count = 0; /* judged here */
}
