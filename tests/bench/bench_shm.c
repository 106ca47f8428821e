/* bench_shm: what the /proc path's walk of tmpfs for shared memory
 * (shm_held.h) costs a sweep, the cost a user drives by filling /dev/shm
 * with files: one sweep looks at SHM_WALK_BUDGET entries at most, and a
 * walk of more goes on at the next sweeps.  With FILES empty files in a
 * directory of /dev/shm (and whatever the node has there already): the
 * CPU time of one sweep (user and kernel), minimum and median of RUNS,
 * and how many sweeps a whole walk takes.  Figures, never pass/fail;
 * needs root (to read every file's owner, as the daemon does).
 *
 * Environment: LG_BENCH_RUNS (default 9). */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "benchutil.h"
#include "shm_held.h"

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
    return 0;
}
