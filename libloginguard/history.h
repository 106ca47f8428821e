/* The last hour of each user's usage, a point a minute, for the chart of
 * loginguardctl user and me.  Compact on purpose: only users who have
 * used something have a ring (HISTORY_ACTIVE_*), a ring is a few hundred
 * bytes, and it is freed after an hour without use, so 500 users logged
 * in and idle cost nothing.  Pure: fed with snapshots, no clock. */
#ifndef LOGINGUARD_HISTORY_H
#define LOGINGUARD_HISTORY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "snapshot.h"

#define HISTORY_POINTS 60
#define HISTORY_STEP_USEC (60ULL * 1000000)
/* A user gets a ring from the first sample at or above either. */
#define HISTORY_ACTIVE_CPU 0.05            /* cores */
#define HISTORY_ACTIVE_MEMORY (256ULL << 20) /* bytes */
/* Points in hundredths of a core (at most 655.35 cores) and MiB. */
#define HISTORY_CPU_SCALE 100

struct user_history {
    uid_t uid;
    uint32_t minute;          /* the minute (time / HISTORY_STEP_USEC) of point `newest` */
    uint32_t active_minute;   /* the last minute at or above HISTORY_ACTIVE_* */
    uint32_t covered_usec;    /* of the current minute, by samples */
    uint8_t newest;
    double cpu_sum;           /* core-usec of the current minute */
    uint16_t cpu[HISTORY_POINTS];     /* average cores over the minute, in hundredths */
    uint32_t memory[HISTORY_POINTS];  /* the most memory seen in the minute, MiB */
};

struct history {
    struct user_history **users;   /* sorted by uid */
    size_t count, capacity;
    uint32_t swept_minute;         /* rings idle an hour are freed once a minute */
};

/* One sample: every user of the snapshot with a ring, or worth one. */
void history_update(struct history *h, const struct snapshot *snap);

/* uid's ring, or NULL. */
const struct user_history *history_find(const struct history *h, uid_t uid);

/* The ring's points, oldest first, as of time now (realtime usec):
 * minutes the ring did not see (the daemon stopped, the user had no
 * process) are 0.  cpu in cores, memory in bytes. */
void history_points(const struct user_history *u, uint64_t now, double cpu[HISTORY_POINTS],
                    uint64_t memory[HISTORY_POINTS]);

/* Bytes the rings take, for the benchmark and the tests. */
size_t history_bytes(const struct history *h);

void history_free(struct history *h);

#endif
