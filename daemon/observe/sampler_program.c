/* What a process runs, for the sampler: its executable and command line
 * handed to the judge, the command-line reader's answers, and the check
 * that an exempt program runs only its own code. */

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

char *read_exe(int dirfd)
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
void exe_identity(const struct sampler *s, int dirfd, struct program_facts *f)
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

void judge_proc(struct sampler *s, struct tracked_proc *t)
{
    struct verdict v = s->scope.judge->verdict(s->scope.judge, t->prog, t->comm,
                                               t->foreign_code != NULL);
    t->class = v.class;
    s->watch_dirty |= proc_followed(s, t);
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
    judge_proc(s, t);
}

bool owner_withheld(const struct sampler *s, uid_t owner)
{
    size_t at = uid_position(s->withheld, s->withheld_count, sizeof(*s->withheld), 0, owner);
    return at < s->withheld_count && s->withheld[at] == owner;
}

void withhold_owner(struct sampler *s, uid_t owner)
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
    if (t->argv_blocked || t->argv_pending || owner_withheld(s, t->owner))
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
    judge_proc(s, t);
}

/* An exempt program that runs: whether it runs only its own code is
 * asked once a sweep (not of a Slurm job's, whose usage is not judged).  An owner whose processes stall the reader gets
 * no answers, and one with more exempt programs running than are
 * checked gets no more checks: those are not taken on trust. */
void ask_code_check(struct sampler *s, struct tracked_proc *t)
{
    bool exempt_by_rule = t->class == CLASS_EXEMPT || t->foreign_code;
    if (!exempt_by_rule || t->slurm_job || t->cpu <= 0 || t->code_pending ||
        (t->code_known && t->code_sweep == s->sweeps))
        return;
    if (owner_withheld(s, t->owner)) {
        distrust(s, t, "its owner's processes stall the reader of their memory");
        return;
    }
    uint32_t *checks = owner_checks_of(s, t->owner);
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
void read_program(struct sampler *s, struct tracked_proc *t,
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

static void note_blocked(struct sampler *s, const struct tracked_proc *t)
{
    s->blocked = grow_array(s->blocked, s->blocked_count, &s->blocked_capacity,
                            sizeof(*s->blocked));
    struct blocked_argv *b = &s->blocked[s->blocked_count++];
    b->pid = t->pid;
    b->start_time = t->start_time;
    b->owner = t->owner;
    memcpy(b->comm, t->comm, sizeof(b->comm));
}

/* Whether an exempt program runs only its own code came back.  A check
 * that stalled (its owner holds its memory up) does not clear it. */
static void take_code(struct sampler *s, const struct argv_answer *a)
{
    struct tracked_proc *t = lookup_proc(s, a->pid);
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
    judge_proc(s, t);
}

/* A read of t's stalled the reader: t is judged without its command
 * line and not asked about again, and its owner's processes are not
 * asked about while it lives (each such read may hold a reader process
 * for as long as its owner likes). */
void argv_stalled(struct sampler *s, struct tracked_proc *t)
{
    if (t->argv_blocked)
        return;
    t->argv_blocked = true;
    t->argv_pending = false;
    withhold_owner(s, t->owner);
    note_blocked(s, t);
}

void sampler_argv_stalled(struct sampler *s, pid_t pid, uint64_t start_time)
{
    struct tracked_proc *t = lookup_proc(s, pid);
    if (!t || t->start_time != start_time || t->ignored || t->argv_blocked)
        return;
    t->argv_blocked = true; /* the describer has reported it */
    t->argv_pending = false;
    withhold_owner(s, t->owner);
}

/* What a process holds through descriptors came back (shm_fd_walk.h):
 * the walks go on. */
static void take_fds(struct sampler *s, const struct argv_answer *a)
{
    struct tracked_proc *t = lookup_proc(s, a->pid);
    if (a->status == ARGV_BLOCKED && t && t->start_time == a->start_time && !t->ignored)
        argv_stalled(s, t);
    fd_walk_take(&s->fd_walk, a);
    if (s->fd_out)
        s->fd_out--;
    walk_descriptors_on(s);
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
    struct tracked_proc *t = lookup_proc(s, a->pid);
    if (!t || t->start_time != a->start_time || t->ignored)
        return;
    if (a->status == ARGV_BLOCKED)
        argv_stalled(s, t);
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

void poll_argv_answers(struct sampler *s, uint64_t wait_usec)
{
    argv_reader_poll(&s->argv, wait_usec, take_argv, s);
}

/* Of a class the scope follows at every sample, whoever runs it. */
bool proc_followed(const struct sampler *s, const struct tracked_proc *t)
{
    return s->scope.followed_classes & (1u << t->class);
}

/* An owner's walk over their descriptors goes on: the next request
 * (true when it went out), or the figure of a whole walk.  Not for an
 * owner whose processes stall the reader (withheld): their last figure
 * stands until none of those is left. */
static bool ask_fds(struct sampler *s, uid_t owner)
{
    struct fd_walk_request q;
    uint64_t bytes;
    if (owner_withheld(s, owner))
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
void walk_descriptors_on(struct sampler *s)
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
