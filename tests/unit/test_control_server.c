/* The control socket's connections (control_server.c): what a client
 * gets back, and what a slow, oversized, half-written or idle one cannot
 * do to the daemon; and a request that waits for the user directory. */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "control/control_server.h"
#include "testutil.h"
#include "util.h"

struct fixture {
    struct control_server s;
    char path[100];
    unsigned handled;
    size_t reply_size;  /* pad replies to this many bytes */
    bool directory_answered; /* for a handler that waits for it */
};

/* Echoes the request's "request" and the peer's uid. */
static json_t *echo(struct control_conn *c, const char *line, size_t len, void *arg)
{
    struct fixture *f = arg;
    f->handled++;
    struct control_request req;
    struct control_error err;
    if (control_parse_request(line, len, &req, &err) < 0)
        return control_reply_error(err.code, err.message);
    json_t *r = control_reply_ok();
    json_object_set_new(r, "request", json_string(control_op_name(req.op)));
    json_object_set_new(r, "uid", json_integer(c->peer.uid));
    if (f->reply_size) {
        char *pad = xmalloc(f->reply_size + 1);
        memset(pad, 'x', f->reply_size);
        pad[f->reply_size] = '\0';
        json_object_set_new(r, "pad", json_string(pad));
        free(pad);
    }
    return r;
}

static int setup(void **state)
{
    struct fixture *f = xcalloc(1, sizeof(*f));
    make_test_dir();
    snprintf(f->path, sizeof(f->path), "%s/run/control.sock", test_dir);
    char err[512];
    if (control_server_open(&f->s, f->path, echo, f, err, sizeof(err)) < 0)
        fail_msg("%s", err);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    control_server_close(&f->s);
    remove_test_dir();
    free(f);
    return 0;
}

static uint64_t now_usec(void)
{
    return now_boottime_usec();
}

/* The daemon's loop, for ms milliseconds. */
static void pump(struct fixture *f, int ms)
{
    uint64_t end = now_usec() + (uint64_t)ms * 1000;
    for (;;) {
        uint64_t now = now_usec();
        if (now >= end)
            return;
        struct pollfd pfd[CONTROL_POLLFDS];
        control_server_pollfds(&f->s, pfd);
        if (poll(pfd, CONTROL_POLLFDS, (int)((end - now) / 1000) + 1) > 0)
            control_server_handle(&f->s, pfd, now_usec());
        control_server_expire(&f->s, now_usec());
    }
}

static int client(struct fixture *f)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", f->path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    assert_int_equal(connect(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
    return fd;
}

static void send_all(int fd, const char *data, size_t len)
{
    assert_int_equal(send(fd, data, len, MSG_NOSIGNAL), (ssize_t)len);
}

/* What the server has sent fd so far, pumping meanwhile; "" if nothing,
 * and *closed when the server closed the connection. */
static char *take(struct fixture *f, int fd, bool *closed)
{
    static char buf[1 << 16];
    size_t n = 0;
    *closed = false;
    for (int tries = 0; tries < 50 && !*closed; tries++) {
        pump(f, 10);
        ssize_t r;
        while ((r = recv(fd, buf + n, sizeof(buf) - 1 - n, MSG_DONTWAIT)) > 0)
            n += (size_t)r;
        if (r == 0 || (r < 0 && errno != EAGAIN))
            *closed = true;
        if (n && buf[n - 1] == '\n')
            break;
    }
    buf[n] = '\0';
    return buf;
}

static void test_a_request_is_answered_with_the_peers_uid(void **state)
{
    struct fixture *f = *state;
    int fd = client(f);
    pump(f, 20);
    const char *req = "{\"version\":1,\"request\":\"status\"}\n";
    send_all(fd, req, strlen(req));
    bool closed;
    char *reply = take(f, fd, &closed);
    char want[100];
    snprintf(want, sizeof(want), "\"uid\":%u", (unsigned)getuid());
    assert_non_null(strstr(reply, "\"ok\":true"));
    assert_non_null(strstr(reply, want));
    assert_false(closed);
    /* A second request on the same connection. */
    send_all(fd, req, strlen(req));
    reply = take(f, fd, &closed);
    assert_non_null(strstr(reply, "\"request\":\"status\""));
    close(fd);
}

