/* The sampler: its table of known processes, keyed by pid, and its
 * set-up (sampler.h says what it does; sampler_parts.h how it is cut). */

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

struct tracked_proc *lookup_proc(const struct sampler *s, pid_t pid)
{
    return known_lookup(&s->known, pid);
}

/* How many descriptors owner's processes hold. */
uint32_t *owner_held_of(struct sampler *s, uid_t owner)
{
    size_t at;
    s->held_by = uid_entry(s->held_by, &s->held_by_count, &s->held_by_capacity,
                           sizeof(*s->held_by), offsetof(struct owner_held, owner), owner, &at);
    return &s->held_by[at].held;
}

/* How many of owner's exempt programs were checked in this sweep. */
uint32_t *owner_checks_of(struct sampler *s, uid_t owner)
{
    size_t at;
    s->checks_by = uid_entry(s->checks_by, &s->checks_by_count, &s->checks_by_capacity,
                             sizeof(*s->checks_by), offsetof(struct owner_checks, owner), owner,
                             &at);
    return &s->checks_by[at].checks;
}

void release_descriptor(struct sampler *s, struct tracked_proc *t)
{
    if (t->held_fd >= 0) {
        close(t->held_fd);
        s->stats.held_fds--;
        (*owner_held_of(s, t->owner))--;
    }
    t->held_fd = -1;
}

void free_proc(struct sampler *s, struct tracked_proc *t)
{
    release_descriptor(s, t);
    s->scope.judge->put(s->scope.judge, t->prog);
    free(t->foreign_code);
    free(t);
}

void insert_proc(struct sampler *s, struct tracked_proc *t)
{
    known_insert(&s->known, t);
}

void forget_proc(struct sampler *s, struct tracked_proc *t)
{
    known_remove(&s->known, t);
    free_proc(s, t);
}

/* Drop every entry not seen in the given generation: those processes are gone. */
void prune_procs(struct sampler *s, uint32_t generation)
{
    for (size_t i = 0; i < s->known.bucket_count; i++) {
        struct tracked_proc **pp = &s->known.buckets[i];
        while (*pp) {
            struct tracked_proc *t = *pp;
            if (t->generation == generation) {
                pp = &t->next;
            } else {
                *pp = t->next;
                s->known.count--;
                free_proc(s, t);
            }
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
    subuid_refresh(&s->subuids, s->env->subuid);
    s->subuids_loaded = true;
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
    for (size_t b = 0; b < s->known.bucket_count; b++) {
        for (struct tracked_proc *t = s->known.buckets[b], *next; t; t = next) {
            next = t->next;
            free_proc(s, t);
        }
    }
    known_free(&s->known);
    free(s->new_procs);
    free(s->blocked);
    free(s->credits);
    free(s->slurm);
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

int open_proc_dir(const struct sampler *s, pid_t pid)
{
    char name[24];
    snprintf(name, sizeof(name), "%d", (int)pid);
    return openat(s->proc_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
}
