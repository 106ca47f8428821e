/* The cluster link alone, for the tests: starts it as the daemon does
 * (cluster_link_start: the program LOGINGUARD_LINK_PROGRAM names, as the
 * user LG_CLUSTER_LINK_USER names) and relays its packets as JSON lines.
 *
 *   LG_CLUSTER_DATABASE='conninfo' LG_CLUSTER_LINK_USER=user lg-cluster-link NODE
 *
 * stdout: {"t":"started","pid":P} first, then each packet from the link
 * on a line of its own; stdin: each line a packet to the link.  At the
 * end of stdin the helper closes its end, as a daemon that stops does,
 * waits for the link and says {"t":"exit","status":S} (S: the exit
 * status, or 128 + the signal). */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cluster/cluster_link.h"
#include "cluster_config.h"

static void relay_from_link(int fd)
{
    static char buf[CLUSTER_PACKET_MAX + 1];
    for (;;) {
        ssize_t n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
        if (n <= 0)
            return;
        buf[n] = '\0';
        printf("%s\n", buf);
        fflush(stdout);
    }
}

/* What stdin has, each whole line a packet to the link (read(2), not
 * stdio: poll must see every line); false at the end of stdin. */
static bool relay_to_link(int fd)
{
    static char buf[2 * CLUSTER_PACKET_MAX];
    static size_t have;
    ssize_t n = read(STDIN_FILENO, buf + have, sizeof(buf) - have);
    if (n < 0 && errno == EINTR)
        return true;
    if (n <= 0)
        return false;
    have += (size_t)n;
    char *start = buf, *nl;
    while ((nl = memchr(start, '\n', have - (size_t)(start - buf)))) {
        if (nl > start && send(fd, start, (size_t)(nl - start), MSG_NOSIGNAL) < 0)
            fprintf(stderr, "lg-cluster-link: send: %s\n", strerror(errno));
        start = nl + 1;
    }
    have -= (size_t)(start - buf);
    memmove(buf, start, have);
    if (have == sizeof(buf))
        have = 0; /* a line too long for any packet */
    return true;
}

int main(int argc, char **argv)
{
    const char *database = getenv("LG_CLUSTER_DATABASE");
    const char *user = getenv("LG_CLUSTER_LINK_USER");
    const char *program = getenv("LOGINGUARD_LINK_PROGRAM");
    if (argc != 2 || !database || !user || !program) {
        fprintf(stderr, "usage: LG_CLUSTER_DATABASE=conninfo LG_CLUSTER_LINK_USER=user "
                "LOGINGUARD_LINK_PROGRAM=path lg-cluster-link NODE\n");
        return 2;
    }
    char passfile[4096], why[512];
    struct cluster_link_settings s = {
        .program = program, .database = database, .node = argv[1],
        .passfile = cluster_conninfo_value(database, "passfile", passfile, sizeof(passfile))
                        ? passfile : NULL};
    if (cluster_link_user(&s, user, why, sizeof(why)) < 0) {
        fprintf(stderr, "lg-cluster-link: %s\n", why);
        return 1;
    }
    pid_t pid;
    int fd;
    if (cluster_link_start(&s, &pid, &fd) < 0) {
        fprintf(stderr, "lg-cluster-link: cluster_link_start: %s\n", strerror(errno));
        return 1;
    }
    printf("{\"t\":\"started\",\"pid\":%d}\n", (int)pid);
    fflush(stdout);
    for (bool in = true; in;) {
        struct pollfd p[2] = {{.fd = fd, .events = POLLIN}, {.fd = STDIN_FILENO, .events = POLLIN}};
        if (poll(p, 2, -1) < 0 && errno != EINTR)
            break;
        if (p[0].revents & POLLIN)
            relay_from_link(fd);
        else if (p[0].revents & (POLLHUP | POLLERR))
            break; /* the link died */
        if (p[1].revents)
            in = relay_to_link(fd);
    }
    close(fd);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    printf("{\"t\":\"exit\",\"status\":%d}\n",
           WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    return 0;
}
