#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "control/control_server.h"
#include "util.h"

/* Connections taken from the kernel's queue per wake-up: a flood of
 * connects costs the loop a bounded slice at a time. */
#define ACCEPTS_PER_WAKE 16
#define LISTEN_BACKLOG 128
#define REQUESTS_PER_WAKE 4

/* ------------------------------------------------------------------ */
/* The socket */

/* A socket at path is a dead daemon's (the caller holds the lock);
 * anything else is the admin's and stays. */
static int clear_path(const char *path, char *err, size_t err_len)
{
    struct stat sb;
    if (lstat(path, &sb) < 0)
        return 0;
    if (!S_ISSOCK(sb.st_mode)) {
        snprintf(err, err_len, "%s: exists and is not a socket; remove it or set "
                 "[daemon] control_socket elsewhere", path);
        return -1;
    }
    if (unlink(path) < 0) {
        snprintf(err, err_len, "%s: cannot remove the old socket: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* /run/loginguard after a boot (a tmpfs): made, readable by all, since
 * everyone may connect. */
static void make_parent(const char *path)
{
    char *dir = xstrdup(path);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = '\0';
        mkdir(dir, 0755);
    }
    free(dir);
}

int control_server_open(struct control_server *s, const char *path, control_handler handler,
                        void *arg, char *err, size_t err_len)
{
    memset(s, 0, sizeof(*s));
    s->fd = -1;
    for (size_t i = 0; i < CONTROL_CONNS_MAX; i++)
        s->conns[i].fd = -1;
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof(addr.sun_path)) {
        snprintf(err, err_len, "%s: a socket path is at most %zu bytes; set a shorter "
                 "[daemon] control_socket", path, sizeof(addr.sun_path) - 1);
        return -1;
    }
    memcpy(addr.sun_path, path, strlen(path) + 1);
    make_parent(path);
    if (clear_path(path, err, err_len) < 0)
        return -1;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    /* Made 0666 by bind itself: a chmod of the path afterwards would
     * follow a link put there meanwhile (were control_socket in a
     * directory a user can write). */
    mode_t old_umask = umask(0111);
    int bound = fd < 0 ? -1 : bind(fd, (struct sockaddr *)&addr, sizeof(addr));
    umask(old_umask);
    if (bound < 0 || listen(fd, LISTEN_BACKLOG) < 0) {
        snprintf(err, err_len, "%s: cannot listen: %s; check that its directory exists and is "
                 "root's", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    s->fd = fd;
    s->path = xstrdup(path);
    s->handler = handler;
    s->arg = arg;
    return 0;
}

static void conn_close(struct control_conn *c)
{
    if (c->fd >= 0)
        close(c->fd);
    free(c->in);
    free(c->out);
    memset(c, 0, sizeof(*c));
    c->fd = -1;
}

void control_server_close(struct control_server *s)
{
    if (!s->path)
        return; /* never opened: the slots may not even be marked free */
    for (size_t i = 0; i < CONTROL_CONNS_MAX; i++)
        conn_close(&s->conns[i]);
    if (s->fd >= 0) {
        close(s->fd);
        unlink(s->path);
    }
    free(s->path);
    s->path = NULL;
    s->fd = -1;
}

/* ------------------------------------------------------------------ */
/* Connections */

size_t control_server_open_count(const struct control_server *s)
{
    size_t n = 0;
    for (size_t i = 0; i < CONTROL_CONNS_MAX; i++)
        n += s->conns[i].fd >= 0;
    return n;
}

/* A free slot, or the oldest connection's, closed. */
static struct control_conn *free_slot(struct control_server *s)
{
    struct control_conn *oldest = NULL;
    for (size_t i = 0; i < CONTROL_CONNS_MAX; i++) {
        struct control_conn *c = &s->conns[i];
        if (c->fd < 0)
            return c;
        if (!oldest || c->opened < oldest->opened)
            oldest = c;
    }
    conn_close(oldest);
    s->evicted++;
    return oldest;
}

static void accept_some(struct control_server *s, uint64_t now)
{
    for (int i = 0; i < ACCEPTS_PER_WAKE; i++) {
        int fd = accept4(s->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return; /* EAGAIN, or out of descriptors: the queue waits */
        struct ucred cred;
        socklen_t len = sizeof(cred);
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
            close(fd);
            continue;
        }
        struct control_conn *c = free_slot(s);
        c->fd = fd;
        c->peer = (struct control_peer){.pid = cred.pid, .uid = cred.uid, .gid = cred.gid,
                                        .admin = -1};
        c->opened = now;
        c->deadline = now + CONTROL_IDLE_USEC;
        s->accepted++;
    }
}

/* Send what can be sent now; returns -1 when the peer is gone. */
static int flush(struct control_conn *c, uint64_t now)
{
    while (c->out_off < c->out_len) {
        ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0)
            return errno == EAGAIN || errno == EINTR ? 0 : -1;
        c->out_off += (size_t)n;
    }
    free(c->out);
    c->out = NULL;
    c->out_len = c->out_off = 0;
    if (c->last)
        return -1;
    c->deadline = now + CONTROL_IDLE_USEC; /* the next request's time starts now */
    return 0;
}

static void queue_reply(struct control_conn *c, json_t *reply)
{
    char *line = control_line(reply);
    if (line && strlen(line) > CONTROL_OUT_MAX) {
        free(line);
        line = NULL;
    }
    if (!line)
        line = control_line(control_reply_error(CONTROL_FAILED, "the reply is too large"));
    c->out = line ? line : xstrdup("\n");
    c->out_len = strlen(c->out);
    c->out_off = 0;
}

/* The first whole line of the input, if there is one, is handled. */
static void take_request(struct control_server *s, struct control_conn *c, bool at_eof)
{
    char *nl = c->in ? memchr(c->in, '\n', c->in_len) : NULL;
    size_t len;
    if (nl) {
        len = (size_t)(nl - c->in);
    } else if (c->in_len >= CONTROL_LINE_MAX) {
        s->too_long++;
        c->last = true;
        queue_reply(c, control_reply_error(CONTROL_TOO_LONG, "a request is one line of at most "
                                           "8191 bytes; the connection is closed"));
        return;
    } else if (at_eof && c->in_len > 0) {
        len = c->in_len; /* the last line, without its newline */
        c->last = true;
    } else {
        return;
    }
    json_t *reply = s->handler(c, c->in, len, s->arg);
    c->waiting = !reply;
    if (c->waiting) {
        c->last = false; /* set again when it is taken anew */
        return;
    }
    queue_reply(c, reply);
    size_t used = nl ? len + 1 : len;
    memmove(c->in, c->in + used, c->in_len - used);
    c->in_len -= used;
}

/* One read (at most what the buffer has room for) and the request it
 * completes; -1 when the connection is done. */
static int read_some(struct control_server *s, struct control_conn *c)
{
    if (!c->in)
        c->in = xmalloc(CONTROL_LINE_MAX);
    ssize_t n = recv(c->fd, c->in + c->in_len, CONTROL_LINE_MAX - c->in_len, MSG_DONTWAIT);
    if (n < 0)
        return errno == EAGAIN || errno == EINTR ? 0 : -1;
    c->in_len += (size_t)n;
    c->eof = n == 0;
    take_request(s, c, c->eof);
    return n == 0 && !c->out ? -1 : 0;
}

static bool has_line(const struct control_conn *c)
{
    return c->in && memchr(c->in, '\n', c->in_len);
}

void control_server_pollfds(const struct control_server *s, struct pollfd *pfd)
{
    pfd[0] = (struct pollfd){.fd = s->fd, .events = POLLIN};
    for (size_t i = 0; i < CONTROL_CONNS_MAX; i++) {
        const struct control_conn *c = &s->conns[i];
        /* A request already read waits for the next wake-up: a writable
         * socket is one at once. */
        short ev = c->waiting ? 0 : c->out || has_line(c) ? POLLOUT : POLLIN;
        pfd[1 + i] = (struct pollfd){.fd = c->fd, .events = ev};
    }
}

void control_server_handle(struct control_server *s, const struct pollfd *pfd, uint64_t now)
{
    for (size_t i = 0; i < CONTROL_CONNS_MAX; i++) {
        struct control_conn *c = &s->conns[i];
        if (c->fd < 0 || pfd[1 + i].fd != c->fd || !pfd[1 + i].revents)
            continue;
        int rc = 0;
        if (c->waiting)
            rc = pfd[1 + i].revents & (POLLHUP | POLLERR) ? -1 : 0; /* the asker is gone */
        else if (c->out)
            rc = flush(c, now);
        else if (has_line(c))
            take_request(s, c, false);
        else
            rc = read_some(s, c);
        /* A reply goes out at once if it can; a connection with several
         * requests queued gets a few answered a wake-up, not all. */
        for (int k = 0; rc == 0 && c->out && k < REQUESTS_PER_WAKE; k++) {
            rc = flush(c, now);
            if (rc == 0 && !c->out && k + 1 < REQUESTS_PER_WAKE)
                take_request(s, c, false);
        }
        if (rc < 0)
            conn_close(c);
    }
    if (s->fd >= 0 && pfd[0].revents)
        accept_some(s, now);
}

void control_server_expire(struct control_server *s, uint64_t now)
{
    for (size_t i = 0; i < CONTROL_CONNS_MAX; i++) {
        struct control_conn *c = &s->conns[i];
        if (c->fd < 0 || now < c->deadline)
            continue;
        s->timed_out++;
        if (!c->waiting) {
            conn_close(c);
            continue;
        }
        /* Told why, with the time it takes to read that. */
        c->waiting = false;
        c->last = true;
        c->deadline = now + CONTROL_IDLE_USEC;
        queue_reply(c, control_reply_error(CONTROL_FAILED, "the user directory (NSS) has not "
                                           "answered in time; try again"));
    }
}

void control_server_retry(struct control_server *s)
{
    for (size_t i = 0; i < CONTROL_CONNS_MAX; i++) {
        struct control_conn *c = &s->conns[i];
        if (c->fd >= 0 && c->waiting)
            take_request(s, c, c->eof);
    }
}

uint64_t control_server_deadline(const struct control_server *s)
{
    uint64_t next = 0;
    for (size_t i = 0; i < CONTROL_CONNS_MAX; i++) {
        const struct control_conn *c = &s->conns[i];
        if (c->fd >= 0 && (!next || c->deadline < next))
            next = c->deadline;
    }
    return next;
}
