/* A sample: every user's totals, from their cgroup counters or from
 * /proc, and the processes of those worth a closer look. */

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
static struct user_sample *snapshot_user_for(struct uid_index *ix, struct snapshot *snap, uid_t uid)
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
        struct user_sample *u = snapshot_user_for(ix, snap, s->credits[i].owner);
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

void fill_proc_sample(const struct sampler *s, struct proc_sample *ps,
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
     * (argv_describe.h); what it is known by is kept, and whether it must
     * not be read. */
    ps->argv_withheld = t->argv_blocked || owner_withheld(s, t->owner);
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
    ps->slurm_job = t->slurm_job;
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


/* Read at every sample whatever its owner's counters say; never a Slurm
 * job's (read at the sweeps, for its owner's Slurm figures). */
bool proc_watched(const struct sampler *s, const struct tracked_proc *t)
{
    return !t->ignored && !t->slurm_job &&
           (t->outside || t->suspect || t->arrived || proc_followed(s, t));
}

static void list_watched(struct sampler *s)
{
    s->watch_count = 0;
    for (size_t b = 0; b < s->known.bucket_count; b++) {
        for (struct tracked_proc *t = s->known.buckets[b]; t; t = t->next) {
            if (!proc_watched(s, t))
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

/* Processes of detailed users, and every compute or forbidden one (none
 * of a Slurm job: Slurm's, not judged here): with counters and no user
 * detailed, those on the watch list. */
static void add_details(struct sampler *s, struct snapshot *snap, const struct uid_index *ix)
{
    if (s->use_counters && !any_detailed(snap)) {
        if (s->watch_dirty) /* a command line read since made one compute */
            list_watched(s);
        for (size_t i = 0; i < s->watch_count; i++) {
            const struct tracked_proc *t = lookup_proc(s, s->watch[i]);
            if (t && !t->ignored && t->generation == s->generation && proc_followed(s, t))
                add_proc_sample(s, snap, t);
        }
        return;
    }
    for (size_t b = 0; b < s->known.bucket_count; b++) {
        for (struct tracked_proc *t = s->known.buckets[b]; t; t = t->next) {
            if (t->ignored || t->slurm_job || t->generation != s->generation)
                continue;
            const struct user_sample *u = find_user(ix, snap, t->owner);
            if ((u && u->detailed) || proc_followed(s, t))
                add_proc_sample(s, snap, t);
        }
    }
}

static void add_procfs_usage(struct sampler *s, struct snapshot *snap, struct uid_index *ix,
                             const struct tracked_proc *t)
{
    struct user_sample *u = snapshot_user_for(ix, snap, t->owner);
    u->tasks += t->threads;
    add_usage(s, u, t);
}

/* With the proc connector every new, exec'd, re-owned and ended process
 * is reported (apply_marks), so the known ones are read straight from
 * the table: listing /proc cost as much as the reads themselves (about
 * 1 us an entry).  A process gone unreported fails its read.  A Slurm
 * job's counts for no one: it is read at the sweeps. */
static void read_known(struct sampler *s, struct snapshot *snap,
                       uint64_t now, uint64_t interval, struct uid_index *ix)
{
    for (size_t b = 0; b < s->known.bucket_count; b++) {
        for (struct tracked_proc *t = s->known.buckets[b], *next; t; t = next) {
            next = t->next;
            if (t->ignored || t->slurm_job || t->generation == s->generation) {
                t->generation = s->generation;
            } else if (refresh_proc(s, t, now, interval) == 0) {
                t->generation = s->generation;
            } else {
                forget_proc(s, t);
                continue;
            }
            if (!t->ignored && !t->slurm_job)
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
            snapshot_user_for(ix, snap, o->uid)->memory += held - o->mapped;
    }
}

static void sample_procfs(struct sampler *s, struct snapshot *snap,
                          uint64_t now, uint64_t interval, struct uid_index *ix)
{
    apply_marks(s, now, interval); /* the exec'd, before they are read */
    if (s->events_live) {
        read_known(s, snap, now, interval, ix);
    } else {
        for (pid_t pid = first_proc_pid(s); pid; pid = next_proc_pid(s)) {
            struct tracked_proc *t = visit_proc(s, pid, now, interval);
            if (t && !t->ignored && !t->slurm_job)
                add_procfs_usage(s, snap, ix, t);
        }
        prune_procs(s, s->generation);
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
    for (pid_t pid = first_proc_pid(s); pid; pid = next_proc_pid(s)) {
        struct tracked_proc *t = lookup_proc(s, pid);
        if (t && (!t->ignored || proc_still_ignored(s, t, now)))
            continue;
        if (t)
            forget_proc(s, t);
        t = discover_proc(s, pid, now, interval);
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
        struct user_sample *u = snapshot_user_for(ix, snap, g->uid);
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
    if (refresh_proc(s, t, now, interval) < 0) {
        forget_proc(s, t);
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
    read_proc_place(s, t, -1, false);
    if (t->outside && !was_outside)
        remember_new_proc(s, t); /* the backend puts it back */
    if (!t->outside)
        return 0;
    if (read_once(s, t, now, interval) < 0)
        return -1;
    struct user_sample *u = snapshot_user_for(ix, snap, t->owner);
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
    snapshot_user_for(ix, snap, t->owner)->arrived_memory += t->rss_pages * (uint64_t)s->page_size;
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
        struct tracked_proc *t = lookup_proc(s, s->watch[i]);
        if (!t || !proc_watched(s, t))
            continue; /* gone, or no longer one of them: out at the next listing */
        if ((t->outside || t->suspect) && add_stray(s, t, snap, now, interval, ix) < 0)
            continue;
        if (t->arrived && !t->outside && add_arrived(s, t, snap, now, interval, ix) < 0)
            continue;
        if (t->generation != s->generation && proc_followed(s, t) && refresh_proc(s, t, now, interval) == 0)
            t->generation = s->generation;
    }
}

/* What each person runs in Slurm jobs, apart (the last sweep's figures). */
static void add_slurm_use(const struct sampler *s, struct snapshot *snap, struct uid_index *ix)
{
    for (size_t i = 0; i < s->slurm_count; i++) {
        const struct slurm_job_usage *use = &s->slurm[i];
        struct user_sample *u = snapshot_user_for(ix, snap, use->owner);
        u->slurm_jobs = use->jobs;
        u->slurm_cpu = use->cpu;
        u->slurm_memory = use->memory;
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
        visit_proc(s, pids[k], now, interval);
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
    add_slurm_use(s, snap, ix);
    /* The command lines asked for above, so that this sample judges
     * a new program by its argv too. */
    poll_argv_answers(s, ARGV_WAIT_USEC);
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
    poll_argv_answers(s, 0);
}

size_t sampler_take_blocked(struct sampler *s, const struct blocked_argv **out)
{
    size_t n = s->blocked_count;
    *out = s->blocked;
    s->blocked_count = 0;
    return n;
}

bool sampler_proc(const struct sampler *s, pid_t pid, uint64_t start_time,
                  struct proc_sample *out)
{
    const struct tracked_proc *t = lookup_proc(s, pid);
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
    for (size_t b = 0; n && b < s->known.bucket_count; b++) {
        for (const struct tracked_proc *t = s->known.buckets[b]; t; t = t->next) {
            if (t->ignored || t->slurm_job || t->owner != owner)
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
