/* Starting the link program (cluster_link.h): a child that keeps nothing
 * of the daemon's, becomes the link's user and runs loginguard-link. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <jansson.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cluster/cluster_link.h"

extern char **environ;

int cluster_link_user(struct cluster_link_settings *s, const char *name, char *why, size_t len)
{
    errno = 0;
    const struct passwd *pw = getpwnam(name);
    if (!pw) {
        snprintf(why, len, "the cluster link's user \"%s\" ([cluster] link_user) does not exist%s%s: "
                 "make it a system user of its own (adduser --system --group %s), or name another",
                 name, errno ? ": " : "", errno ? strerror(errno) : "", name);
        return -1;
    }
    if (pw->pw_uid == 0 || pw->pw_gid == 0) {
        snprintf(why, len, "the cluster link's user \"%s\" ([cluster] link_user) is root or in "
                 "root's group: the link must run unprivileged; name a user of its own", name);
        return -1;
    }
    s->uid = pw->pw_uid;
    s->gid = pw->pw_gid;
    return 0;
}

/* Into the link's user, for good: no supplementary groups, no way back,
 * no way to gain privileges by exec. */
static bool become(uid_t uid, gid_t gid)
{
    if (setgroups(0, NULL) != 0 || setresgid(gid, gid, gid) != 0 || setresuid(uid, uid, uid) != 0)
        return false;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return false;
    uid_t r, e, saved;
    return getresuid(&r, &e, &saved) == 0 && r == uid && e == uid && saved == uid &&
           setuid(0) != 0;
}

static _Noreturn void link_child(const struct cluster_link_settings *s, int fd, int daemons,
                                 int passfile, pid_t parent)
{
    close(daemons); /* or the link would never see the daemon's end close */
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    for (int sig = 1; sig < NSIG; sig++)
        signal(sig, SIG_DFL);
    /* Both moved above their places first: either may be where the
     * other goes. */
    int high = CLUSTER_LINK_PASSFILE_FD + 1;
    if ((fd = fcntl(fd, F_DUPFD, high)) < 0 ||
        (passfile >= 0 && (passfile = fcntl(passfile, F_DUPFD, high)) < 0))
        _exit(1);
    if (dup2(fd, CLUSTER_LINK_FD) < 0 ||
        (passfile >= 0 && dup2(passfile, CLUSTER_LINK_PASSFILE_FD) < 0))
        _exit(1);
    /* Nothing of the daemon's but stdin, stdout, stderr, the socket and
     * the password file: not the event log, the state directory, the
     * control socket. */
    unsigned first = passfile >= 0 ? CLUSTER_LINK_PASSFILE_FD + 1 : CLUSTER_LINK_FD + 1;
    if (close_range(first, ~0U, 0) != 0) {
        long max = sysconf(_SC_OPEN_MAX);
        for (long f = first; f < (max > 0 ? max : 65536); f++)
            close((int)f);
    }
    if (!become(s->uid, s->gid)) {
        fprintf(stderr, "loginguardd: cluster link: cannot become uid %u: %s\n", (unsigned)s->uid,
                strerror(errno));
        _exit(1);
    }
    /* After the change of user, which clears it. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(1);
    char *const argv[] = {"loginguard-link", NULL};
    execve(s->program, argv, environ);
    fprintf(stderr, "loginguardd: cluster link: cannot run %s: %s\n", s->program, strerror(errno));
    _exit(127);
}

static int send_settings(int fd, const struct cluster_link_settings *s)
{
    json_t *o = json_pack("{s:s, s:s, s:s}", "t", "settings", "database", s->database, "node",
                          s->node);
    char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    if (!text) {
        errno = ENOMEM;
        return -1;
    }
    ssize_t w;
    do
        w = send(fd, text, strlen(text), MSG_NOSIGNAL | MSG_EOR);
    while (w < 0 && errno == EINTR);
    free(text);
    return w < 0 ? -1 : 0;
}

static int fail(int *fds, size_t n)
{
    int e = errno;
    for (size_t i = 0; i < n; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    errno = e;
    return -1;
}

int cluster_link_start(const struct cluster_link_settings *s, pid_t *pid, int *fd)
{
    /* Root's file (config_validate checked its owner and mode): opened
     * here, read by the link through the descriptor. */
    int fds[3] = {-1, -1, -1};
    if (s->passfile &&
        (fds[2] = open(s->passfile, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC)) < 0)
        return -1;
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) < 0)
        return fail(fds, 3);
    pid_t parent = getpid();
    fflush(NULL);
    pid_t p = fork();
    if (p < 0)
        return fail(fds, 3);
    if (p == 0)
        link_child(s, fds[1], fds[0], fds[2], parent);
    close(fds[1]);
    if (fds[2] >= 0)
        close(fds[2]);
    /* A fresh socket takes a first packet without blocking. */
    if (send_settings(fds[0], s) < 0 ||
        fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK) < 0) {
        int e = errno;
        close(fds[0]);
        kill(p, SIGKILL);
        while (waitpid(p, NULL, 0) < 0 && errno == EINTR)
            ;
        errno = e;
        return -1;
    }
    *pid = p;
    *fd = fds[0];
    return 0;
}
