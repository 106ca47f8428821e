/* threadpark N: N processes that each had a thread end, then sleep: each
 * holds a place in the daemon's table of thread groups in flight (a
 * group's place is freed only when its last thread ends).  On SIGTERM the
 * parent ends them all and reaps them (an init may be slow to); they end
 * with it otherwise (PR_SET_PDEATHSIG), and it after 600 s (alarm), so a
 * test that dies leaves nothing behind. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static void *nothing(void *arg)
{
    return arg;
}

static void park(void)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    pthread_t t;
    if (pthread_create(&t, NULL, nothing, NULL) != 0 || pthread_join(t, NULL) != 0)
        _exit(1);
    for (;;)
        pause();
}

int main(int argc, char **argv)
{
    long n = argc == 2 ? strtol(argv[1], NULL, 10) : 0;
    if (n <= 0) {
        fprintf(stderr, "usage: threadpark N\n");
        return 2;
    }
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    sigprocmask(SIG_BLOCK, &term, NULL);
    alarm(600);
    pid_t *kids = calloc((size_t)n, sizeof(*kids));
    long made = 0;
    while (kids && made < n) {
        pid_t p = fork();
        if (p < 0) {
            perror("threadpark: fork");
            break;
        }
        if (p == 0) {
            sigprocmask(SIG_UNBLOCK, &term, NULL);
            park();
        }
        kids[made++] = p;
    }
    int sig;
    sigwait(&term, &sig);
    for (long i = 0; i < made; i++)
        kill(kids[i], SIGKILL);
    for (long i = 0; i < made; i++)
        waitpid(kids[i], NULL, 0);
    free(kids);
    return 0;
}
