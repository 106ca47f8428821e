/* bench_shm: what the /proc path's walk of tmpfs for shared memory
 * (shm_held.h) costs a sweep, the cost a user drives by filling /dev/shm
 * with files: one sweep looks at SHM_WALK_BUDGET entries at most, and a
 * walk of more goes on at the next sweeps.  With FILES empty files in a
 * directory of /dev/shm (and whatever the node has there already): the
 * CPU time of one sweep (user and kernel), minimum and median of RUNS,
 * and how many sweeps a whole walk takes.
 *
 * Then the same for the walks over descriptors (shm_fd_walk.h), the cost
 * a user drives by holding descriptors: one owner's sweep looks at
 * FD_WALK_BUDGET descriptors at most, in at most FD_WALK_REQUESTS
 * requests to the command line reader's helper.  With one process
 * holding N descriptors of a kind (plain ones; unlinked files on a disk,
 * which the helper looks at closer; memfds of a page, closer still), and
 * with N processes of one owner: the wall time of one owner's sweep, the
 * helper's CPU time in it and the CPU time of this process (the daemon's
 * side), and how many sweeps a whole walk takes.
 * Figures, never pass/fail; needs root (to read every file's owner and
 * every process's descriptors, as the daemon does).
 *
 * Environment: LG_BENCH_RUNS (default 9). */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "benchutil.h"
#include "observe/argv_reader.h"
#include "observe/procfs.h"
#include "observe/shm_fd_walk.h"
#include "observe/shm_held.h"

static void fill(const char *dir, int files)
{
    char path[4200];
    for (int i = 0; i < files; i++) {
        snprintf(path, sizeof(path), "%s/f%06d", dir, i);
        int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        if (fd >= 0)
            close(fd);
    }
}

static void empty(const char *dir, int files)
{
    char path[4200];
    for (int i = 0; i < files; i++) {
        snprintf(path, sizeof(path), "%s/f%06d", dir, i);
        unlink(path);
    }
    rmdir(dir);
}

static void measure(int proc_fd, int files, int runs)
{
    char dir[64];
    snprintf(dir, sizeof(dir), "/dev/shm/lgbench-shm-%d", (int)getpid());
    if (mkdir(dir, 0700) != 0) {
        perror("bench_shm: mkdir");
        return;
    }
    fill(dir, files);
    struct runs ms = {0};
    struct shm_held h;
    shm_held_init(&h, proc_fd);
    for (int r = 0; r < runs && !stopping; r++) {
        double t0 = cpu_self_us();
        shm_held_sweep(&h);
        runs_add(&ms, (cpu_self_us() - t0) / 1000);
    }
    shm_held_free(&h);
    /* Sweeps to a whole walk, from a fresh start. */
    shm_held_init(&h, proc_fd);
    int per_walk = 0;
    while (h.walks == 0 && per_walk < 1000) {
        shm_held_sweep(&h);
        per_walk++;
    }
    shm_held_free(&h);
    printf("  %7d files: one sweep %.3f ms CPU min, %.3f median of %d; a whole walk %d sweep%s\n",
           files, runs_min(&ms), runs_median(&ms), ms.n, per_walk, per_walk == 1 ? "" : "s");
    empty(dir, files);
}

/* ------------------------------------------------------------ descriptors */

enum kind { PLAIN, UNLINKED_ON_DISK, MEMFD };
static const char *const kind_names[] = {"plain descriptors", "unlinked files on disk",
                                         "memfds of a page"};

/* One descriptor of the kind (dir: where an unlinked file is made). */
static int open_one(enum kind kind, const char *dir, int i)
{
    if (kind == PLAIN)
        return open("/dev/null", O_RDONLY);
    if (kind == MEMFD) {
        int fd = memfd_create("bench", 0);
        if (fd >= 0 && write(fd, "x", 1) != 1) {
            close(fd);
            return -1;
        }
        return fd;
    }
    char path[200];
    snprintf(path, sizeof(path), "%s/f%d", dir, i);
    int fd = open(path, O_RDWR | O_CREAT, 0600);
    unlink(path);
    return fd;
}

/* A child that holds count descriptors of the kind until it is killed;
 * its pid once it holds them all, -1 if it could not. */
static pid_t holder(enum kind kind, int count, const char *dir)
{
    int ready[2];
    if (pipe(ready) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(ready[0]);
        struct rlimit rl = {(rlim_t)count + 64, (rlim_t)count + 64};
        setrlimit(RLIMIT_NOFILE, &rl);
        for (int i = 0; i < count; i++)
            if (open_one(kind, dir, i) < 0)
                _exit(1);
        if (write(ready[1], "x", 1) != 1)
            _exit(1);
        for (;;)
            pause();
    }
    close(ready[1]);
    char c;
    bool ok = pid > 0 && read(ready[0], &c, 1) == 1;
    close(ready[0]);
    if (!ok && pid > 0)
        kill_reap(&pid, SIGKILL);
    return ok ? pid : -1;
}

/* Children that only wait, count of them, for an owner with many
 * processes; their pids into pids.  How many were made. */
static int waiters(pid_t *pids, int count)
{
    int made = 0;
    for (; made < count; made++) {
        pids[made] = fork();
        if (pids[made] == 0)
            for (;;)
                pause();
        if (pids[made] < 0)
            break;
    }
    return made;
}

static void take(const struct argv_answer *a, void *arg)
{
    fd_walk_take(arg, a);
}

