#include "config.h"

#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/pidfd.h"

int pidfd_open_(pid_t pid)
{
    return (int)syscall(SYS_pidfd_open, pid, 0);
}

int pidfd_signal_(int pidfd, int sig)
{
    return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

int own_child_signal(pid_t pid, int pidfd, int sig)
{
    return pidfd >= 0 ? pidfd_signal_(pidfd, sig) : kill(pid, sig);
}
