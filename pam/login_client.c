/* The PAM module's side of the control socket.  It runs inside sshd,
 * login or su, so nothing here may block without a deadline, raise
 * SIGPIPE, or leave a descriptor open.  The daemon must be root: a
 * socket= pointing at a user's own listener must not let that user
 * speak for loginguard. */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "login_client.h"

/* How long a full listen queue is waited on between tries. */
#define RETRY_MS 10

struct deadline {
    struct timespec end;
};

static struct deadline deadline_in(int ms)
{
    struct deadline d;
    clock_gettime(CLOCK_MONOTONIC, &d.end);
    d.end.tv_sec += ms / 1000;
    d.end.tv_nsec += (long)(ms % 1000) * 1000000;
    if (d.end.tv_nsec >= 1000000000) {
        d.end.tv_sec++;
        d.end.tv_nsec -= 1000000000;
    }
    return d;
}

static int ms_left(const struct deadline *d)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    int64_t ms = (int64_t)(d->end.tv_sec - now.tv_sec) * 1000 +
                 (d->end.tv_nsec - now.tv_nsec) / 1000000;
    return ms > 0 ? (int)ms : 0;
}

/* Waits for events on fd until the deadline: 1 ready, 0 too late. */
static int wait_for(int fd, short events, const struct deadline *d)
{
    for (;;) {
        int left = ms_left(d);
        if (left == 0)
            return 0;
        struct pollfd p = {.fd = fd, .events = events};
        int n = poll(&p, 1, left);
        if (n > 0)
            return 1;
        if (n < 0 && errno != EINTR)
            return 1; /* the next call on fd says what is wrong */
    }
}

static int fail(char *err, size_t errlen, const char *what, int error)
{
    if (error)
        snprintf(err, errlen, "%s: %s", what, strerror(error));
    else
        snprintf(err, errlen, "%s", what);
    return -1;
}

/* A Unix socket's connect does not wait: a full listen queue answers
 * EAGAIN at once, so it is tried again until the deadline. */
static int connect_by(int fd, const char *path, const struct deadline *d, char *err,
                      size_t errlen)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof(a.sun_path))
        return fail(err, errlen, "socket path too long", 0);
    memcpy(a.sun_path, path, strlen(path) + 1);
    while (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
        if (errno == EINTR)
            continue;
        if (errno == EINPROGRESS) {
            int e = 0;
            socklen_t len = sizeof(e);
            if (!wait_for(fd, POLLOUT, d))
                return fail(err, errlen, "timed out connecting", 0);
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len);
            return e ? fail(err, errlen, "cannot connect", e) : 0;
        }
        if (errno != EAGAIN)
            return fail(err, errlen, "cannot connect", errno);
        if (ms_left(d) == 0)
            return fail(err, errlen, "timed out connecting (listen queue full)", 0);
        poll(NULL, 0, ms_left(d) < RETRY_MS ? ms_left(d) : RETRY_MS);
    }
    return 0;
}

static int check_peer_is_root(int fd, char *err, size_t errlen)
{
    struct ucred cred;
    socklen_t len = sizeof(cred);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
        return fail(err, errlen, "cannot tell who listens", errno);
    if (cred.uid != 0) {
        snprintf(err, errlen, "the socket is served by uid %u, not root", (unsigned)cred.uid);
        return -1;
    }
    return 0;
}

static int send_all(int fd, const char *data, size_t len, const struct deadline *d, char *err,
                    size_t errlen)
{
    while (len > 0) {
        ssize_t n = send(fd, data, len, MSG_NOSIGNAL);
        if (n > 0) {
            data += n;
            len -= (size_t)n;
        } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
            return fail(err, errlen, "cannot send the request", errno);
        } else if (!wait_for(fd, POLLOUT, d)) {
            return fail(err, errlen, "timed out sending the request", 0);
        }
    }
    return 0;
}

/* Reads up to and including the first newline into buf; returns the
 * line's length without it. */
static ssize_t read_line(int fd, char *buf, size_t size, const struct deadline *d, char *err,
                         size_t errlen)
{
    size_t have = 0;
    for (;;) {
        if (!wait_for(fd, POLLIN, d))
            return fail(err, errlen, "timed out waiting for the reply", 0);
        ssize_t n = recv(fd, buf + have, size - have, 0);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            continue;
        if (n < 0)
            return fail(err, errlen, "cannot read the reply", errno);
        if (n == 0)
            return fail(err, errlen, have ? "the reply was cut short" : "no reply", 0);
        char *nl = memchr(buf + have, '\n', (size_t)n);
        if (nl)
            return nl - buf;
        have += (size_t)n;
        if (have == size)
            return fail(err, errlen, "the reply is too long", 0);
    }
}

static json_t *parse_reply(const char *line, size_t len, char *err, size_t errlen)
{
    json_t *reply = json_loadb(line, len, JSON_REJECT_DUPLICATES, NULL);
    if (!json_is_object(reply)) {
        json_decref(reply);
        fail(err, errlen, "the reply is not a JSON object", 0);
        return NULL;
    }
    if (json_is_true(json_object_get(reply, "ok")))
        return reply;
    const char *why = json_string_value(json_object_get(json_object_get(reply, "error"), "message"));
    snprintf(err, errlen, "the daemon answered an error: %.200s", why ? why : "(no message)");
    json_decref(reply);
    return NULL;
}

json_t *login_exchange(const char *path, const char *request, int timeout_ms, char *err,
                       size_t errlen)
{
    struct deadline d = deadline_in(timeout_ms);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        fail(err, errlen, "cannot make a socket", errno);
        return NULL;
    }
    json_t *reply = NULL;
    char *buf = malloc(LOGIN_REPLY_MAX);
    ssize_t len;
    if (!buf)
        fail(err, errlen, "out of memory", 0);
    else if (connect_by(fd, path, &d, err, errlen) == 0 &&
             check_peer_is_root(fd, err, errlen) == 0 &&
             send_all(fd, request, strlen(request), &d, err, errlen) == 0 &&
             (len = read_line(fd, buf, LOGIN_REPLY_MAX, &d, err, errlen)) >= 0)
        reply = parse_reply(buf, (size_t)len, err, errlen);
    free(buf);
    close(fd);
    return reply;
}
