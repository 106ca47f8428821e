/* lg-notify: the notice channels called from the command line, for the
 * integration tests (real ttys, a real session bus, a real command).
 *
 *   lg-notify tty [--dev DIR] [--utmp FILE] UID TEXT [PID...]
 *       prints "written=N skipped=M"
 *   lg-notify desktop [--urgent] [--timeout-ms N] [--probe-pid] UID RUNTIME_DIR SUMMARY BODY
 *       prints "sent", "skipped: ..." or "failed: ..."; --probe-pid then
 *       forks once more and prints "probe=PID" (run as pid 1 of a new pid
 *       namespace, 2 means the call forked nothing, 3 that it forked once)
 *   lg-notify email [--timeout-ms N] [--chart] COMMAND FROM TO SUBJECT BODY
 *       --chart: with a chart of an hour whose CPU climbs from 0 to 2.95
 *       cores and memory from 0 to 7.4 GiB ([notify] email_chart)
 *       BODY "-" reads the body from stdin (one longer than argv allows)
 *   lg-notify address USER [DOMAIN]
 *   lg-notify utmp-add FILE LINE USER PID     (a login entry in a utmp file)
 * Exit status 0 when the call was made, 2 for bad usage. */
#include "config.h"

#include <stdbool.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utmpx.h>

#include "notify/notify_desktop.h"
#include "notify/notify_email.h"
#include "notify/notify_tty.h"
#include "util.h"

struct options {
    const char *dev, *utmp;
    bool urgent, probe_pid, chart;
    uint64_t timeout_usec;
};

static int usage(void)
{
    fputs("usage: lg-notify tty|desktop|email|address|utmp-add ... (see the source)\n", stderr);
    return 2;
}

/* Options come first; returns the index of the first positional argument. */
static int parse_options(int argc, char **argv, struct options *o)
{
    int i = 2;
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
        if (strcmp(argv[i], "--urgent") == 0)
            o->urgent = true;
        else if (strcmp(argv[i], "--probe-pid") == 0)
            o->probe_pid = true;
        else if (strcmp(argv[i], "--chart") == 0)
            o->chart = true;
        else if (strcmp(argv[i], "--dev") == 0 && i + 1 < argc)
            o->dev = argv[++i];
        else if (strcmp(argv[i], "--utmp") == 0 && i + 1 < argc)
            o->utmp = argv[++i];
        else if (strcmp(argv[i], "--timeout-ms") == 0 && i + 1 < argc)
            o->timeout_usec = strtoull(argv[++i], NULL, 10) * 1000;
        else
            return -1;
    }
    return i;
}

static int run_tty(int argc, char **argv, const struct options *o)
{
    if (argc < 2)
        return usage();
    size_t count = (size_t)(argc - 2);
    pid_t *pids = calloc(count ? count : 1, sizeof(*pids));
    for (size_t i = 0; i < count; i++)
        pids[i] = (pid_t)atoi(argv[2 + i]);
    int skipped = 0;
    struct environment env;
    environment_host(&env);
    if (o->dev)
        env.dev = o->dev;
    env.utmp = o->utmp;
    uid_t uid = (uid_t)strtoul(argv[0], NULL, 10);
    const struct passwd *pw = getpwuid(uid); /* the daemon's directory gives it the name */
    int written = notify_tty(&env, uid, pw ? pw->pw_name : NULL, pids, count, argv[1], &skipped);
    printf("written=%d skipped=%d\n", written, skipped);
    free(pids);
    return 0;
}

static void probe(void)
{
    pid_t pid = fork();
    if (pid == 0)
        _exit(0);
    waitpid(pid, NULL, 0);
    printf("probe=%d\n", (int)pid);
}

static int print_outcome(enum notify_outcome outcome, const char *err)
{
    if (outcome == NOTIFY_SENT)
        printf("sent\n");
    else
        printf("%s: %s\n", outcome == NOTIFY_SKIPPED ? "skipped" : "failed", err);
    return 0;
}

