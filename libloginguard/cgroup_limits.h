/* Limits put on one user's cgroup: a level's, or the standing share.
 * 0 means "no limit" for every field. */
#ifndef LOGINGUARD_CGROUP_LIMITS_H
#define LOGINGUARD_CGROUP_LIMITS_H

#include <stdbool.h>
#include <stdint.h>

struct limits {
    double cpu;        /* cores */
    uint64_t memory;   /* bytes */
    uint64_t tasks;
};

static inline bool limits_equal(const struct limits *a, const struct limits *b)
{
    return a->cpu == b->cpu && a->memory == b->memory && a->tasks == b->tasks;
}

/* The soft memory limit that goes with a hard one (systemd's MemoryHigh,
 * v2's memory.high): 90 %, so the kernel throttles and reclaims before
 * the OOM killer acts at the hard limit.  0 (no limit) stays 0. */
static inline uint64_t limits_memory_high(uint64_t max)
{
    /* max * 9 / 10 without overflowing for limits near UINT64_MAX. */
    uint64_t high = max / 10 * 9 + max % 10 * 9 / 10;
    /* Never 0 for a real limit: that would be "none" (and systemd
     * refuses 0 for MemoryHigh). */
    return max == 0 ? 0 : high > 0 ? high : 1;
}

#endif
