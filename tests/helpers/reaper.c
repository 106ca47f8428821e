/* reaper CMD [ARG]...: runs CMD and reaps, at once, every process
 * orphaned below it, as init (or systemd --user) does on a login node:
 * a child subreaper.  CMD dies with the reaper (PR_SET_PDEATHSIG), so a
 * test that kills the reaper leaves nothing running.  Exits with CMD's
 * status once CMD has ended. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: reaper CMD [ARG]...\n");
        return 2;
    }
    if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0) {
        perror("reaper: PR_SET_CHILD_SUBREAPER");
        return 1;
    }
    pid_t parent = getpid();
    pid_t cmd = fork();
    if (cmd < 0) {
        perror("reaper: fork");
        return 1;
    }
    if (cmd == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
        if (getppid() != parent)
            _exit(1);
        execvp(argv[1], argv + 1);
        perror("reaper: exec");
        _exit(127);
    }
    for (;;) {
        int status;
        pid_t pid = waitpid(-1, &status, 0);
        if (pid == cmd)
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        if (pid < 0 && errno != EINTR)
            return 1;
    }
}
