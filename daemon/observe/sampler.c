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
#include "units.h"
#include "util.h"

#define STAT_BUF 1024
#define CGROUP_BUF 4096
/* A sample waits this long for the command lines it asked for, so that
 * a program judged by its argv is judged at this sample; a reader stuck
 * on a hostile process costs no more. */
#define ARGV_WAIT_USEC (20 * 1000)
#define SUBUID_PATH "/etc/subuid"

/* ---- the table of known processes, keyed by pid ---- */

static size_t bucket_of(const struct sampler *s, pid_t pid)
{
    return ((size_t)pid * 2654435761u) & (s->bucket_count - 1);
}

static struct tracked_proc *lookup(const struct sampler *s, pid_t pid)
{
    for (struct tracked_proc *t = s->buckets[bucket_of(s, pid)]; t; t = t->next)
        if (t->pid == pid)
            return t;
    return NULL;
}

/* How many descriptors owner's processes hold. */
static uint32_t *held_by(struct sampler *s, uid_t owner)
{
    size_t at;
    s->held_by = uid_entry(s->held_by, &s->held_by_count, &s->held_by_capacity,
                           sizeof(*s->held_by), offsetof(struct owner_held, owner), owner, &at);
    return &s->held_by[at].held;
}

/* How many of owner's exempt programs were checked in this sweep. */
static uint32_t *checks_by(struct sampler *s, uid_t owner)
{
    size_t at;
    s->checks_by = uid_entry(s->checks_by, &s->checks_by_count, &s->checks_by_capacity,
                             sizeof(*s->checks_by), offsetof(struct owner_checks, owner), owner,
                             &at);
    return &s->checks_by[at].checks;
}

static void release_descriptor(struct sampler *s, struct tracked_proc *t)
{
    if (t->held_fd >= 0) {
        close(t->held_fd);
        s->stats.held_fds--;
        (*held_by(s, t->owner))--;
    }
    t->held_fd = -1;
}

static void free_proc(struct sampler *s, struct tracked_proc *t)
{
    release_descriptor(s, t);
    s->scope.judge->put(s->scope.judge, t->prog);
    free(t->foreign_code);
    free(t);
}

static void grow_table(struct sampler *s)
{
    size_t old_count = s->bucket_count;
    struct tracked_proc **old = s->buckets;
    s->bucket_count = old_count ? old_count * 2 : 1024;
    s->buckets = xcalloc(s->bucket_count, sizeof(*s->buckets));
    for (size_t i = 0; i < old_count; i++) {
        for (struct tracked_proc *t = old[i], *next; t; t = next) {
            next = t->next;
            size_t b = bucket_of(s, t->pid);
            t->next = s->buckets[b];
            s->buckets[b] = t;
        }
    }
    free(old);
}

static void insert(struct sampler *s, struct tracked_proc *t)
{
    if (s->proc_count >= s->bucket_count)
        grow_table(s);
    size_t b = bucket_of(s, t->pid);
    t->next = s->buckets[b];
    s->buckets[b] = t;
    s->proc_count++;
}

static void forget(struct sampler *s, struct tracked_proc *t)
{
    struct tracked_proc **pp = &s->buckets[bucket_of(s, t->pid)];
    while (*pp != t)
        pp = &(*pp)->next;
    *pp = t->next;
    s->proc_count--;
    free_proc(s, t);
}

/* Drop every entry not seen in the given generation: those processes are gone. */
static void prune(struct sampler *s, uint32_t generation)
{
    for (size_t i = 0; i < s->bucket_count; i++) {
        struct tracked_proc **pp = &s->buckets[i];
        while (*pp) {
            struct tracked_proc *t = *pp;
            if (t->generation == generation) {
                pp = &t->next;
            } else {
                *pp = t->next;
                s->proc_count--;
                free_proc(s, t);
            }
        }
    }
}

/* ---- reading one process ---- */

