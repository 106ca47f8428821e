#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"
#include "util.h"

/* In the child: leave nothing of the daemon behind but stderr, then run. */
static _Noreturn void child_main(child_fn *fn, void *arg, int in_fd, pid_t parent)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(127);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    for (int sig = 1; sig < NSIG; sig++)
        signal(sig, SIG_DFL); /* fails harmlessly for KILL, STOP and glibc's own */
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null < 0 || dup2(in_fd, STDIN_FILENO) < 0 || dup2(null, STDOUT_FILENO) < 0)
        _exit(127);
    /* Nothing of the daemon's may reach a child that becomes a user: the
     * system bus, the event log, the state directory.  close_range is
     * Linux 5.9; before it, one close per possible descriptor. */
    if (close_range(3, ~0U, 0) != 0) {
        long max = sysconf(_SC_OPEN_MAX);
        for (long fd = 3; fd < (max > 0 ? max : 65536); fd++)
            close((int)fd);
    }
    _exit(fn(arg));
}

static int remaining_ms(uint64_t deadline)
{
    uint64_t now = now_boottime_usec();
    if (now >= deadline)
        return 0;
    uint64_t ms = (deadline - now + 999) / 1000;
    return ms > 60 * 60 * 1000 ? 60 * 60 * 1000 : (int)ms;
}

/* Write the input while the child lives and the deadline allows; a child
 * that does not read it (or exits first) costs no more than the deadline.
 * A socket rather than a pipe, so MSG_NOSIGNAL keeps a child that exits
 * early from killing the daemon with SIGPIPE. */
static void feed(int fd, int pidfd, const char *input, size_t len, uint64_t deadline)
{
    while (len > 0) {
        struct pollfd p[2] = {{.fd = pidfd, .events = POLLIN}, {.fd = fd, .events = POLLOUT}};
        int n = poll(p, 2, remaining_ms(deadline));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0 || p[0].revents || (p[1].revents & (POLLERR | POLLHUP)))
            return;
        ssize_t w = send(fd, input, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0 && errno != EAGAIN && errno != EINTR)
            return;
        if (w > 0) {
            input += w;
            len -= (size_t)w;
        }
    }
}

/* Wait for the exit through the pidfd; past the deadline, SIGKILL it
 * there (the pidfd cannot reach another process).  Always reaps. */
static enum child_result finish(pid_t pid, int pidfd, uint64_t deadline, int *status)
{
    enum child_result result = CHILD_EXITED;
    for (;;) {
        struct pollfd p = {.fd = pidfd, .events = POLLIN};
        int n = poll(&p, 1, remaining_ms(deadline));
        if (n > 0)
            break;
        if (n < 0 && errno == EINTR)
            continue;
        pidfd_signal_(pidfd, SIGKILL);
        result = CHILD_TIMED_OUT;
        break;
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (status)
        *status = st;
    return result;
}

enum child_result child_run(child_fn *fn, void *arg, const char *input, size_t input_len,
                            uint64_t timeout_usec, int *status)
{
    uint64_t deadline = now_boottime_usec() + timeout_usec;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        return CHILD_ERROR;
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0)
        child_main(fn, arg, sv[1], parent);
    int e = errno;
    close(sv[1]);
    if (pid < 0) {
        close(sv[0]);
        errno = e;
        return CHILD_ERROR;
    }
    /* Our own unreaped child: the pid cannot have been recycled yet. */
    int pidfd = pidfd_open_(pid);
    if (pidfd < 0) {
        e = errno;
        kill(pid, SIGKILL);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
        close(sv[0]);
        errno = e;
        return CHILD_ERROR;
    }
    if (input)
        feed(sv[0], pidfd, input, input_len, deadline);
    close(sv[0]); /* end of input */
    enum child_result result = finish(pid, pidfd, deadline, status);
    close(pidfd);
    return result;
}

void child_describe_status(int status, char *buf, size_t len)
{
    if (WIFEXITED(status))
        snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(buf, len, "killed by signal %d", WTERMSIG(status));
    else
        snprintf(buf, len, "ended with wait status %#x", (unsigned)status);
}
