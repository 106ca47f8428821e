#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/service_notify.h"

/* NOTIFY_SOCKET into a socket address; returns its length, or a negative
 * errno. */
static int notify_address(const char *name, struct sockaddr_un *sa)
{
    size_t n = strlen(name);
    memset(sa, 0, sizeof(*sa));
    sa->sun_family = AF_UNIX;
    if (name[0] == '@') {
        /* The abstract namespace: a leading NUL, and the name's length
         * alone says where it ends (no terminating NUL). */
        if (n > sizeof(sa->sun_path))
            return -ENAMETOOLONG;
        memcpy(sa->sun_path, name, n);
        sa->sun_path[0] = '\0';
        return (int)(offsetof(struct sockaddr_un, sun_path) + n);
    }
    /* systemd's newer "vsock:" addresses, and relative paths, which would
     * depend on the working directory, are not for this daemon. */
    if (name[0] != '/')
        return -EAFNOSUPPORT;
    if (n >= sizeof(sa->sun_path))
        return -ENAMETOOLONG;
    memcpy(sa->sun_path, name, n + 1);
    return (int)(offsetof(struct sockaddr_un, sun_path) + n + 1);
}

int service_notify(const char *state)
{
    const char *name = getenv("NOTIFY_SOCKET");
    if (!name || !*name)
        return 0;
    struct sockaddr_un sa;
    int len = notify_address(name, &sa);
    if (len < 0)
        return len;
    /* Close-on-exec: the daemon forks the command line reader and notice
     * senders, which must not hold the manager's socket. */
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    size_t size = strlen(state);
    ssize_t sent = sendto(fd, state, size, MSG_NOSIGNAL, (const struct sockaddr *)&sa,
                          (socklen_t)len);
    int rc = sent < 0 ? -errno : (size_t)sent == size ? 1 : -EMSGSIZE;
    close(fd);
    return rc;
}
