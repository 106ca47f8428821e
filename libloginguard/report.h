/* loginguardctl report: the event log over a range of time, counted for
 * the admins who read it every week: users by violations and by the time
 * their levels' limits held them, the programs stopped most, rule hits,
 * actions and notices a day, and the users who came back after their
 * limits ended.  Pure: events in, in the order of the log, counts out;
 * the formats (report_text.c, report_csv.c, report_json.c, report_html.c)
 * only show them.  loginguardctl(1) defines every count. */
#ifndef LOGINGUARD_REPORT_H
#define LOGINGUARD_REPORT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Days kept for the table and chart a day; a longer range keeps its
 * last ones. */
#define REPORT_DAYS_MAX 366

enum report_action { REPORT_WARN, REPORT_LIMIT, REPORT_STOP, REPORT_RELEASE, REPORT_LOWER,
                     REPORT_ACTIONS };
/* Observe mode's decisions are only what would have been done: warn,
 * limit and stop, counted apart from those carried out. */
#define REPORT_WOULD_ACTIONS (REPORT_STOP + 1)
enum report_outcome { REPORT_SENT, REPORT_SKIPPED, REPORT_FAILED, REPORT_RATE_LIMITED,
                      REPORT_OUTCOMES };
extern const char *const report_action_names[REPORT_ACTIONS];
extern const char *const report_outcome_names[REPORT_OUTCOMES];

/* A span of time a level's limits held a user, clipped to the range. */
struct report_span {
    uint64_t from, until;   /* realtime usec */
    int level;
};

/* A user's usage at a moment: from the event log, a violation's usage;
 * another source (a usage trace) may add its own points. */
struct report_point {
    uint64_t time;          /* realtime usec */
    double cpu_cores;
    uint64_t memory_bytes;
};

struct report_user {
    uid_t uid;
    char *name;             /* the latest the log gave; NULL: none */
    uint64_t violations;
    uint64_t limited_usec;  /* the spans' total: limits carried out */
    uint64_t would_limit_usec; /* observe mode: how long limits would have held */
    int top_level;          /* the highest level a violation raised them to */
    uint64_t processes;     /* forbidden_process and compute_process events */
    uint64_t notices;       /* notices sent (any channel) */
    uint64_t returns;       /* violations after a release (see report.c) */
    uint64_t last_return;   /* realtime usec, 0: none */
    struct report_span *spans;
    size_t span_count, span_cap;
    struct report_point *points;  /* oldest first */
    size_t point_count, point_cap;
    /* What the events so far leave open: */
    uint64_t limit_from, limit_until; /* a level's limits in force; 0: none */
    int limit_level;
    bool limit_applied;     /* carried out (enforce), not only observed */
    /* Limits that a daemon stop (or an exemption) lifted before their
     * end, and that its next limits_set at that level puts back. */
    uint64_t paused_until;  /* 0: none */
    int paused_level;
    bool released;          /* a level ended (expired, forgiven) since the last violation */
};

struct report_program {
    char *comm;
    char *exe;              /* the latest seen; NULL: never known */
    char *rule;             /* the latest rule that matched; NULL: none */
    uint64_t stopped;       /* forbidden_process and compute_process events carried out */
    uint64_t would_stop;    /* the same in observe mode */
    uint64_t busiest;       /* violations it was the user's busiest process in */
    uid_t *uids;            /* its users, each once */
    size_t uid_count;
};

struct report_rule {
    char *name;
    const char *class_name; /* "forbidden" or "compute" */
    uint64_t hits;
    uid_t *uids;
    size_t uid_count;
};

struct report_day {
    char date[11];          /* local "2026-11-25" */
    uint64_t actions[REPORT_ACTIONS];     /* carried out */
    uint64_t would[REPORT_WOULD_ACTIONS]; /* observe mode: would have been */
    uint64_t notices[REPORT_OUTCOMES];
};

struct report {
    uint64_t since, until;  /* the range, realtime usec: since <= time < until */
    uint64_t events;        /* events in the range */
    uint64_t first, last;   /* the first and last event's time in it; 0: none */
    struct report_user *users;       /* by uid while adding; report_finish sorts */
    size_t user_count, user_cap;
    struct report_program *programs;
    size_t program_count, program_cap;
    struct report_rule *rules;
    size_t rule_count, rule_cap;
    struct report_day *days;         /* oldest first after report_finish */
    size_t day_count, day_cap;
};

void report_init(struct report *r, uint64_t since, uint64_t until);
/* One event (as event_parse_line gives it) at time.  Events before the
 * range are read too, for what they leave open (limits in force, a level
 * that ended before a violation in the range); events at or after its
 * end are not counted. */
void report_add(struct report *r, const json_t *event, uint64_t time);
/* Another source's usage point for uid (kept only for a user the events
 * name, in the range, in time order). */
void report_add_point(struct report *r, uid_t uid, const struct report_point *p);
/* Close the limits still in force at the range's end, add the days
 * without events, and sort: users by violations, then time limited;
 * programs by stopped, then busiest; rules by hits. */
void report_finish(struct report *r);
void report_free(struct report *r);

/* The users who came back (returns > 0), sorted by returns; to be freed
 * (the users themselves are r's). */
size_t report_returning(const struct report *r, const struct report_user ***out);

/* "alice", or "uid 1234" when the log gave no name: to be freed. */
char *report_user_label(const struct report_user *u);

#endif
