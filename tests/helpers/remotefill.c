/* remotefill MB: a child that never runs again holds MB megabytes, filled
 * by its parent with process_vm_writev once the parent is sent SIGUSR1.
 * The child's run time stands still while its memory grows: a sampler
 * that reads memory only when a process ran never sees it.  The parent
 * prints the child's pid, and "filled" when done.  Both end with the
 * parent (the child by PR_SET_PDEATHSIG), or by themselves after 600 s. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <unistd.h>

#define MB (1UL << 20)

static void wait_usr1(void)
{
    sigset_t usr1;
    int sig;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    sigwait(&usr1, &sig);
}

/* The child: map the memory untouched, say where, and sleep. */
static void child(size_t mb, int out)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    void *p = mmap(NULL, mb * MB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED || write(out, &p, sizeof(p)) != sizeof(p))
        _exit(1);
    for (;;)
        pause();
}

int main(int argc, char **argv)
{
    size_t mb = argc == 2 ? strtoul(argv[1], NULL, 10) : 0;
    if (mb == 0) {
        fprintf(stderr, "usage: remotefill MB\n");
        return 2;
    }
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    sigprocmask(SIG_BLOCK, &usr1, NULL);
    alarm(600);
    int fds[2];
    if (pipe(fds) < 0)
        return 1;
    pid_t pid = fork();
    if (pid < 0)
        return 1;
    if (pid == 0)
        child(mb, fds[1]);
    void *at;
    if (read(fds[0], &at, sizeof(at)) != sizeof(at))
        return 1;
    printf("%d\n", (int)pid);
    fflush(stdout);
    wait_usr1();
    static char chunk[MB];
    memset(chunk, 0x5a, sizeof(chunk));
    for (size_t i = 0; i < mb; i++) {
        struct iovec local = {chunk, MB}, remote = {(char *)at + i * MB, MB};
        if (process_vm_writev(pid, &local, 1, &remote, 1, 0) != (ssize_t)MB) {
            perror("remotefill: process_vm_writev");
            return 1;
        }
    }
    printf("filled\n");
    fflush(stdout);
    for (;;)
        pause();
}