static int run_desktop(int argc, char **argv, const struct options *o)
{
    if (argc != 4)
        return usage();
    char err[512] = "";
    uid_t uid = (uid_t)strtoul(argv[0], NULL, 10);
    const struct passwd *pw = getpwuid(uid); /* the daemon's directory gives it the name */
    enum notify_outcome outcome =
        notify_desktop(uid, pw ? pw->pw_name : NULL, argv[1], argv[2], argv[3], o->urgent,
                       o->timeout_usec, err, sizeof(err));
    print_outcome(outcome, err);
    if (o->probe_pid)
        probe();
    return 0;
}

/* notify_email, with a chart: started, waited for. */
static enum notify_outcome email_with_chart(char **argv, const char *body, uint64_t timeout,
                                            char *err, size_t err_len)
{
    struct report_point points[60];
    uint64_t now = now_realtime_usec(), minute = 60ULL * 1000000;
    for (int i = 0; i < 60; i++)
        points[i] = (struct report_point){.time = now - (uint64_t)(59 - i) * minute,
                                          .cpu_cores = i / 20.0,
                                          .memory_bytes = (uint64_t)i << 27};
    struct email_chart chart = {.title = "lgtestalice, the last hour", .points = points,
                                .count = 60, .from = now - 60 * minute, .until = now,
                                .cpu_threshold = 2};
    struct email_send s;
    enum notify_outcome o = notify_email_start_chart(&s, argv[0], argv[1], argv[2], argv[3],
                                                     body, &chart, timeout, err, err_len);
    if (o != NOTIFY_PENDING)
        return o;
    int status = 0;
    enum child_result result = child_wait(&s.child, &status);
    return notify_email_finish(&s, result, status, err, err_len);
}

static int run_email(int argc, char **argv, const struct options *o)
{
    if (argc != 5)
        return usage();
    char err[512] = "";
    char *body = NULL;
    size_t body_len = 0;
    if (strcmp(argv[4], "-") == 0) {
        FILE *in = open_memstream(&body, &body_len);
        int c;
        while (in && (c = getchar()) != EOF)
            fputc(c, in);
        if (!in || fclose(in) != 0)
            return 1;
    }
    if (o->chart)
        print_outcome(email_with_chart(argv, body ? body : argv[4], o->timeout_usec, err,
                                       sizeof(err)),
                      err);
    else
        print_outcome(notify_email(argv[0], argv[1], argv[2], argv[3], body ? body : argv[4],
                                   o->timeout_usec, err, sizeof(err)),
                      err);
    free(body);
    return 0;
}

static int run_address(int argc, char **argv)
{
    if (argc < 1 || argc > 2)
        return usage();
    char *address = email_address(argv[0], argc == 2 ? argv[1] : NULL);
    printf("%s\n", address);
    free(address);
    return 0;
}

static int run_utmp_add(int argc, char **argv)
{
    if (argc != 4)
        return usage();
    struct utmpx u = {.ut_type = USER_PROCESS, .ut_pid = (pid_t)atoi(argv[3])};
    strncpy(u.ut_line, argv[1], sizeof(u.ut_line));
    strncpy(u.ut_user, argv[2], sizeof(u.ut_user));
    strncpy(u.ut_id, argv[1] + (strlen(argv[1]) > 4 ? strlen(argv[1]) - 4 : 0), sizeof(u.ut_id));
    struct timeval tv;
    gettimeofday(&tv, NULL);
    u.ut_tv.tv_sec = (int32_t)tv.tv_sec;
    if (utmpxname(argv[0]) != 0)
        return 1;
    setutxent();
    int ok = pututxline(&u) != NULL;
    endutxent();
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    struct options o = {.timeout_usec = 5000000};
    if (argc < 2)
        return usage();
    int first = parse_options(argc, argv, &o);
    if (first < 0)
        return usage();
    int n = argc - first;
    char **args = argv + first;
    if (strcmp(argv[1], "tty") == 0)
        return run_tty(n, args, &o);
    if (strcmp(argv[1], "desktop") == 0)
        return run_desktop(n, args, &o);
    if (strcmp(argv[1], "email") == 0)
        return run_email(n, args, &o);
    if (strcmp(argv[1], "address") == 0)
        return run_address(n, args);
    if (strcmp(argv[1], "utmp-add") == 0)
        return run_utmp_add(n, args);
    return usage();
}
