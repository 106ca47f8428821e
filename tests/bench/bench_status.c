#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_status.h"
#include "benchutil.h"

#define REPLY_MAX (8u << 20)
#define MAX_SAMPLED 1024

static const char *const way_names[SW_COUNT] = {
    [SW_SOCKET] = "request line on the socket (the daemon's part)",
    [SW_TOOL_JSON] = "loginguardctl --json status --all",
    [SW_TOOL_PLAIN] = "loginguardctl status",
    [SW_TOOL_TABLE] = "loginguardctl status --all",
    [SW_TOOL_CONFIG] = "loginguardctl --config C --json status --all",
    [SW_SESSION] = "a user's own session request (fork + setuid)",
};

struct sampled {
    char times[MAX_SAMPLED][40];
    int count;
};

/* The reply's "sampled" time, kept once; and how many users it lists. */
static size_t note_reply(const char *text, size_t len, struct sampled *s)
{
    json_t *r = json_loadb(text, len, 0, NULL);
    const char *t = json_string_value(json_object_get(r, "sampled"));
    size_t users = json_array_size(json_object_get(r, "users"));
    if (t && s->count < MAX_SAMPLED) {
        bool seen = false;
        for (int i = 0; i < s->count && !seen; i++)
            seen = strcmp(s->times[i], t) == 0;
        if (!seen)
            snprintf(s->times[s->count++], sizeof(s->times[0]), "%s", t);
    }
    json_decref(r);
    return users;
}

/* Everything from fd until EOF into buf (at most REPLY_MAX); the length,
 * or -1. */
static ssize_t read_all(int fd, char *buf, bool one_line)
{
    size_t n = 0;
    for (;;) {
        ssize_t got = read(fd, buf + n, REPLY_MAX - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return -1;
        if (got == 0)
            return (ssize_t)n;
        n += (size_t)got;
        if ((one_line && memchr(buf + n - (size_t)got, '\n', (size_t)got)) || n == REPLY_MAX)
            return (ssize_t)n;
    }
}

/* Table rows: the lines after the blank line that ends the header, less
 * the headings. */
static long count_lines(const char *buf, size_t n)
{
    const char *table = memmem(buf, n, "\n\n", 2);
    long lines = 0;
    for (const char *p = table ? table + 2 : buf + n; p < buf + n; p++)
        lines += *p == '\n';
    return lines > 0 ? lines - 1 : 0;
}

static ssize_t socket_round_trip(const char *path, const char *req, char *buf)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ssize_t n = -1;
    if (fd >= 0 && connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0 &&
        write_full(fd, req, strlen(req)) == 0)
        n = read_all(fd, buf, true);
    if (fd >= 0)
        close(fd);
    return n;
}

/* A session request about uid from a child that has become uid (a user
 * may send as many as they like); the reply comes back through a pipe. */
static ssize_t session_round_trip(const char *path, uid_t uid, char *buf)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        char req[128];
        snprintf(req, sizeof(req), "{\"version\":1,\"request\":\"session\",\"user\":%u}\n",
                 (unsigned)uid);
        ssize_t n = setgroups(0, NULL) == 0 && setresgid(uid, uid, uid) == 0 &&
                            setresuid(uid, uid, uid) == 0
                        ? socket_round_trip(path, req, buf)
                        : -1;
        _exit(n > 0 && write_full(p[1], buf, (size_t)n) == 0 ? 0 : 1);
    }
    close(p[1]);
    ssize_t n = pid > 0 ? read_all(p[0], buf, false) : -1;
    close(p[0]);
    int status = 1;
    if (pid > 0)
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? n : -1;
}

/* The tool with argv, its stdout into buf; the length, or -1 when it
 * failed. */
static ssize_t tool_round_trip(char *const argv[], char *buf)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    extern char **environ;
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(p[1]);
    ssize_t n = rc == 0 ? read_all(p[0], buf, false) : -1;
    close(p[0]);
    int status = 1;
    if (rc == 0)
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
    return rc == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? n : -1;
}

static ssize_t round_trip(enum status_way w, const char *ctl, const char *socket,
                          const char *conf, uid_t session_uid, char *buf)
{
    char *const json_argv[] = {(char *)ctl, "--socket", (char *)socket, "--json", "status",
                               "--all", NULL};
    char *const plain_argv[] = {(char *)ctl, "--socket", (char *)socket, "status", NULL};
    char *const table_argv[] = {(char *)ctl, "--socket", (char *)socket, "status", "--all", NULL};
    char *const config_argv[] = {(char *)ctl, "--config", (char *)conf, "--json", "status",
                                 "--all", NULL};
    switch (w) {
    case SW_SOCKET:
        return socket_round_trip(socket, "{\"version\":1,\"request\":\"status\",\"all\":true}\n",
                                 buf);
    case SW_SESSION:
        return session_round_trip(socket, session_uid, buf);
    case SW_TOOL_JSON:
        return tool_round_trip(json_argv, buf);
    case SW_TOOL_PLAIN:
        return tool_round_trip(plain_argv, buf);
    case SW_TOOL_TABLE:
        return tool_round_trip(table_argv, buf);
    default:
        return tool_round_trip(config_argv, buf);
    }
}