static void test_socket_is_for_everyone_and_replaces_a_stale_one(void **state)
{
    struct fixture *f = *state;
    struct stat sb;
    assert_int_equal(stat(f->path, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0666);
    /* A dead daemon's socket (ours, once closed without unlinking, is
     * what a kill -9 leaves): replaced. */
    close(f->s.fd);
    f->s.fd = -1;
    control_server_close(&f->s);
    assert_int_equal(stat(f->path, &sb), 0);
    assert_true(S_ISSOCK(sb.st_mode));
    char err[512];
    assert_int_equal(control_server_open(&f->s, f->path, echo, f, err, sizeof(err)), 0);
    close(client(f));
    control_server_close(&f->s);
    assert_int_equal(stat(f->path, &sb), -1); /* removed at close */
    /* Anything else at the path is the admin's. */
    write_file("run/control.sock", "not a socket");
    assert_int_equal(control_server_open(&f->s, f->path, echo, f, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "is not a socket"));
    assert_int_equal(stat(f->path, &sb), 0);
    unlink(f->path);
    assert_int_equal(control_server_open(&f->s, f->path, echo, f, err, sizeof(err)), 0);
}

static void test_a_line_too_long_gets_an_error_and_is_closed(void **state)
{
    struct fixture *f = *state;
    int fd = client(f);
    char *junk = xmalloc(CONTROL_LINE_MAX + 100);
    memset(junk, 'a', CONTROL_LINE_MAX + 100);
    send_all(fd, junk, CONTROL_LINE_MAX + 100);
    bool closed;
    char *reply = take(f, fd, &closed);
    assert_non_null(strstr(reply, "\"code\":\"too_long\""));
    take(f, fd, &closed);
    assert_true(closed);
    assert_int_equal(f->handled, 0);
    assert_int_equal(control_server_open_count(&f->s), 0);
    free(junk);
    close(fd);
}

static void test_a_half_written_request_is_closed_at_its_deadline(void **state)
{
    struct fixture *f = *state;
    int fd = client(f);
    send_all(fd, "{\"version\":1,", 13);
    pump(f, 20);
    assert_int_equal(control_server_open_count(&f->s), 1);
    uint64_t deadline = control_server_deadline(&f->s);
    assert_true(deadline > now_usec() && deadline <= now_usec() + CONTROL_IDLE_USEC);
    control_server_expire(&f->s, deadline - 1);
    assert_int_equal(control_server_open_count(&f->s), 1);
    control_server_expire(&f->s, deadline);
    assert_int_equal(control_server_open_count(&f->s), 0);
    assert_int_equal(f->s.timed_out, 1);
    assert_int_equal(f->handled, 0);
    close(fd);
}

static void test_a_last_line_without_newline_is_answered_at_eof(void **state)
{
    struct fixture *f = *state;
    int fd = client(f);
    const char *req = "{\"version\":1,\"request\":\"user\"}";
    send_all(fd, req, strlen(req));
    shutdown(fd, SHUT_WR);
    bool closed;
    char *reply = take(f, fd, &closed);
    assert_non_null(strstr(reply, "\"request\":\"user\""));
    take(f, fd, &closed);
    assert_true(closed);
    close(fd);
}

static void test_more_connections_than_slots_close_the_oldest(void **state)
{
    struct fixture *f = *state;
    int fds[CONTROL_CONNS_MAX + 1];
    for (int i = 0; i <= CONTROL_CONNS_MAX; i++) {
        fds[i] = client(f);
        pump(f, 2);
    }
    pump(f, 20);
    assert_int_equal(control_server_open_count(&f->s), CONTROL_CONNS_MAX);
    assert_int_equal(f->s.evicted, 1);
    bool closed;
    take(f, fds[0], &closed);
    assert_true(closed);
    const char *req = "{\"version\":1,\"request\":\"status\"}\n";
    send_all(fds[CONTROL_CONNS_MAX], req, strlen(req));
    assert_non_null(strstr(take(f, fds[CONTROL_CONNS_MAX], &closed), "\"ok\":true"));
    for (int i = 0; i <= CONTROL_CONNS_MAX; i++)
        close(fds[i]);
}

/* A client that asks and never reads its reply holds a send buffer's
 * worth, never the loop; it is closed at its deadline. */
static void test_a_client_that_does_not_read_does_not_block(void **state)
{
    struct fixture *f = *state;
    f->reply_size = 2 << 20;
    int fd = client(f);
    int small = 4096;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
    const char *req = "{\"version\":1,\"request\":\"status\"}\n";
    send_all(fd, req, strlen(req));
    /* A loop that waited for the client would wait for ever: the
     * alarm is the hang guard, never the assertion. */
    alarm(60);
    pump(f, 50);
    alarm(0);
    assert_int_equal(f->handled, 1);
    assert_int_equal(control_server_open_count(&f->s), 1);
    control_server_expire(&f->s, control_server_deadline(&f->s));
    assert_int_equal(control_server_open_count(&f->s), 0);
    close(fd);
}

/* Many requests written at once are answered a few a wake-up, all of
 * them in the end, in order. */
static void test_pipelined_requests_are_all_answered(void **state)
{
    struct fixture *f = *state;
    int fd = client(f);
    char buf[4000] = "";
    for (int i = 0; i < 40; i++)
        strcat(buf, i % 2 ? "{\"version\":1,\"request\":\"user\"}\n" : "nonsense\n");
    send_all(fd, buf, strlen(buf));
    pump(f, 200);
    char got[1 << 16];
    ssize_t n = recv(fd, got, sizeof(got) - 1, MSG_DONTWAIT);
    assert_true(n > 0);
    got[n] = '\0';
    int lines = 0, errors = 0;
    for (char *p = got; (p = strchr(p, '\n')); p++)
        lines++;
    for (char *p = got; (p = strstr(p, "bad_request")); p++)
        errors++;
    assert_int_equal(lines, 40);
    assert_int_equal(errors, 20);
    assert_int_equal(f->handled, 40);
    close(fd);
}

/* A handler that must wait for the directory: NULL until f->directory_answered. */
static json_t *waits(struct control_conn *c, const char *line, size_t len, void *arg)
{
    struct fixture *f = arg;
    return f->directory_answered ? echo(c, line, len, arg) : NULL;
}

/* A request whose handler waits for the directory gets its reply once the
 * directory has answered (control_server_retry), and meanwhile holds
 * nothing up: another connection's request is answered. */
static void test_a_request_waits_for_the_directory(void **state)
{
    struct fixture *f = *state;
    f->s.handler = waits;
    int fd = client(f);
    send_all(fd, "{\"version\":1,\"request\":\"status\"}\n", 33);
    bool closed;
    char *got = take(f, fd, &closed);
    assert_string_equal(got, "");
    assert_false(closed);
    f->directory_answered = true;
    control_server_retry(&f->s);
    got = take(f, fd, &closed);
    assert_non_null(strstr(got, "\"request\":\"status\""));
    close(fd);
}

/* One the directory never answers about is told so at its deadline. */
static void test_a_request_the_directory_never_answers_gets_an_error(void **state)
{
    struct fixture *f = *state;
    f->s.handler = waits;
    int fd = client(f);
    send_all(fd, "{\"version\":1,\"request\":\"status\"}\n", 33);
    pump(f, 50);
    control_server_expire(&f->s, now_usec() + CONTROL_IDLE_USEC);
    bool closed;
    char *got = take(f, fd, &closed);
    assert_non_null(strstr(got, "the user directory (NSS) has not answered in time"));
    close(fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_a_request_is_answered_with_the_peers_uid, setup, teardown),
        cmocka_unit_test_setup_teardown(test_socket_is_for_everyone_and_replaces_a_stale_one, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_line_too_long_gets_an_error_and_is_closed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_half_written_request_is_closed_at_its_deadline, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_last_line_without_newline_is_answered_at_eof, setup, teardown),
        cmocka_unit_test_setup_teardown(test_more_connections_than_slots_close_the_oldest, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_client_that_does_not_read_does_not_block, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pipelined_requests_are_all_answered, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_request_waits_for_the_directory, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_request_the_directory_never_answers_gets_an_error,
                                        setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
