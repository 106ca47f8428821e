/* loginguard-link: the daemon's link to the cluster's database.  The
 * daemon starts it as a user of its own (cluster_link.h), with its end of
 * the socketpair as descriptor 3 and the password file, when the
 * connection string names one, open as descriptor 4: that file is root's,
 * so the link keeps a private copy that libpq can read by name. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cluster_link_packets.h"
#include "link_loop.h"

#define PASSFILE_MAX (1 << 20) /* a password file is a few lines */

/* The daemon's first packet: [cluster] database and the node's name.
 * Their copies in *database and *node; false when there is none. */
static bool read_settings(char **database, char **node)
{
    static char packet[CLUSTER_PACKET_MAX + 1];
    ssize_t n;
    do
        n = recv(CLUSTER_LINK_FD, packet, sizeof(packet) - 1, MSG_TRUNC);
    while (n < 0 && errno == EINTR);
    if (n <= 0 || n >= (ssize_t)sizeof(packet))
        return false;
    packet[n] = '\0';
    json_t *o = json_loads(packet, JSON_REJECT_DUPLICATES, NULL);
    const char *t = json_string_value(json_object_get(o, "t"));
    const char *d = json_string_value(json_object_get(o, "database"));
    const char *name = json_string_value(json_object_get(o, "node"));
    bool ok = t && strcmp(t, "settings") == 0 && d && name;
    if (ok) {
        *database = strdup(d);
        *node = strdup(name);
        ok = *database && *node;
    }
    json_decref(o);
    return ok;
}

/* The inherited password file copied into memory that only this user can
 * open, named by its /proc path into path; false when there is none. */
static bool copy_passfile(char *path, size_t len)
{
    if (fcntl(CLUSTER_LINK_PASSFILE_FD, F_GETFD) < 0)
        return false;
    int m = memfd_create("pgpass", MFD_CLOEXEC);
    bool ok = m >= 0 && fchmod(m, 0600) == 0; /* libpq ignores a file others may read */
    char buf[4096];
    size_t total = 0;
    for (ssize_t n; ok && (n = read(CLUSTER_LINK_PASSFILE_FD, buf, sizeof(buf))) != 0;) {
        if (n < 0 && errno == EINTR)
            continue;
        ok = n > 0 && (total += (size_t)n) <= PASSFILE_MAX && write(m, buf, (size_t)n) == n;
    }
    close(CLUSTER_LINK_PASSFILE_FD);
    if (!ok) {
        fprintf(stderr, "loginguard-link: cannot copy the password file: %s\n",
                errno ? strerror(errno) : "larger than 1 MiB");
        if (m >= 0)
            close(m);
        return false;
    }
    snprintf(path, len, "/proc/self/fd/%d", m);
    return true;
}

int main(void)
{
    if (getuid() == 0 || geteuid() == 0) {
        fprintf(stderr, "loginguard-link: loginguardd starts this program as the cluster link's "
                "own user ([cluster] link_user); it does not run as root\n");
        return 2;
    }
    char *database = NULL, *node = NULL;
    if (!read_settings(&database, &node)) {
        fprintf(stderr, "loginguard-link: no settings from loginguardd on descriptor %d\n",
                CLUSTER_LINK_FD);
        return 2;
    }
    char passfile[64];
    struct link_settings s = {database, copy_passfile(passfile, sizeof(passfile)) ? passfile : NULL,
                              node};
    int status = link_loop(&s, CLUSTER_LINK_FD);
    free(database);
    free(node);
    return status;
}
