/* Round trips of `status` on a daemon with its full population (the
 * enforce benchmark's 10,000 processes of 500 users): what an admin
 * waits for, how large the reply is, what it costs the daemon, and
 * whether its samples stayed on time meanwhile (bench_status.c). */
#ifndef LOGINGUARD_BENCH_STATUS_H
#define LOGINGUARD_BENCH_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define STATUS_CALLS_MAX 5000

enum status_way {
    SW_SOCKET,      /* the request line on the socket, from this process: the daemon's part */
    SW_TOOL_JSON,   /* loginguardctl --socket S --json status --all */
    SW_TOOL_PLAIN,  /* loginguardctl --socket S status (busy users only: none here) */
    SW_TOOL_TABLE,  /* loginguardctl --socket S status --all: the table of every user */
    SW_TOOL_CONFIG, /* loginguardctl --config C --json status --all (reads the config first) */
    SW_SESSION,     /* pam_loginguard's session request, from a process of a load user
                       about themselves: what any user can make the daemon do at will */
    SW_COUNT
};

struct status_way_result {
    int calls, failed;
    double ms[STATUS_CALLS_MAX];  /* wall time of each round trip */
    size_t bytes;                 /* of the last reply (the tool's stdout, or the line) */
    size_t users;                 /* rows in the last JSON reply */
    double daemon_cpu_ms;         /* the daemon's CPU over all the calls */
};

struct status_bench {
    bool ran;
    char why[200];
    double interval_s;
    struct status_way_result way[SW_COUNT];
    /* Then SW_TOOL_JSON again, back to back for several sample intervals:
     * the snapshots' times in its replies ("sampled"), distinct, and the
     * gaps between them, which show a sample the requests held back. */
    struct status_way_result sustained;
    double sustained_s;
    int samples;
    double gap_min_ms, gap_max_ms;
};

/* calls round trips of each way, back to back, against the running
 * daemon dpid (SW_SESSION as session_uid); then the sustained run, for
 * intervals sample intervals. */
void status_bench_run(struct status_bench *b, const char *ctl, const char *socket,
                      const char *conf, pid_t dpid, uid_t session_uid, double interval_s,
                      int calls, int intervals);
void status_bench_print(const struct status_bench *b);

#endif
