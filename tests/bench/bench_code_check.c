/* bench_code_check: what checking that an exempt program runs only its
 * own code (code_check.h) costs: one check of a small program (sleep,
 * as tmux or gpg-agent are), of a process with 1,000 memory mappings,
 * and of one with more than the check reads (CODE_SMAPS_CAP of smaps:
 * the most one check can cost, whatever its owner does).  The daemon's
 * helper makes one such check per exempt process that uses CPU, once a
 * sweep.  CPU time of this process (user and kernel: /proc makes smaps
 * as it is read), the minimum and median of RUNS checks.  Figures, never
 * pass/fail; needs root (to read another process's smaps as the helper
 * does).
 *
 * Environment: LG_BENCH_RUNS (default 9). */
#include "config.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "benchutil.h"
#include "observe/code_check.h"

/* A child with extra mappings (alternately readable and not, so that
 * none merge), or with exec of sleep when extra is 0. */
static pid_t child(int extra)
{
    int ready[2];
    if (pipe2(ready, O_CLOEXEC) != 0) /* the child's end closes at its exec */
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(ready[0]);
        if (extra == 0) {
            execl("/usr/bin/sleep", "sleep", "600", (char *)NULL);
            _exit(127);
        }
        for (int i = 0; i < extra; i++)
            if (mmap(NULL, 4096, i % 2 ? PROT_READ : PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
                     0) == MAP_FAILED)
                _exit(1);
        if (write(ready[1], "x", 1) != 1)
            _exit(1);
        pause();
        _exit(0);
    }
    close(ready[1]);
    char c;
    if (read(ready[0], &c, 1) < 0) /* its byte, or (exec'd) the end of the pipe */
        perror("bench_code_check: read");
    close(ready[0]);
    /* Until the loader has mapped the C library (a hang guard of 5 s). */
    char maps[64];
    snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
    for (int tries = 0; extra == 0 && tries < 1000; tries++) {
        char *text = read_text(maps, 1 << 20);
        bool mapped = text && strstr(text, "libc");
        free(text);
        if (mapped)
            break;
        nap_ms(5);
    }
    return pid;
}

static void measure(const char *what, int extra, int runs)
{
    pid_t pid = child(extra);
    if (pid < 0)
        return;
    char path[64], why[CODE_WHY_MAX];
    snprintf(path, sizeof(path), "/proc/%d", (int)pid);
    struct runs r = {0};
    int verdict = -1;
    for (int i = 0; i < runs && !stopping; i++) {
        int dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dirfd < 0)
            break;
        double before = cpu_self_us();
        why[0] = '\0';
        verdict = code_check(dirfd, why, sizeof(why));
        runs_add(&r, cpu_self_us() - before);
        close(dirfd);
    }
    kill_reap(&pid, SIGKILL);
    if (r.n)
        printf("  %-42s %9.1f %9.1f   %s\n", what, runs_min(&r), runs_median(&r),
               verdict > 0 ? "runs only its own code" : why);
}

int main(void)
{
    int rc = bench_start("bench_code_check", "reading another process's smaps");
    if (rc)
        return rc;
    int runs = (int)env_long("LG_BENCH_RUNS", 9, 1, MAX_RUNS);
    struct load_mark m0 = load_mark_now(cpu_self_us());
    printf("bench_code_check: one check that an exempt program runs only its own code\n");
    printf("CPU time of this process, min / median of %d checks, microseconds\n\n", runs);
    printf("  %-42s %9s %9s   %s\n", "process", "min", "median", "verdict");
    measure("sleep (a small program, ~25 mappings)", 0, runs);
    measure("1,000 mappings", 1000, runs);
    measure("20,000 mappings (over the smaps cap)", 20000, runs);
    char text[160];
    other_load_text(other_load_between(m0, load_mark_now(cpu_self_us())), text, sizeof(text));
    printf("\nother load meanwhile (this benchmark not counted): %s\n", text);
    return 0;
}