/* One owner's sweep: requests one at a time, each answer waited for,
 * until the walk waits for the next sweep (true) or has ended (false). */
static bool one_sweep(struct argv_reader *r, struct fd_walk *w, const struct fd_walk_proc *procs,
                      size_t n)
{
    uid_t owner = procs[0].owner;
    fd_walk_begin(w, procs, n);
    for (;;) {
        struct fd_walk_request q;
        uint64_t bytes;
        switch (fd_walk_next(w, owner, &q, &bytes)) {
        case FD_WALK_ASK:
            if (argv_reader_request_fds(r, q.pid, q.start_time, owner, q.from, q.budget) != 0)
                return false;
            fd_walk_sent(w, owner);
            while (w->owners[0].out && !stopping)
                argv_reader_poll(r, 1000 * 1000, take, w);
            break;
        case FD_WALK_WAIT:
            return true;
        case FD_WALK_DONE:
            return false;
        }
    }
}

static void measure_walk(const char *what, const pid_t *pids, int n, int runs)
{
    struct fd_walk_proc *procs = calloc((size_t)n, sizeof(*procs));
    for (int i = 0; i < n; i++) {
        struct proc_stat st;
        char buf[1024];
        if (!bench_read_stat(pids[i], &st, buf, sizeof(buf))) {
            free(procs);
            return;
        }
        procs[i] = (struct fd_walk_proc){1000, pids[i], st.start_time};
    }
    char err[256];
    struct argv_reader r;
    if (argv_reader_start(&r, "/proc", err, sizeof(err)) < 0) {
        printf("  %s %s\n", what, err);
        free(procs);
        return;
    }
    struct runs wall = {0}, helper = {0}, self = {0};
    for (int i = 0; i < runs && !stopping; i++) {
        struct fd_walk w;
        fd_walk_init(&w);
        double t0 = wall_us(), c0 = cpu_of_us(r.helper.child.pid), s0 = cpu_self_us();
        one_sweep(&r, &w, procs, (size_t)n);
        runs_add(&helper, (cpu_of_us(r.helper.child.pid) - c0) / 1000);
        runs_add(&self, (cpu_self_us() - s0) / 1000);
        runs_add(&wall, (wall_us() - t0) / 1000);
        fd_walk_free(&w);
    }
    struct fd_walk w;
    fd_walk_init(&w);
    int sweeps = 1;
    while (one_sweep(&r, &w, procs, (size_t)n) && sweeps < 1000 && !stopping)
        sweeps++;
    fd_walk_free(&w);
    argv_reader_stop(&r);
    free(procs);
    printf("  %-34s one sweep %.1f ms wall, %.1f helper CPU, %.2f own CPU min; "
           "%.1f, %.1f, %.2f median of %d; a whole walk %d sweep%s\n",
           what, runs_min(&wall), runs_min(&helper), runs_min(&self), runs_median(&wall),
           runs_median(&helper), runs_median(&self), wall.n, sweeps, sweeps == 1 ? "" : "s");
}

static void measure_descriptors(enum kind kind, int count, int runs)
{
    char dir[64], what[80];
    /* On a disk: /tmp may be a tmpfs. */
    snprintf(dir, sizeof(dir), "/var/tmp/lgbench-fds-%d", (int)getpid());
    if (kind == UNLINKED_ON_DISK && mkdir(dir, 0700) != 0) {
        perror("bench_shm: mkdir");
        return;
    }
    pid_t pid = holder(kind, count, dir);
    if (kind == UNLINKED_ON_DISK)
        rmdir(dir);
    snprintf(what, sizeof(what), "%d %s:", count, kind_names[kind]);
    if (pid < 0) {
        printf("  %s could not be made\n", what);
        return;
    }
    measure_walk(what, &pid, 1, runs);
    kill_reap(&pid, SIGKILL);
}

static void measure_processes(int count, int runs)
{
    pid_t *pids = calloc((size_t)count, sizeof(*pids));
    int made = waiters(pids, count);
    char what[80];
    snprintf(what, sizeof(what), "%d processes of one owner:", made);
    if (made == count)
        measure_walk(what, pids, made, runs);
    for (int i = 0; i < made; i++)
        kill_reap(&pids[i], SIGKILL);
    free(pids);
}

int main(void)
{
    int rc = bench_start("bench_shm", "reading the owner of every user's files");
    if (rc)
        return rc;
    int runs = (int)env_long("LG_BENCH_RUNS", 9, 1, MAX_RUNS);
    int proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    printf("bench_shm: the walk of tmpfs for shared memory held (budget %d entries a sweep)\n",
           SHM_WALK_BUDGET);
    static const int sizes[] = {0, 1000, 20000, 100000};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]) && !stopping; i++)
        measure(proc_fd, sizes[i], runs);
    close(proc_fd);
    printf("bench_shm: the walks over descriptors (an owner's sweep: %d descriptors, "
           "%d requests, %d descriptors a request)\n",
           FD_WALK_BUDGET, FD_WALK_REQUESTS, FD_WALK_REQUEST);
    static const int counts[] = {100, 4000, 16000};
    for (int kind = PLAIN; kind <= MEMFD && !stopping; kind++)
        for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]) && !stopping; i++)
            measure_descriptors((enum kind)kind, counts[i], runs);
    static const int procs[] = {100, 1000};
    for (size_t i = 0; i < sizeof(procs) / sizeof(procs[0]) && !stopping; i++)
        measure_processes(procs[i], runs);
    return 0;

}
