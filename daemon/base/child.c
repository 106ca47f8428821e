#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/child.h"
#include "base/pidfd.h"
#include "util.h"

/* In the child: leave nothing of the daemon behind but stderr, then run. */
static _Noreturn void child_main(child_fn *fn, void *arg, int in_fd, int out_fd, pid_t parent)
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
    if (null < 0 || dup2(in_fd, STDIN_FILENO) < 0 ||
        dup2(out_fd >= 0 ? out_fd : null, STDOUT_FILENO) < 0)
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

/* Write what the child takes now.  A socket rather than a pipe, so
 * MSG_NOSIGNAL keeps a child that exits early from killing the daemon
 * with SIGPIPE; the end of the input (or a child that will not read it)
 * closes it. */
static void feed(struct child *c)
{
    while (c->input_fd >= 0 && c->input_done < c->input_len) {
        ssize_t w = send(c->input_fd, c->input + c->input_done, c->input_len - c->input_done,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && errno == EAGAIN)
            return;
        if (w < 0)
            break;
        c->input_done += (size_t)w;
    }
    if (c->input_fd >= 0)
        close(c->input_fd);
    c->input_fd = -1;
    free(c->input);
    c->input = NULL;
}

/* Take what the child wrote so far, without blocking; at its end (or an
 * error) the descriptor is closed. */
static void take_output(struct child *c)
{
    char buf[4096];
    while (c->output_fd >= 0) {
        ssize_t r = read(c->output_fd, buf, sizeof(buf));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && errno == EAGAIN)
            return;
        if (r <= 0) {
            close(c->output_fd);
            c->output_fd = -1;
            return;
        }
        size_t keep = c->output_max - c->output_len;
        if ((size_t)r > keep)
            c->output_cut = true;
        else
            keep = (size_t)r;
        memcpy(c->output + c->output_len, buf, keep);
        c->output_len += keep;
        c->output[c->output_len] = '\0';
    }
}

static int start(struct child *c, child_fn *fn, void *arg, uint64_t timeout_usec, int out[2])
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        return -1;
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0)
        child_main(fn, arg, sv[1], out ? out[1] : -1, parent);
    int e = errno;
    close(sv[1]);
    if (out) {
        close(out[1]);
        c->output_fd = out[0];
    }
    if (pid < 0) {
        close(sv[0]);
        if (out)
            close(out[0]);
        c->output_fd = -1;
        errno = e;
        return -1;
    }
    c->pid = pid;
    c->pidfd = pidfd_open_(pid); /* our own unreaped child: may go without (util.h) */
    c->input_fd = sv[0];
    c->deadline = now_boottime_usec() + timeout_usec;
    return 0;
}

static void clear(struct child *c)
{
    memset(c, 0, sizeof(*c));
    c->pid = c->pidfd = c->input_fd = c->output_fd = -1;
}

int child_start(struct child *c, child_fn *fn, void *arg, const char *input, size_t input_len,
                uint64_t timeout_usec)
{
    clear(c);
    if (start(c, fn, arg, timeout_usec, NULL) < 0)
        return -1;
    if (input && input_len) {
        c->input = xmalloc(input_len);
        memcpy(c->input, input, input_len);
        c->input_len = input_len;
    }
    feed(c);
    return 0;
}

int child_start_reading(struct child *c, child_fn *fn, void *arg, uint64_t timeout_usec,
                        size_t output_max)
{
    clear(c);
    int out[2];
    if (pipe2(out, O_CLOEXEC | O_NONBLOCK) < 0)
        return -1;
    c->output_max = output_max;
    c->output = xmalloc(output_max + 1);
    c->output[0] = '\0';
    if (start(c, fn, arg, timeout_usec, out) < 0) {
        free(c->output);
        c->output = NULL;
        return -1;
    }
    return 0;
}

bool child_check(struct child *c, enum child_result *result, int *status)
{
    feed(c);
    take_output(c);
    if (!c->killed && now_boottime_usec() >= c->deadline) {
        own_child_signal(c->pid, c->pidfd, SIGKILL);
        c->killed = true;
        if (c->input_fd >= 0) {
            c->input_len = 0; /* nothing more for it */
            feed(c);
        }
    }
    int st = 0;
    pid_t got;
    while ((got = waitpid(c->pid, &st, WNOHANG)) < 0 && errno == EINTR)
        ;
    if (got != c->pid)
        return false;
    if (c->input_fd >= 0) {
        c->input_len = 0;
        feed(c);
    }
    /* What it wrote before it ended is in the pipe; a grandchild that
     * still holds the pipe open is not waited for. */
    take_output(c);
    if (c->output_fd >= 0)
        close(c->output_fd);
    c->output_fd = -1;
    if (c->pidfd >= 0)
        close(c->pidfd);
    c->pidfd = -1;
    *result = c->killed ? CHILD_TIMED_OUT : CHILD_EXITED;
    if (status)
        *status = st;
    return true;
}

size_t child_pollfds(const struct child *c, struct pollfd *out)
{
    size_t n = 0;
    if (c->pidfd >= 0)
        out[n++] = (struct pollfd){.fd = c->pidfd, .events = POLLIN};
    if (c->input_fd >= 0)
        out[n++] = (struct pollfd){.fd = c->input_fd, .events = POLLOUT};
    if (c->output_fd >= 0)
        out[n++] = (struct pollfd){.fd = c->output_fd, .events = POLLIN};
    return n;
}

/* Without a pidfd nothing says when the child exits: it is looked at
 * this often instead. */
#define NO_PIDFD_CHECK_USEC (20 * 1000)

uint64_t child_deadline(const struct child *c)
{
    uint64_t next = c->killed ? 0 : c->deadline;
    if (c->pidfd < 0) {
        uint64_t soon = now_boottime_usec() + NO_PIDFD_CHECK_USEC;
        next = next && next < soon ? next : soon;
    }
    return next;
}

enum child_result child_wait(struct child *c, int *status)
{
    enum child_result result;
    while (!child_check(c, &result, status)) {
        struct pollfd p[CHILD_POLLFDS];
        size_t n = child_pollfds(c, p);
        uint64_t now = now_boottime_usec(), until = child_deadline(c);
        /* Killed: it is reaped when it dies, whenever that is. */
        int ms = !until ? -1 : until > now ? (int)((until - now + 999) / 1000) : 0;
        poll(p, n, ms);
    }
    return result;
}

enum child_result child_run(child_fn *fn, void *arg, const char *input, size_t input_len,
                            uint64_t timeout_usec, int *status)
{
    struct child c;
    if (child_start(&c, fn, arg, input, input_len, timeout_usec) < 0)
        return CHILD_ERROR;
    return child_wait(&c, status);
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
