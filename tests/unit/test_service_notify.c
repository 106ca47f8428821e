#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "core/service_notify.h"
#include "testutil.h"

/* A socket bound where a service manager would listen; the address is
 * also what NOTIFY_SOCKET says. */
struct listener {
    int fd;
    char name[108];
};

static void listen_at(struct listener *l, const char *name)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    size_t n = strlen(name);
    assert_true(n < sizeof(sa.sun_path));
    memcpy(sa.sun_path, name, n);
    socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
    if (name[0] == '@')
        sa.sun_path[0] = '\0';
    else
        len++;
    l->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    assert_true(l->fd >= 0);
    assert_int_equal(bind(l->fd, (struct sockaddr *)&sa, len), 0);
    snprintf(l->name, sizeof(l->name), "%s", name);
    assert_int_equal(setenv("NOTIFY_SOCKET", name, 1), 0);
}

/* The next datagram, waited for at most a few seconds; its length. */
static ssize_t receive(struct listener *l, char *buf, size_t size)
{
    struct pollfd p = {.fd = l->fd, .events = POLLIN};
    assert_int_equal(poll(&p, 1, 5000), 1);
    return recv(l->fd, buf, size, MSG_DONTWAIT);
}

static int open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    assert_non_null(d);
    int n = 0;
    while (readdir(d))
        n++;
    closedir(d);
    return n;
}

/* What the manager reads is exactly the state given: no terminating NUL,
 * no newline added, nothing before. */
static void expect_sent(struct listener *l, const char *state)
{
    char buf[256];
    assert_int_equal(service_notify(state), 1);
    ssize_t n = receive(l, buf, sizeof(buf));
    assert_int_equal(n, (ssize_t)strlen(state));
    assert_memory_equal(buf, state, strlen(state));
}

static void test_path_socket(void **state)
{
    (void)state;
    char path[128];
    snprintf(path, sizeof(path), "%s/notify", make_test_dir());
    struct listener l;
    listen_at(&l, path);
    int fds = open_fds();
    expect_sent(&l, "READY=1");
    expect_sent(&l, "RELOADING=1");
    expect_sent(&l, "READY=1\nSTATUS=watching 3 users");
    /* The socket is closed again after each notice. */
    assert_int_equal(open_fds(), fds);
    close(l.fd);
    remove_test_dir();
    unsetenv("NOTIFY_SOCKET");
}

static void test_abstract_socket(void **state)
{
    (void)state;
    char name[64];
    snprintf(name, sizeof(name), "@loginguard-test-notify-%d", (int)getpid());
    struct listener l;
    listen_at(&l, name);
    expect_sent(&l, "READY=1");
    expect_sent(&l, "STOPPING=1");
    close(l.fd);
    unsetenv("NOTIFY_SOCKET");
}

/* Not started by a manager that listens: nothing to do, no error. */
static void test_unset(void **state)
{
    (void)state;
    unsetenv("NOTIFY_SOCKET");
    assert_int_equal(service_notify("READY=1"), 0);
    assert_int_equal(setenv("NOTIFY_SOCKET", "", 1), 0);
    assert_int_equal(service_notify("READY=1"), 0);
    unsetenv("NOTIFY_SOCKET");
}

static void test_bad_addresses(void **state)
{
    (void)state;
    /* Relative paths and other address families are refused. */
    assert_int_equal(setenv("NOTIFY_SOCKET", "run/notify", 1), 0);
    assert_int_equal(service_notify("READY=1"), -EAFNOSUPPORT);
    assert_int_equal(setenv("NOTIFY_SOCKET", "vsock:2:1234", 1), 0);
    assert_int_equal(service_notify("READY=1"), -EAFNOSUPPORT);
    /* Longer than a sockaddr_un holds: refused, not cut short (a cut
     * name could be someone else's socket). */
    char longname[200];
    memset(longname, 'x', sizeof(longname) - 1);
    longname[0] = '/';
    longname[sizeof(longname) - 1] = '\0';
    assert_int_equal(setenv("NOTIFY_SOCKET", longname, 1), 0);
    assert_int_equal(service_notify("READY=1"), -ENAMETOOLONG);
    longname[0] = '@';
    assert_int_equal(setenv("NOTIFY_SOCKET", longname, 1), 0);
    assert_int_equal(service_notify("READY=1"), -ENAMETOOLONG);
    /* Nobody listening there: the error, not a hang or a signal. */
    char path[128];
    snprintf(path, sizeof(path), "%s/absent", make_test_dir());
    assert_int_equal(setenv("NOTIFY_SOCKET", path, 1), 0);
    assert_int_equal(service_notify("READY=1"), -ENOENT);
    remove_test_dir();
    unsetenv("NOTIFY_SOCKET");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_path_socket),
        cmocka_unit_test(test_abstract_socket),
        cmocka_unit_test(test_unset),
        cmocka_unit_test(test_bad_addresses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