static int open_proc_dir(const struct sampler *s, pid_t pid)
{
    char name[24];
    snprintf(name, sizeof(name), "%d", (int)pid);
    return openat(s->proc_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
}

/* Walking /proc: the pids of its numeric entries, 0 at the end. */
static pid_t next_pid(struct sampler *s)
{
    struct dirent *de;
    while ((de = readdir(s->proc_dir)) != NULL)
        if (de->d_name[0] >= '1' && de->d_name[0] <= '9')
            return (pid_t)strtol(de->d_name, NULL, 10);
    return 0;
}

static pid_t first_pid(struct sampler *s)
{
    rewinddir(s->proc_dir);
    return next_pid(s);
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
    uint32_t *owner_held = held_by(s, t->owner);
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
static bool read_own_stat(const struct sampler *s, const struct tracked_proc *t,
                          struct proc_stat *st)
{
    char buf[STAT_BUF];
    ssize_t n = read_stat(s, t, buf);
    return n > 0 && procfs_parse_stat(buf, (size_t)n, st) == 0 && st->pid == t->pid &&
           st->start_time == t->start_time;
}

/* The held schedstat's run time; -1 when the process is gone. */
static int read_runtime(const struct tracked_proc *t, uint64_t *runtime)
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

/* ---- what a process runs ---- */

static char *read_exe(int dirfd)
{
    char path[4096];
    ssize_t n = readlinkat(dirfd, "exe", path, sizeof(path) - 1);
    return n > 0 ? xstrndup(path, (size_t)n) : NULL;
}

/* /proc/PID/exe names the file as the process sees it, in its own mount
 * namespace, where a user may bind any program over /usr/sbin/sshd
 * (unshare -Urm).  The path means what it says where the namespace is
 * the daemon's.  Elsewhere what counts is which file the process runs:
 * its device and inode, asked with AT_STATX_DONT_SYNC, so that no
 * filesystem is asked (a user's FUSE server that never answers would
 * hold the daemon), and no path of the user's is walked. */
static void exe_identity(const struct sampler *s, int dirfd, struct program_facts *f)
{
    struct stat ns;
    struct statx file;
    f->exe_trusted = fstatat(dirfd, "ns/mnt", &ns, 0) == 0 && ns.st_dev == s->mnt_ns_dev &&
                     ns.st_ino == s->mnt_ns_ino;
    if (f->exe_trusted ||
        statx(dirfd, "exe", AT_STATX_DONT_SYNC, STATX_INO, &file) != 0 ||
        !(file.stx_mask & STATX_INO))
        return;
    f->exe_file_known = true;
    f->exe_dev = makedev(file.stx_dev_major, file.stx_dev_minor);
    f->exe_ino = file.stx_ino;
}

/* An exempt program that runs code not its own counts like any other. */
static void classify(struct sampler *s, struct tracked_proc *t)
{
    struct verdict v = s->scope.judge->verdict(s->scope.judge, t->prog, t->comm);
    t->class = v.class == CLASS_EXEMPT && t->foreign_code ? CLASS_NONE : v.class;
    s->watch_dirty |= t->class == CLASS_COMPUTE || t->class == CLASS_FORBIDDEN;
    t->rule = v.rule ? v.rule->name : NULL;
    t->rule_parts = v.parts;
}

/* What runs behind dirfd, with the command line a (NULL: not known). */
static void set_program(struct sampler *s, struct tracked_proc *t,
                        int dirfd, const struct argv_answer *a)
{
    char *exe = read_exe(dirfd);
    struct program_facts f = {
        .exe = exe,
        .argv = a ? a->argv : NULL,
        .argv_len = a ? a->len : 0,
        .argv_total = a ? a->total : 0,
        .argv_sha256 = a ? a->sha256 : NULL,
    };
    if (exe)
        exe_identity(s, dirfd, &f);
    struct judge *j = s->scope.judge;
    const struct program *prog = j->program(j, &f);
    j->put(j, t->prog);
    t->prog = prog;
    free(exe);
    classify(s, t);
}

static bool withheld(const struct sampler *s, uid_t owner)
{
    size_t at = uid_position(s->withheld, s->withheld_count, sizeof(*s->withheld), 0, owner);
    return at < s->withheld_count && s->withheld[at] == owner;
}

static void withhold(struct sampler *s, uid_t owner)
{
    size_t at = uid_position(s->withheld, s->withheld_count, sizeof(*s->withheld), 0, owner);
    if (at == s->withheld_count || s->withheld[at] != owner) {
        s->withheld = insert_at(s->withheld, &s->withheld_count, &s->withheld_capacity,
                                sizeof(*s->withheld), at);
        s->withheld[at] = owner;
    }
}

static void ask_argv(struct sampler *s, struct tracked_proc *t)
{
    if (t->argv_blocked || t->argv_pending || withheld(s, t->owner))
        return;
    if (argv_reader_request(&s->argv, t->pid, t->start_time, t->owner) == 0) {
        t->argv_pending = true;
        s->stats.argv_reads++;
    }
}

/* Not checked, not taken on trust (until the next sweep). */
static void distrust(struct sampler *s, struct tracked_proc *t,
                     const char *why)
{
    free(t->foreign_code);
    t->foreign_code = xstrdup(why);
    t->code_known = true;
    t->code_sweep = s->sweeps;
    classify(s, t);
}

/* An exempt program that runs: whether it runs only its own code is
 * asked once a sweep.  An owner whose processes stall the reader gets
 * no answers, and one with more exempt programs running than are
 * checked gets no more checks: those are not taken on trust. */
static void ask_code(struct sampler *s, struct tracked_proc *t)
{
    bool exempt_by_rule = t->class == CLASS_EXEMPT || t->foreign_code;
    if (!exempt_by_rule || t->cpu <= 0 || t->code_pending ||
        (t->code_known && t->code_sweep == s->sweeps))
        return;
    if (withheld(s, t->owner)) {
        distrust(s, t, "its owner's processes stall the reader of their memory");
        return;
    }
    uint32_t *checks = checks_by(s, t->owner);
    if (*checks >= CODE_CHECKS_PER_OWNER) {
        distrust(s, t, "more of its owner's exempt programs ran than are checked in a sweep");
        return;
    }
    if (argv_reader_request_code(&s->argv, t->pid, t->start_time, t->owner) == 0) {
        t->code_pending = true;
        (*checks)++;
    }
}

/* A program first seen, or a new one after exec: judged at once by its
 * executable and name, and again by its command line when that is read.
 * A request already out may answer with the old command line: a new one
 * is asked for all the same, and its answer comes last. */
static void read_program(struct sampler *s, struct tracked_proc *t,
                         int dirfd)
{
    /* A new program image: whatever was in the old one is gone. */
    free(t->foreign_code);
    t->foreign_code = NULL;
    t->code_known = false;
    set_program(s, t, dirfd, NULL);
    t->argv_pending = false;
    ask_argv(s, t);
}

/* A command line came back. */
static void fill_snapshot_argv(struct snapshot *snap, const struct argv_answer *a)
{
    for (size_t i = 0; i < snap->proc_count; i++) {
        struct proc_sample *ps = &snap->procs[i];
        if (ps->pid != a->pid || ps->start_time != a->start_time || ps->argv)
            continue;
        ps->argv_len = a->len < ARGV_KEEP ? a->len : ARGV_KEEP;
        ps->argv = xmalloc(ps->argv_len + 1);
        memcpy(ps->argv, a->argv, ps->argv_len);
        ps->argv[ps->argv_len] = '\0';
        ps->argv_total = a->total;
        copy_string(ps->argv_sha256, sizeof(ps->argv_sha256), a->sha256);
    }
}

static void note_blocked(struct sampler *s, const struct tracked_proc *t)
{
    s->blocked = grow_array(s->blocked, s->blocked_count, &s->blocked_capacity,
                            sizeof(*s->blocked));
    struct blocked_argv *b = &s->blocked[s->blocked_count++];
    b->pid = t->pid;
    b->owner = t->owner;
    memcpy(b->comm, t->comm, sizeof(b->comm));
}

/* Whether an exempt program runs only its own code came back.  A check
 * that stalled (its owner holds its memory up) does not clear it. */
static void take_code(struct sampler *s, const struct argv_answer *a)
{
    struct tracked_proc *t = lookup(s, a->pid);
    if (!t || t->start_time != a->start_time || t->ignored || !t->code_pending)
        return;
    t->code_pending = false;
    if (a->status == ARGV_ERROR || a->status == ARGV_GONE)
        return; /* asked again when it next runs */
    free(t->foreign_code);
    t->foreign_code = a->status == ARGV_BLOCKED ? xstrdup("its memory could not be read in time")
                      : a->len ? xstrndup(a->argv, a->len)
                               : NULL;
    t->code_known = true;
    t->code_sweep = s->sweeps;
    classify(s, t);
}

/* A read of t's stalled the reader: t is judged without its command
 * line and not asked about again, and its owner's processes are not
 * asked about while it lives (each such read may hold a reader process
 * for as long as its owner likes). */
static void stalled(struct sampler *s, struct tracked_proc *t)
{
    if (t->argv_blocked)
        return;
    t->argv_blocked = true;
    t->argv_pending = false;
    withhold(s, t->owner);
    note_blocked(s, t);
}

static void walk_on(struct sampler *s);

/* What a process holds through descriptors came back (shm_fd_walk.h):
 * the walks go on. */
static void take_fds(struct sampler *s, const struct argv_answer *a)
{
    struct tracked_proc *t = lookup(s, a->pid);
    if (a->status == ARGV_BLOCKED && t && t->start_time == a->start_time && !t->ignored)
        stalled(s, t);
    fd_walk_take(&s->fd_walk, a);
    if (s->fd_out)
        s->fd_out--;
    walk_on(s);
}

static void take_argv(const struct argv_answer *a, void *arg)
{
    struct sampler *s = arg;
    if (a->kind == ARGV_CODE) {
        take_code(s, a);
        return;
    }
    if (a->kind == ARGV_SHM_FDS) {
        take_fds(s, a);
        return;
    }
    if (s->argv_snap && a->status == ARGV_OK)
        fill_snapshot_argv(s->argv_snap, a);
    struct tracked_proc *t = lookup(s, a->pid);
    if (!t || t->start_time != a->start_time || t->ignored)
        return;
    if (a->status == ARGV_BLOCKED)
        stalled(s, t);
    if (!t->argv_pending)
        return;
    t->argv_pending = false;
    if (a->status != ARGV_OK)
        return;
    int dirfd = open_proc_dir(s, t->pid);
    if (dirfd >= 0) {
        set_program(s, t, dirfd, a);
        close(dirfd);
    }
}

static void poll_argv(struct sampler *s, uint64_t wait_usec)
{
    argv_reader_poll(&s->argv, wait_usec, take_argv, s);
}

/* ---- where a process is (per-user counters only) ---- */

/* Whether t is in its owner's cgroup, read from /proc/PID/cgroup. */
static void read_place(struct sampler *s, struct tracked_proc *t, int dirfd)
{
    char buf[CGROUP_BUF];
    int fd = dirfd >= 0 ? openat(dirfd, "cgroup", O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
                        : open_in_proc(s, t->pid, "cgroup");
    if (fd < 0)
        return;
    ssize_t n = procfs_pread(fd, buf, sizeof(buf));
    close(fd);
    if (n <= 0)
        return;
    t->outside = !counters_holds(&s->counters, buf, (size_t)n, t->owner);
    s->watch_dirty |= t->outside;
}

void sampler_adopted(struct sampler *s, pid_t pid)
{
    struct tracked_proc *t = lookup(s, pid);
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
static int reread_program(struct sampler *s, struct tracked_proc *t)
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
    close(dirfd);
    return 0;
}

/* Read a known process.  Returns -1 when it is gone (the caller forgets it). */
static int refresh(struct sampler *s, struct tracked_proc *t,
                   uint64_t now, uint64_t interval)
{
    /* A zombie costs nothing: with the connector a new process on its pid
     * is reported (a fork), and the sweep forgets it once it is reaped. */
    if (t->zombie && s->events_live)
        return 0;
    if (t->held_fd >= 0 && t->held_is_sched) {
        uint64_t runtime;
        if (read_runtime(t, &runtime) < 0)
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
         * also be an exec, which is not reported otherwise. */
        if (s->events_live)
            classify(s, t);
        else if (reread_program(s, t) < 0)
            return -1;
    }
    update_usage(s, t, &st, now, interval, false);
    t->stat_due = false;
    hold_descriptor(s, t);
    ask_code(s, t);
    return 0;
}

static void remember_new(struct sampler *s, const struct tracked_proc *t)
{
    s->new_procs = grow_array(s->new_procs, s->new_count, &s->new_capacity,
                              sizeof(*s->new_procs));
    s->new_procs[s->new_count++] = (struct new_proc){t->pid, t->start_time, t->owner, t->class,
                                                      t->outside};
}

/* First sight of a pid.  Returns the new entry or NULL (already gone). */
static struct tracked_proc *discover(struct sampler *s, pid_t pid,
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
        if (s->use_counters)
            read_place(s, t, dirfd);
        hold_descriptor(s, t);
        remember_new(s, t);
    }
    close(dirfd);
    insert(s, t);
    return t;
}

/* Whether /proc/PID still belongs to the uid it had when first seen. */
static bool same_owner(const struct sampler *s, const struct tracked_proc *t)
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
static bool still_ignored(const struct sampler *s,
                          const struct tracked_proc *t, uint64_t now)
{
    uint64_t born = t->start_time * USEC_PER_SEC / (uint64_t)s->hz;
    return now > born + s->scope.scan_interval || same_owner(s, t);
}

/* Make sure pid is tracked and freshly read this generation. */
static struct tracked_proc *visit(struct sampler *s, pid_t pid,
                                  uint64_t now, uint64_t interval)
{
    struct tracked_proc *t = lookup(s, pid);
    if (t && t->generation == s->generation)
        return t;
    if (t && !t->ignored) {
        if (refresh(s, t, now, interval) == 0) {
            t->generation = s->generation;
            return t;
        }
        forget(s, t); /* gone, or its pid now belongs to someone else */
        t = NULL;
    }
    if (t && still_ignored(s, t, now)) {
        t->generation = s->generation;
        return t;
    }
    if (t)
        forget(s, t);
    return discover(s, pid, now, interval);
}

/* ---- processes that ended between samples ---- */

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
    struct tracked_proc *t = lookup(s, e->tgid);
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
     * parent it was forked from does. */
    if (s->use_counters) {
        const struct tracked_proc *parent = lookup(s, e->ppid);
        if (!parent || !parent->outside)
            return;
    }
    credit(s, owner, e->cpu_usec);
}

/* ---- building the snapshot ---- */

static size_t uid_slot(const struct uid_index *ix, uid_t uid)
{
    size_t h = (uid * 2654435761u) & (ix->size - 1);
    while (ix->slots[h] != (size_t)-1 && ix->uids[h] != uid)
        h = (h + 1) & (ix->size - 1);
    return h;
}

static void rebuild_index(struct uid_index *ix, const struct snapshot *snap, size_t size)
{
    free(ix->uids);
    free(ix->slots);
    ix->uids = xmalloc(size * sizeof(*ix->uids));
    ix->slots = xmalloc(size * sizeof(*ix->slots));
    ix->size = size;
    memset(ix->slots, 0xff, size * sizeof(*ix->slots));
    for (size_t i = 0; i < snap->user_count; i++) {
        size_t h = uid_slot(ix, snap->users[i].uid);
        ix->uids[h] = snap->users[i].uid;
        ix->slots[h] = i;
    }
}

/* This sample's entry for uid, or NULL. */
static struct user_sample *find_user(const struct uid_index *ix, struct snapshot *snap, uid_t uid)
{
    if (ix->size == 0)
        return NULL;
    size_t h = uid_slot(ix, uid);
    return ix->slots[h] == (size_t)-1 ? NULL : &snap->users[ix->slots[h]];
}

/* This sample's entry for uid, made if needed. */
static struct user_sample *user_for(struct uid_index *ix, struct snapshot *snap, uid_t uid)
{
    if (snap->user_count * 2 >= ix->size)
        rebuild_index(ix, snap, ix->size ? ix->size * 2 : 256);
    size_t h = uid_slot(ix, uid);
    if (ix->slots[h] != (size_t)-1)
        return &snap->users[ix->slots[h]];
    ix->uids[h] = uid;
    ix->slots[h] = snap->user_count;
    return snapshot_add_user(snap, uid);
}

static void add_exit_credits(struct sampler *s, struct snapshot *snap, uint64_t interval,
                             struct uid_index *ix)
{
    for (size_t i = 0; i < s->credit_count; i++) {
        struct user_sample *u = user_for(ix, snap, s->credits[i].owner);
        u->cpu += (double)s->credits[i].cpu_usec / (double)interval;
    }
    s->credit_count = 0;
}

/* A process's usage into its owner's totals. */
static void add_usage(const struct sampler *s, struct user_sample *u, const struct tracked_proc *t)
{
    u->cpu += t->cpu;
    u->memory += t->rss_pages * (uint64_t)s->page_size;
}

static void fill_proc_sample(const struct sampler *s, struct proc_sample *ps,
                             const struct tracked_proc *t)
{
    ps->pid = t->pid;
    ps->start_time = t->start_time;
    ps->uid = t->owner;
    ps->ppid = t->ppid;
    ps->session = t->session;
    memcpy(ps->comm, t->comm, sizeof(ps->comm));
    ps->exe = t->prog && t->prog->exe ? xstrdup(t->prog->exe) : NULL;
    ps->exe_trusted = t->prog && t->prog->exe_trusted;
    /* The command line itself is read when an event or notice needs it
     * (sampler_fill_argv); what it is known by is kept. */
    if (t->prog && t->prog->argv_known) {
        ps->argv_total = t->prog->argv_total;
        copy_string(ps->argv_sha256, sizeof(ps->argv_sha256), t->prog->argv_sha256);
    }
    ps->cpu = t->cpu;
    ps->rss = t->rss_pages * (uint64_t)s->page_size;
    ps->class = t->class;
    ps->rule = t->rule;
    ps->rule_parts = t->rule_parts;
    ps->foreign_code = t->foreign_code ? xstrdup(t->foreign_code) : NULL;
}

static void add_proc_sample(const struct sampler *s, struct snapshot *snap,
                            const struct tracked_proc *t)
{
    fill_proc_sample(s, snapshot_add_proc(snap), t);
}

static void fill_names(struct sampler *s, struct snapshot *snap)
{
    for (size_t i = 0; s->directory && i < snap->user_count; i++) {
        struct user_sample *u = &snap->users[i];
        struct user_sample who = directory_sample(s->directory, u->uid);
        copy_string(u->name, sizeof(u->name), who.name);
        u->exempt_group = who.exempt_group;
        u->directory_pending = who.directory_pending;
    }
}

static bool computes(const struct tracked_proc *t)
{
    return t->class == CLASS_COMPUTE || t->class == CLASS_FORBIDDEN;
}

static bool watched(const struct tracked_proc *t)
{
    return !t->ignored && (t->outside || t->suspect || t->arrived || computes(t));
}

static void list_watched(struct sampler *s)
{
    s->watch_count = 0;
    for (size_t b = 0; b < s->bucket_count; b++) {
        for (struct tracked_proc *t = s->buckets[b]; t; t = t->next) {
            if (!watched(t))
                continue;
            s->watch = grow_array(s->watch, s->watch_count, &s->watch_capacity, sizeof(pid_t));
            s->watch[s->watch_count++] = t->pid;
        }
    }
    s->watch_dirty = false;
}

static bool any_detailed(const struct snapshot *snap)
{
    for (size_t i = 0; i < snap->user_count; i++)
        if (snap->users[i].detailed)
            return true;
    return false;
}

/* Processes of detailed users, and every compute or forbidden one: with
 * counters and no user detailed, those on the watch list. */
static void add_details(struct sampler *s, struct snapshot *snap, const struct uid_index *ix)
{
    if (s->use_counters && !any_detailed(snap)) {
        if (s->watch_dirty) /* a command line read since made one compute */
            list_watched(s);
        for (size_t i = 0; i < s->watch_count; i++) {
            const struct tracked_proc *t = lookup(s, s->watch[i]);
            if (t && !t->ignored && t->generation == s->generation && computes(t))
                add_proc_sample(s, snap, t);
        }
        return;
    }
    for (size_t b = 0; b < s->bucket_count; b++) {
        for (struct tracked_proc *t = s->buckets[b]; t; t = t->next) {
            if (t->ignored || t->generation != s->generation)
                continue;
            const struct user_sample *u = find_user(ix, snap, t->owner);
            if ((u && u->detailed) || t->class == CLASS_COMPUTE || t->class == CLASS_FORBIDDEN)
                add_proc_sample(s, snap, t);
        }
    }
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
        forbidden = j->verdict(j, prog, st.comm).class == CLASS_FORBIDDEN;
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

/* Whether pid now runs as a person, outside their cgroup. */
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
        outside = n > 0 && !counters_holds(&s->counters, buf, (size_t)n, owner);
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
static void apply_marks(struct sampler *s, uint64_t now,
                        uint64_t interval)
{
    for (size_t i = 0; i < s->marks.count; i++) {
        pid_t pid = s->marks.marks[i].pid;
        unsigned f = s->marks.marks[i].flags;
        struct tracked_proc *t = lookup(s, pid);
        /* A fork names a new process: what had the pid before is gone. */
        if (t && ((f & (MARK_GONE | MARK_FORKED)) || ((f & MARK_UID) && !same_owner(s, t)))) {
            forget(s, t);
            t = NULL;
        }
        if (f & MARK_GONE)
            continue;
        if (!t)
            discover(s, pid, now, interval);
        else if ((f & MARK_EXECED) && !t->ignored && reread_program(s, t) < 0)
            forget(s, t);
    }
    pid_marks_clear(&s->marks);
    s->exec_count = s->uid_change_count = 0; /* judged here */
}

static void add_procfs_usage(struct sampler *s, struct snapshot *snap, struct uid_index *ix,
                             const struct tracked_proc *t)
{
    struct user_sample *u = user_for(ix, snap, t->owner);
    u->tasks += t->threads;
    add_usage(s, u, t);
}

/* With the proc connector every new, exec'd, re-owned and ended process
 * is reported (apply_marks), so the known ones are read straight from
 * the table: listing /proc cost as much as the reads themselves (about
 * 1 us an entry).  A process gone unreported fails its read. */
static void read_known(struct sampler *s, struct snapshot *snap,
                       uint64_t now, uint64_t interval, struct uid_index *ix)
{
    for (size_t b = 0; b < s->bucket_count; b++) {
        for (struct tracked_proc *t = s->buckets[b], *next; t; t = next) {
            next = t->next;
            if (t->ignored || t->generation == s->generation) {
                t->generation = s->generation;
            } else if (refresh(s, t, now, interval) == 0) {
                t->generation = s->generation;
            } else {
                forget(s, t);
                continue;
            }
            if (!t->ignored)
                add_procfs_usage(s, snap, ix, t);
        }
    }
}

/* Level one from /proc: every user process, one held-descriptor read each. */
/* What users hold in shared memory beyond their processes' resident
 * size (shm_held.h), the last sweep's figures: memory no live process
 * maps any more counts too, for a user with no process left, and so
 * does what only a descriptor holds. */
static void add_shm_held(const struct sampler *s, struct snapshot *snap,
                         struct uid_index *ix)
{
    const struct shm_usage *u = shm_held_owners(&s->shm);
    for (size_t i = 0; i < u->count; i++) {
        const struct shm_owner *o = &u->owners[i];
        uint64_t held = o->held + o->fds;
        if (o->uid >= s->scope.min_uid && held >= SHM_HELD_MIN && held > o->mapped)
            user_for(ix, snap, o->uid)->memory += held - o->mapped;
    }
}

static void sample_procfs(struct sampler *s, struct snapshot *snap,
                          uint64_t now, uint64_t interval, struct uid_index *ix)
{
    apply_marks(s, now, interval); /* the exec'd, before they are read */
    if (s->events_live) {
        read_known(s, snap, now, interval, ix);
    } else {
        for (pid_t pid = first_pid(s); pid; pid = next_pid(s)) {
            struct tracked_proc *t = visit(s, pid, now, interval);
            if (t && !t->ignored)
                add_procfs_usage(s, snap, ix, t);
        }
        prune(s, s->generation);
    }
    add_shm_held(s, snap, ix);
}

/* New processes, found by listing /proc without reading known ones: a
 * forbidden program is judged at the next sample, and a process started
 * outside its user's cgroup (cron, a login without PAM) is handed to the
 * backend to move in at once.  Known processes are read only for users
 * worth a look. */
static void find_new_processes(struct sampler *s, uint64_t now,
                               uint64_t interval)
{
    for (pid_t pid = first_pid(s); pid; pid = next_pid(s)) {
        struct tracked_proc *t = lookup(s, pid);
        if (t && (!t->ignored || still_ignored(s, t, now)))
            continue;
        if (t)
            forget(s, t);
        t = discover(s, pid, now, interval);
        if (t)
            t->generation = s->generation;
    }
}

/* A process that started since the last sample belongs to a user whose
 * cgroup is not known yet (a first login made user-UID.slice): the
 * listing that finds it costs a readdir of every user's group, so it is
 * done only then. */
static bool new_user_without_group(struct sampler *s)
{
    for (size_t i = 0; i < s->new_count; i++)
        if (!counters_find(&s->counters, s->new_procs[i].owner))
            return true;
    return false;
}

void sampler_counters_changed(struct sampler *s)
{
    s->counters_changed = true;
}

/* Each user's totals from their cgroup's counters. */
static void read_counters(struct sampler *s, struct snapshot *snap,
                          uint64_t now, uint64_t interval, bool young, struct uid_index *ix)
{
    for (size_t i = 0; i < s->counters.count; i++) {
        struct user_cgroup *g = &s->counters.groups[i];
        if (g->uid < s->scope.min_uid)
            continue;
        /* A group found for a change since the last sample was made
         * during the last interval: all it used counts, from 0.  One found
         * at the first sample or by a sweep may be older: it gets its
         * baseline now. */
        if (!g->have_last && young && s->stats.samples > 1) {
            g->last_cpu_usec = 0;
            g->have_last = true;
        }
        struct user_usage use;
        double cpu;
        int rc = counters_sample(&s->counters, g, now, interval, &use, &cpu);
        if (rc < 0) {
            s->counters_stale = true;   /* gone: forgotten at the next listing */
            continue;
        }
        s->stats.users_read += rc;
        struct user_sample *u = user_for(ix, snap, g->uid);
        u->cpu = cpu;
        u->memory = use.memory;
        u->tasks = use.tasks;
    }
}

/* Read t in this sample unless it was already: -1 (forgotten) when gone. */
static int read_once(struct sampler *s, struct tracked_proc *t,
                     uint64_t now, uint64_t interval)
{
    if (t->generation == s->generation)
        return 0;
    if (refresh(s, t, now, interval) < 0) {
        forget(s, t);
        return -1;
    }
    t->generation = s->generation;
    return 0;
}

/* Processes outside their owner's cgroup (cron and at jobs, systemd-run,
 * a delegated subtree) are not in its counters: each is read from /proc
 * and counts for its owner all the same.  Those once found outside have
 * their place read again every sample: one that keeps leaving is counted
 * wherever it is.  Returns -1 when t is gone (forgotten). */
static int add_stray(struct sampler *s, struct tracked_proc *t,
                     struct snapshot *snap, uint64_t now, uint64_t interval,
                     struct uid_index *ix)
{
    bool was_outside = t->outside;
    read_place(s, t, -1);
    if (t->outside && !was_outside)
        remember_new(s, t); /* the backend puts it back */
    if (!t->outside)
        return 0;
    if (read_once(s, t, now, interval) < 0)
        return -1;
    struct user_sample *u = user_for(ix, snap, t->owner);
    u->tasks += t->threads;
    add_usage(s, u, t);
    return 0;
}

/* A process that arrived with memory: its resident size, for its user's
 * arrived_memory.  -1 when it is gone. */
static int add_arrived(struct sampler *s, struct tracked_proc *t,
                       struct snapshot *snap, uint64_t now, uint64_t interval,
                       struct uid_index *ix)
{
    if (read_once(s, t, now, interval) < 0)
        return -1;
    user_for(ix, snap, t->owner)->arrived_memory += t->rss_pages * (uint64_t)s->page_size;
    return 0;
}

/* What the counters do not cover or what is watched on its own, in one
 * pass over the table: strays, and compute and forbidden programs
 * (wherever they run). */
static void read_watched(struct sampler *s, struct snapshot *snap,
                         uint64_t now, uint64_t interval, struct uid_index *ix)
{
    if (s->watch_dirty)
        list_watched(s);
    for (size_t i = 0; i < s->watch_count; i++) {
        struct tracked_proc *t = lookup(s, s->watch[i]);
        if (!t || !watched(t))
            continue; /* gone, or no longer one of them: out at the next listing */
        if ((t->outside || t->suspect) && add_stray(s, t, snap, now, interval, ix) < 0)
            continue;
        if (t->arrived && !t->outside && add_arrived(s, t, snap, now, interval, ix) < 0)
            continue;
        if (t->generation != s->generation && computes(t) && refresh(s, t, now, interval) == 0)
            t->generation = s->generation;
    }
}

/* At least the memory its arrived processes hold, whatever the charge. */
static void count_arrived(struct snapshot *snap)
{
    for (size_t i = 0; i < snap->user_count; i++)
        if (snap->users[i].arrived_memory > snap->users[i].memory)
            snap->users[i].memory = snap->users[i].arrived_memory;
}

/* A user worth a look: their processes in their cgroup are read. */
static void read_group(struct sampler *s, struct user_cgroup *g,
                       uint64_t now, uint64_t interval)
{
    pid_t *pids;
    size_t n = counters_pids(g, &pids);
    for (size_t k = 0; k < n; k++)
        visit(s, pids[k], now, interval);
    free(pids);
}

static void sample_counters(struct sampler *s, struct snapshot *snap,
                            uint64_t now, uint64_t interval, struct uid_index *ix)
{
    apply_marks(s, now, interval);
    if (!s->events_live)
        find_new_processes(s, now, interval);
    /* A first login makes user-UID.slice just before its processes. */
    bool young = s->counters_changed || new_user_without_group(s);
    if (young || s->counters_stale) {
        counters_discover(&s->counters);
        s->counters_stale = s->counters_changed = false;
    }
    read_counters(s, snap, now, interval, young, ix);
    read_watched(s, snap, now, interval, ix);
    count_arrived(snap);
}

double sampler_memory_pressure(const char *path)
{
    char buf[256];
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -1;
    ssize_t n = procfs_pread(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    /* "some avg10=1.23 avg60=0.50 avg300=0.10 total=12345" */
    const char *at = strncmp(buf, "some ", 5) == 0 ? strstr(buf, "avg10=") : NULL;
    return at ? strtod(at + 6, NULL) : -1;
}

void sampler_sample(struct sampler *s, struct snapshot *snap)
{
    /* The start-up sweep hands every process over at once: an array of
     * that size is not kept for the few that come later. */
    if (s->new_count == 0 && s->new_capacity > 1024) {
        free(s->new_procs);
        s->new_procs = NULL;
        s->new_capacity = 0;
    }
    if (s->rescan)
        sampler_sweep(s);
    uint64_t now = env_boottime(s->env);
    uint64_t interval = s->last_sample ? now - s->last_sample : s->scope.sample_interval;
    if (interval == 0)
        interval = 1;
    s->last_sample = now;
    s->generation++;
    s->stats.samples++;
    s->stats.procs_read = s->stats.users_read = 0;

    snapshot_clear(snap);
    snap->now = env_realtime(s->env);
    snap->interval = interval;
    snap->memory_pressure = sampler_memory_pressure(s->pressure_path);
    struct uid_index *ix = &s->index;
    free(ix->uids);
    free(ix->slots);
    memset(ix, 0, sizeof(*ix));
    if (s->use_counters)
        sample_counters(s, snap, now, interval, ix);
    else
        sample_procfs(s, snap, now, interval, ix);
    add_exit_credits(s, snap, interval, ix);
    /* The command lines asked for above, so that this sample judges
     * a new program by its argv too. */
    poll_argv(s, ARGV_WAIT_USEC);
    fill_names(s, snap);
}

void sampler_look_closer(struct sampler *s, struct snapshot *snap)
{
    /* With counters, only the watched processes were read: the chosen
     * users' are read now.  From /proc, every process was. */
    for (size_t i = 0; s->use_counters && i < snap->user_count; i++) {
        struct user_cgroup *g = snap->users[i].detailed
                                    ? counters_find(&s->counters, snap->users[i].uid)
                                    : NULL;
        if (g)
            read_group(s, g, s->last_sample, snap->interval);
    }
    add_details(s, snap, &s->index);
}

void sampler_take_argv(struct sampler *s)
{
    poll_argv(s, 0);
}

void sampler_fill_argv(struct sampler *s, struct snapshot *snap,
                       const size_t *idx, size_t n, uint64_t wait_usec)
{
    size_t asked = 0;
    for (size_t i = 0; i < n; i++) {
        const struct proc_sample *ps = &snap->procs[idx[i]];
        const struct tracked_proc *t = lookup(s, ps->pid);
        if (ps->argv || withheld(s, ps->uid) ||
            (t && t->start_time == ps->start_time && t->argv_blocked))
            continue;
        if (argv_reader_request(&s->argv, ps->pid, ps->start_time, ps->uid) == 0)
            asked++;
    }
    if (!asked)
        return;
    s->argv_snap = snap;
    poll_argv(s, wait_usec);
    s->argv_snap = NULL;
}

size_t sampler_take_blocked(struct sampler *s, const struct blocked_argv **out)
{
    size_t n = s->blocked_count;
    *out = s->blocked;
    s->blocked_count = 0;
    return n;
}

/* ---- the full sweep ---- */

/* Whether the process ran since the last sweep: only then can it have
 * executed another program.  Read now, not taken from the last sample:
 * with per-user counters a quiet user's processes are not read between
 * sweeps. */
static bool ran_since_sweep(const struct sampler *s, struct tracked_proc *t)
{
    uint64_t activity;
    if (t->held_fd >= 0 && t->held_is_sched) {
        if (read_runtime(t, &activity) < 0)
            return false; /* gone: the next sample forgets it */
    } else {
        struct proc_stat st;
        if (!read_own_stat(s, t, &st))
            return false;
        activity = st.utime + st.stime;
    }
    bool ran = activity != t->swept_activity;
    t->swept_activity = activity;
    return ran;
}

/* Where every process is, from the user cgroups' own lists: cheaper than
 * reading each process's cgroup file, and it finds a process that left
 * while it slept (holding memory outside, say). */
static void find_strays(struct sampler *s, uint32_t sweep_generation)
{
    counters_discover(&s->counters);
    s->counters_stale = false; /* the next sample need not list them again */
    for (size_t i = 0; i < s->counters.count; i++) {
        pid_t *pids;
        size_t n = counters_pids(&s->counters.groups[i], &pids);
        for (size_t k = 0; k < n; k++) {
            struct tracked_proc *t = lookup(s, pids[k]);
            if (t && t->owner == s->counters.groups[i].uid)
                t->swept_inside = sweep_generation;
        }
        free(pids);
    }
    for (size_t b = 0; b < s->bucket_count; b++) {
        for (struct tracked_proc *t = s->buckets[b]; t; t = t->next) {
            if (t->ignored)
                continue;
            bool left = t->swept_inside != sweep_generation && !t->outside;
            t->outside = t->swept_inside != sweep_generation;
            s->watch_dirty |= t->outside;
            if (left) {
                t->suspect = true;
                remember_new(s, t); /* the backend puts it back */
            }
        }
    }
}

/* An owner's command lines are asked for again once none of their
 * processes whose read stalled is left. */
static void rebuild_withheld(struct sampler *s)
{
    s->withheld_count = 0;
    for (size_t b = 0; b < s->bucket_count; b++)
        for (const struct tracked_proc *t = s->buckets[b]; t; t = t->next)
            if (t->argv_blocked)
                withhold(s, t->owner);
}

/* Owners follow /etc/subuid: a changed file starts every process over. */
static void refresh_owners(struct sampler *s)
{
    if (subuid_refresh(&s->subuids, SUBUID_PATH) == 0)
        return;
    s->subuids_loaded = true;
    for (size_t b = 0; b < s->bucket_count; b++)
        for (struct tracked_proc *t = s->buckets[b], *next; t; t = next) {
            next = t->next;
            if (subuid_owner(&s->subuids, t->uid) != t->owner)
                forget(s, t);
        }
}

/* An owner's walk over their descriptors goes on: the next request
 * (true when it went out), or the figure of a whole walk.  Not for an
 * owner whose processes stall the reader (withheld): their last figure
 * stands until none of those is left. */
static bool ask_fds(struct sampler *s, uid_t owner)
{
    struct fd_walk_request q;
    uint64_t bytes;
    if (withheld(s, owner))
        return false;
    switch (fd_walk_next(&s->fd_walk, owner, &q, &bytes)) {
    case FD_WALK_ASK:
        if (argv_reader_request_fds(&s->argv, q.pid, q.start_time, owner, q.from,
                                    q.budget) != 0)
            return false;
        fd_walk_sent(&s->fd_walk, owner);
        return true;
    case FD_WALK_DONE:
        /* Newly worth it: what their processes map is read now, so that
         * the figure never counts what their resident size shows. */
        if (shm_held_set_fds(&s->shm, owner, bytes)) {
            size_t n;
            const struct fd_walk_proc *procs = fd_walk_procs_of(&s->fd_walk, owner, &n);
            for (size_t i = 0; i < n && shm_held_worth_reading(&s->shm, owner); i++)
                shm_held_read_mapped(&s->shm, procs[i].pid, owner);
        }
        return false;
    case FD_WALK_WAIT:
        return false;
    }
    return false;
}

/* Up to FD_WALK_OUT requests out, the owners taking turns, until a
 * whole round of them has nothing to ask. */
static void walk_on(struct sampler *s)
{
    size_t idle = 0;
    while (s->fd_out < FD_WALK_OUT && idle < s->fd_walk.count) {
        if (s->fd_turn >= s->fd_walk.count)
            s->fd_turn = 0;
        if (ask_fds(s, s->fd_walk.owners[s->fd_turn++].uid)) {
            s->fd_out++;
            idle = 0;
        } else {
            idle++;
        }
    }
}

/* This sweep's walks over descriptors (shm_fd_walk.h) through the
 * watched processes (not one whose reads stalled the reader: its owner
 * is withheld while it lives); their answers come in between samples. */
static void walk_descriptors(struct sampler *s)
{
    struct fd_walk_proc *procs = xreallocarray(NULL, s->proc_count + 1, sizeof(*procs));
    size_t n = 0;
    for (size_t b = 0; b < s->bucket_count; b++)
        for (const struct tracked_proc *t = s->buckets[b]; t; t = t->next)
            if (!t->ignored && !t->zombie && !t->argv_blocked)
                procs[n++] = (struct fd_walk_proc){t->owner, t->pid, t->start_time};
    fd_walk_begin(&s->fd_walk, procs, n);
    free(procs);
    walk_on(s);
}

/* The /proc path's shared memory (shm_held.h): the walk goes on, and
 * what each holder's processes map is read again (before the walks over
 * descriptors go on: see ask_fds). */
static void read_shm_held(struct sampler *s)
{
    shm_held_sweep(&s->shm);
    for (size_t b = 0; b < s->bucket_count; b++)
        for (const struct tracked_proc *t = s->buckets[b]; t; t = t->next)
            if (!t->ignored && !t->zombie && shm_held_worth_reading(&s->shm, t->owner))
                shm_held_read_mapped(&s->shm, t->pid, t->owner);
}

/* One pass over /proc.  The uid is the owner of /proc/PID (one fstatat,
 * where libproc2's reap parses /proc/PID/status for the same number).
 * While the proc connector reports every exec, the sweep need not look
 * for them; after lost events it does. */
/* With counters and the proc connector live and nothing lost, every
 * process that started, changed user or ended has been reported: the
 * listing of /proc (a fifth of the daemon's CPU at 10,000 processes) is
 * an audit, at the first sweep and every PROC_AUDIT_SWEEPS-th after.
 * Events lost (ENOBUFS) make the next sample sweep with a listing. */
#define PROC_AUDIT_SWEEPS 10

static bool lists_proc(const struct sampler *s, bool look_for_execs)
{
    return !s->use_counters || !s->events_live || look_for_execs ||
           s->sweeps % PROC_AUDIT_SWEEPS == 1;
}

/* Between audits: every process's stat is read again when it is next
 * visited (a sleeping process's memory, as a listing would). */
static void mark_stat_due(struct sampler *s)
{
    for (size_t b = 0; b < s->bucket_count; b++)
        for (struct tracked_proc *t = s->buckets[b]; t; t = t->next)
            t->stat_due = true;
}

void sampler_sweep(struct sampler *s)
{
    uint64_t now = env_boottime(s->env);
    s->counters_stale = true;
    refresh_owners(s);
    bool look_for_execs = !s->events_live || s->rescan;
    s->rescan = false;
    uint32_t sweep_generation = ++s->generation;
    s->sweeps++;
    s->checks_by_count = 0;
    bool listing = lists_proc(s, look_for_execs);
    if (!listing)
        mark_stat_due(s);
    for (pid_t pid = listing ? first_pid(s) : 0; pid; pid = next_pid(s)) {
        struct tracked_proc *t = lookup(s, pid);
        /* A root process that became a user's (a late setuid) starts over.
         * A user's process keeps its user: leaving it takes a setuid
         * program, whose children are new processes anyway. */
        if (t && t->ignored && !same_owner(s, t)) {
            forget(s, t);
            t = NULL;
        }
        if (!t) {
            t = discover(s, pid, now, s->scope.sample_interval);
            if (t)
                t->swept_inside = t->outside ? 0 : sweep_generation;
            continue;
        }
        /* Usage is left to the samples, which time their own readings. */
        t->generation = sweep_generation;
        t->stat_due = true;
        if (!t->ignored && look_for_execs && ran_since_sweep(s, t) &&
            reread_program(s, t) < 0)
            t->generation = 0; /* gone: pruned below */
    }
    if (listing)
        prune(s, sweep_generation);
    if (s->use_counters)
        find_strays(s, sweep_generation);
    else
        read_shm_held(s);
    rebuild_withheld(s);
    if (!s->use_counters)
        walk_descriptors(s);
}

size_t sampler_take_new(struct sampler *s, const struct new_proc **procs)
{
    size_t n = s->new_count;
    *procs = s->new_procs;
    s->new_count = 0;
    return n;
}

/* ---- a person's processes, for the effectors ---- */

void sampler_user_table(const struct sampler *s, uid_t owner, struct proc_table *out)
{
    out->count = 0;
    for (size_t b = 0; b < s->bucket_count; b++) {
        for (const struct tracked_proc *t = s->buckets[b]; t; t = t->next) {
            if (t->ignored || t->owner != owner)
                continue;
            struct table_proc *p = proc_table_add(out);
            p->pid = t->pid;
            p->ppid = t->ppid;
            p->start_time = t->start_time;
            p->uid = t->uid;
            p->class = t->class;
            memcpy(p->comm, t->comm, sizeof(p->comm));
            copy_string(p->exe, sizeof(p->exe), t->prog && t->prog->exe ? t->prog->exe : "");
        }
    }
}

/* A new scope (a reload): every program is judged again, by its
 * executable and name now and by its command line when that is read
 * again. */
void sampler_rescope(struct sampler *s, const struct sampler_scope *scope)
{
    for (size_t b = 0; b < s->bucket_count; b++) {
        for (struct tracked_proc *t = s->buckets[b]; t; t = t->next) {
            s->scope.judge->put(s->scope.judge, t->prog);
            t->prog = NULL;
            t->class = CLASS_NONE;
            t->rule = NULL;
        }
    }
    s->scope = *scope;
    s->scope.judge->forget_all(s->scope.judge);
    for (size_t b = 0; b < s->bucket_count; b++) {
        for (struct tracked_proc *t = s->buckets[b], *next; t; t = next) {
            next = t->next;
            if (!t->ignored && reread_program(s, t) < 0)
                forget(s, t);
        }
    }
}

/* ---- set-up ---- */

/* The soft limit raised to the hard one; how many descriptors may be
 * held for processes within it. */
static uint64_t raise_fd_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        return 0;
    if (rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
        getrlimit(RLIMIT_NOFILE, &rl);
    }
    return rl.rlim_cur > FD_RESERVE ? rl.rlim_cur - FD_RESERVE : 0;
}

int sampler_init(struct sampler *s, const struct environment *env,
                 const struct counter_roots *roots, const struct sampler_scope *scope)
{
    const char *proc_root = env->proc;
    memset(s, 0, sizeof(*s));
    s->env = env;
    s->scope = *scope;
    s->pressure_path = xasprintf("%s/pressure/memory", proc_root);
    s->proc_dir = opendir(proc_root);
    if (!s->proc_dir)
        snprintf(s->error, sizeof(s->error), "cannot read %s: %s", proc_root, strerror(errno));
    if (!s->proc_dir || argv_reader_start(&s->argv, proc_root, s->error, sizeof(s->error)) < 0) {
        if (s->proc_dir)
            closedir(s->proc_dir);
        free(s->pressure_path);
        return -1;
    }
    s->proc_fd = dirfd(s->proc_dir);
    shm_held_init(&s->shm, s->proc_fd);
    fd_walk_init(&s->fd_walk);
    s->hz = sysconf(_SC_CLK_TCK);
    s->page_size = sysconf(_SC_PAGESIZE);
    s->boot_realtime_usec = env_realtime(env) - env_boottime(env);
    struct stat ns;
    if (fstatat(s->proc_fd, "self/ns/mnt", &ns, 0) == 0) {
        s->mnt_ns_dev = ns.st_dev;
        s->mnt_ns_ino = ns.st_ino;
    }
    subuid_refresh(&s->subuids, SUBUID_PATH);
    s->subuids_loaded = true;
    grow_table(s);
    s->held_max = raise_fd_limit();
    s->counters.cpu_root = s->counters.memory_root = s->counters.pids_root = -1;
    if (roots ? roots->version > 0 && counters_open(&s->counters, roots) == 0
              : counters_open_host(&s->counters, env->cgroup) == 0)
        s->use_counters = s->counters_stale = true;
    return 0;
}

void sampler_free(struct sampler *s)
{
    shm_held_free(&s->shm);
    fd_walk_free(&s->fd_walk);
    for (size_t b = 0; b < s->bucket_count; b++) {
        for (struct tracked_proc *t = s->buckets[b], *next; t; t = next) {
            next = t->next;
            free_proc(s, t);
        }
    }
    free(s->buckets);
    free(s->new_procs);
    free(s->blocked);
    free(s->credits);
    free(s->withheld);
    free(s->watch);
    free(s->held_by);
    free(s->checks_by);
    free(s->index.uids);
    free(s->index.slots);
    pid_marks_free(&s->marks);
    if (s->proc_dir)
        closedir(s->proc_dir);
    argv_reader_stop(&s->argv);
    counters_close(&s->counters);
    subuid_free(&s->subuids);
    free(s->pressure_path);
    memset(s, 0, sizeof(*s));
}

bool sampler_proc(const struct sampler *s, pid_t pid, uint64_t start_time,
                  struct proc_sample *out)
{
    const struct tracked_proc *t = lookup(s, pid);
    if (!t || t->start_time != start_time || t->ignored)
        return false;
    memset(out, 0, sizeof(*out));
    fill_proc_sample(s, out, t);
    return true;
}

size_t sampler_user_top(const struct sampler *s, uid_t owner, struct proc_sample *out, size_t n)
{
    const struct tracked_proc *top[SAMPLER_TOP_MAX];
    size_t count = 0;
    if (n > SAMPLER_TOP_MAX)
        n = SAMPLER_TOP_MAX;
    for (size_t b = 0; n && b < s->bucket_count; b++) {
        for (const struct tracked_proc *t = s->buckets[b]; t; t = t->next) {
            if (t->ignored || t->owner != owner)
                continue;
            /* Insertion into a short list, highest CPU first. */
            size_t at = count;
            while (at > 0 && top[at - 1]->cpu < t->cpu)
                at--;
            if (at >= n)
                continue;
            size_t last = count < n ? count : n - 1;
            memmove(&top[at + 1], &top[at], (last - at) * sizeof(top[0]));
            top[at] = t;
            if (count < n)
                count++;
        }
    }
    for (size_t i = 0; i < count; i++) {
        memset(&out[i], 0, sizeof(out[i]));
        fill_proc_sample(s, &out[i], top[i]);
    }
    return count;
}