/* calls round trips of way w, or as many as fit in seconds (when > 0). */
static void run_way(struct status_way_result *r, enum status_way w, const char *ctl,
                    const char *socket, const char *conf, pid_t dpid, uid_t session_uid,
                    int calls, double seconds, char *buf, struct sampled *s)
{
    double cpu0 = cpu_of_us(dpid), start = wall_us();
    for (int k = 0; k < calls && !stopping; k++) {
        if (seconds > 0 && wall_us() - start > seconds * 1e6)
            break;
        double t0 = wall_us();
        ssize_t n = round_trip(w, ctl, socket, conf, session_uid, buf);
        double t1 = wall_us();
        if (n < 0) {
            r->failed++;
            continue;
        }
        r->ms[r->calls++] = (t1 - t0) / 1e3;
        r->bytes = (size_t)n;
        if (w != SW_TOOL_PLAIN && w != SW_TOOL_TABLE && w != SW_SESSION)
            r->users = note_reply(buf, (size_t)n, s);
        else if (w == SW_TOOL_TABLE)
            r->users = (size_t)count_lines(buf, (size_t)n);
    }
    r->daemon_cpu_ms = (cpu_of_us(dpid) - cpu0) / 1e3;
}

static double iso_ms(const char *text)
{
    struct tm tm = {0};
    int ms = 0;
    if (sscanf(text, "%d-%d-%dT%d:%d:%d.%dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
               &tm.tm_min, &tm.tm_sec, &ms) != 7)
        return -1;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    return (double)timegm(&tm) * 1e3 + ms;
}

static void sample_gaps(struct status_bench *b, const struct sampled *s)
{
    double t[MAX_SAMPLED];
    int n = 0;
    for (int i = 0; i < s->count; i++)
        if ((t[n] = iso_ms(s->times[i])) >= 0)
            n++;
    qsort(t, (size_t)n, sizeof(t[0]), cmp_double);
    b->samples = n;
    b->gap_min_ms = b->gap_max_ms = 0;
    for (int i = 1; i < n; i++) {
        double g = t[i] - t[i - 1];
        if (i == 1 || g < b->gap_min_ms)
            b->gap_min_ms = g;
        if (g > b->gap_max_ms)
            b->gap_max_ms = g;
    }
}

void status_bench_run(struct status_bench *b, const char *ctl, const char *socket,
                      const char *conf, pid_t dpid, uid_t session_uid, double interval_s,
                      int calls, int intervals)
{
    memset(b, 0, sizeof(*b));
    b->interval_s = interval_s;
    if (calls > STATUS_CALLS_MAX)
        calls = STATUS_CALLS_MAX;
    if (access(ctl, X_OK) < 0) {
        snprintf(b->why, sizeof(b->why), "no %s (build tools/)", ctl);
        return;
    }
    char *buf = malloc(REPLY_MAX);
    struct sampled *s = calloc(1, sizeof(*s));
    if (!buf || !s)
        abort();
    printf("  status round trips: %d of each way, then as many as fit in %d sample intervals...\n",
           calls, intervals);
    struct sampled *unused = calloc(1, sizeof(*unused));
    if (!unused)
        abort();
    for (int w = 0; w < SW_COUNT && !stopping; w++)
        run_way(&b->way[w], (enum status_way)w, ctl, socket, conf, dpid, session_uid, calls, 0,
                buf, unused);
    free(unused);
    double t0 = wall_us();
    run_way(&b->sustained, SW_TOOL_JSON, ctl, socket, conf, dpid, session_uid, STATUS_CALLS_MAX,
            intervals * interval_s, buf, s);
    b->sustained_s = (wall_us() - t0) / 1e6;
    sample_gaps(b, s);
    b->ran = !stopping;
    free(buf);
    free(s);
}

static double percentile(const double *sorted, int n, double p)
{
    int i = (int)(p * n + 0.999999) - 1; /* the nearest-rank percentile */
    return sorted[i < 0 ? 0 : i >= n ? n - 1 : i];
}

static void print_way(const char *name, const struct status_way_result *r, bool users)
{
    if (r->calls == 0) {
        printf("    %-46s all %d failed\n", name, r->failed);
        return;
    }
    static double sorted[STATUS_CALLS_MAX];
    memcpy(sorted, r->ms, (size_t)r->calls * sizeof(double));
    qsort(sorted, (size_t)r->calls, sizeof(double), cmp_double);
    char rows[16] = "-";
    if (users)
        snprintf(rows, sizeof(rows), "%zu", r->users);
    printf("    %-46s %5d %7.2f %7.2f %7.2f %9zu %6s %7.2f%s\n", name, r->calls,
           percentile(sorted, r->calls, 0.5), percentile(sorted, r->calls, 0.95),
           sorted[r->calls - 1], r->bytes, rows, r->daemon_cpu_ms / r->calls,
           r->failed ? " (some failed)" : "");
}

void status_bench_print(const struct status_bench *b)
{
    if (!b->ran) {
        printf("  status round trips: not run%s%s\n", b->why[0] ? ": " : "", b->why);
        return;
    }
    printf("  status round trips, back to back, on this population:\n");
    printf("    %-46s %5s %7s %7s %7s %9s %6s %s\n", "way (wall ms)", "calls", "median", "p95",
           "max", "reply B", "users", "daemon CPU ms/call");
    for (int w = 0; w < SW_COUNT; w++)
        print_way(way_names[w], &b->way[w], w != SW_TOOL_PLAIN && w != SW_SESSION);
    char name[80];
    snprintf(name, sizeof(name), "the same --json --all for %.0f s", b->sustained_s);
    print_way(name, &b->sustained, true);
    printf("    samples during those %.0f s (distinct \"sampled\" times in the replies): %d, gaps"
           " %.0f to %.0f ms at a %.0f ms interval%s\n",
           b->sustained_s, b->samples, b->gap_min_ms, b->gap_max_ms, b->interval_s * 1e3,
           b->samples < 3                                   ? " (too few to judge)"
           : b->gap_max_ms > b->interval_s * 1e3 + 100       ? ": a sample was LATE"
                                                             : ": on time");
}
