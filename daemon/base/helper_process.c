#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/helper_process.h"
#include "base/pidfd.h"

static const struct helper_child no_child = {-1, -1};

void helper_process_init(struct helper_process *h, size_t stuck_max)
{
    h->sock = -1;
    h->child = no_child;
    h->stuck_count = 0;
    h->stuck_max = stuck_max < HELPER_STUCK_MAX ? stuck_max : HELPER_STUCK_MAX;
}

static void forget(struct helper_child *c)
{
    if (c->pidfd >= 0)
        close(c->pidfd);
    *c = no_child;
}

void helper_process_reap(struct helper_process *h)
{
    size_t kept = 0;
    for (size_t i = 0; i < h->stuck_count; i++) {
        if (waitpid(h->stuck[i].pid, NULL, WNOHANG) == h->stuck[i].pid)
            forget(&h->stuck[i]);
        else
            h->stuck[kept++] = h->stuck[i];
    }
    h->stuck_count = kept;
}

static _Noreturn void child_main(int sock, pid_t parent, const char *name, const int *keep,
                                 size_t keep_count, void (*run)(void *arg), void *arg)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(1); /* the daemon died before the line above */
    prctl(PR_SET_NAME, name);
    /* The socket and the kept descriptors to 3, 4, ... by way of higher
     * numbers: any of them may be 3 or 4 already. */
    int high[1 + HELPER_KEEP_MAX];
    high[0] = fcntl(sock, F_DUPFD, 10);
    for (size_t i = 0; i < keep_count; i++)
        high[1 + i] = fcntl(keep[i], F_DUPFD, 10);
    for (size_t i = 0; i <= keep_count; i++)
        if (high[i] < 0 || dup2(high[i], 3 + (int)i) < 0)
            _exit(1);
    unsigned first_closed = 4 + (unsigned)keep_count;
    if (close_range(first_closed, ~0U, 0) != 0)
        for (int fd = (int)first_closed; fd < 65536; fd++)
            close(fd);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    run(arg);
    _exit(0);
}

int helper_process_start(struct helper_process *h, const char *name, const int *keep,
                         size_t keep_count, void (*run)(void *arg), void *arg)
{
    helper_process_reap(h);
    if (h->stuck_count >= h->stuck_max || keep_count > HELPER_KEEP_MAX) {
        errno = EAGAIN;
        return -1;
    }
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
        return -1;
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0)
        child_main(sv[1], parent, name, keep, keep_count, run, arg);
    close(sv[1]);
    if (pid < 0) {
        close(sv[0]);
        return -1;
    }
    /* Our own unreaped child: a pidfd if the kernel gives one. */
    h->child = (struct helper_child){pid, pidfd_open_(pid)};
    fcntl(sv[0], F_SETFL, O_NONBLOCK);
    h->sock = sv[0];
    return 0;
}

void helper_process_end(struct helper_process *h)
{
    if (h->sock < 0)
        return;
    struct helper_child *c = &h->child;
    own_child_signal(c->pid, c->pidfd, SIGKILL);
    struct pollfd p = c->pidfd >= 0 ? (struct pollfd){.fd = c->pidfd, .events = POLLIN}
                                    : (struct pollfd){.fd = h->sock, .events = 0}; /* POLLHUP */
    if (poll(&p, 1, 50) > 0 && waitpid(c->pid, NULL, WNOHANG) == c->pid)
        forget(c);
    else if (h->stuck_count < HELPER_STUCK_MAX)
        h->stuck[h->stuck_count++] = *c;
    else
        forget(c); /* never: none starts while stuck_max are stuck */
    close(h->sock);
    h->sock = -1;
    h->child = no_child;
}

void helper_process_stop(struct helper_process *h)
{
    helper_process_end(h);
    for (size_t i = 0; i < h->stuck_count; i++) {
        own_child_signal(h->stuck[i].pid, h->stuck[i].pidfd, SIGKILL);
        forget(&h->stuck[i]); /* left to init: it may never end */
    }
    h->stuck_count = 0;
}
