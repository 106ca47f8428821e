/* The policy: everything loginguard.conf, its drop-ins and the rules say.
 * Built by configfile.c, read by the engine and the edges, never changed
 * while in use: a reload builds a new one and swaps it in. */
#ifndef LOGINGUARD_POLICY_H
#define LOGINGUARD_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "notices.h"
#include "rules.h"

#define MAX_LEVELS 8
#define MAX_NAMES 64
#define TRACE_MIN_SIZE (1ULL << 20) /* [trace] max_size at least */

enum mode { MODE_OBSERVE, MODE_ENFORCE };
enum backend { BACKEND_AUTO, BACKEND_SYSTEMD, BACKEND_CGROUPFS };
/* Whether notices ask the cluster's Slurm (auto: when scontrol is found). */
enum slurm_use { SLURM_AUTO, SLURM_YES, SLURM_NO };

/* One rung of the ladder.  cpu == 0 and memory == 0 mean "no limit". */
struct level {
    char name[32];
    double cpu;           /* cores */
    uint64_t memory;      /* bytes */
    bool stop;            /* stop the offending processes */
    uint64_t duration;    /* usec the level's limits stay applied */
};

struct name_list {
    char *names[MAX_NAMES];
    size_t count;
};

struct policy {
    /* [daemon] */
    enum mode mode;
    uint64_t sample_interval;   /* usec */
    uint64_t scan_interval;     /* usec */
    bool proc_connector;        /* learn of new processes from the kernel's events */
    uid_t min_uid;
    char *admin_group;
    char *event_log;
    char *state_dir;
    char *control_socket;
    char *metrics_file;         /* Prometheus text after each sample; NULL = none */
    struct name_list rules_dirs; /* site first, then shipped */
    enum backend backend;
    char *cgroup_parent;
    uint64_t stop_grace;        /* usec between SIGTERM and SIGKILL */
    uint64_t events_per_user;   /* a user's events written per events_interval; 0 = all */
    uint64_t events_interval;   /* usec */

    /* [share]: every user's standing ceiling */
    double share_cpu;
    uint64_t share_memory;
    uint64_t share_tasks;

    /* [violation]: sustained usage above these is a violation */
    double violation_cpu;
    uint64_t violation_memory;
    uint64_t window;            /* usec */
    uint64_t decay;             /* usec of quiet that lowers the level by one */
    uint64_t memory_pressure;   /* percent (PSI some avg10) that makes memory act at once; 0 = off */

    /* [classes]: defaults for rules of class compute */
    double compute_cpu;
    uint64_t compute_grace;     /* usec */
    /* What a user's exempt-class programs may use without it counting
     * against them: beyond this their usage counts like any other. */
    double exempt_cpu;          /* cores */
    uint64_t exempt_memory;     /* bytes */

    /* [exempt] */
    struct name_list exempt_users;
    struct name_list exempt_groups;

    /* [level N], N = 1..level_count */
    struct level levels[MAX_LEVELS];
    size_t level_count;

    /* [notify] */
    struct name_list channels;
    char *batch_partition;
    char *interactive_partition;
    char *docs_url;
    char *sendmail;             /* command and options, run without a shell */
    char *email_domain;         /* To: user@email_domain; empty = the bare user name */
    char *email_from;
    uint64_t rate_limit;        /* usec: one notice of a kind per user per this */
    enum slurm_use slurm;       /* partitions from Slurm, lines checked by it */
    uint64_t slurm_refresh;     /* usec between two readings of the partitions */
    bool notify_in_observe;     /* in observe mode, send notices marked as such */
    bool email_chart;           /* mails carry a chart of the user's last hour */
    struct name_list notices_dirs; /* site first, then shipped */
    char *login_banner;         /* shown by pam_loginguard at every login; NULL = none */
    struct notice_templates notices;

    /* [trace]: what the engine saw, kept for loginguardctl simulate */
    bool trace_enabled;
    uint64_t trace_max_size;    /* bytes of every segment together */
    uint64_t trace_max_age;     /* usec: older segments are deleted */

    /* [cluster]: one standing across the login nodes (cluster_link_packets.h) */
    char *cluster_database;     /* libpq connection string; NULL = one node alone */
    char *cluster_node;         /* this node's name; NULL = the host name */
    char *cluster_link_user;    /* the link program's user; NULL = "loginguard" */

    struct rule_set rules;
};

void policy_init_defaults(struct policy *p);
void policy_free(struct policy *p);
const char *mode_name(enum mode m);
const char *backend_name(enum backend b);
const char *slurm_use_name(enum slurm_use s);
bool name_list_contains(const struct name_list *list, const char *name);

#endif
