/* Limits put on one user's cgroup: a level's, or the standing share.
 * 0 means "no limit" for every field. */
#ifndef LOGINGUARD_LIMITS_H
#define LOGINGUARD_LIMITS_H

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

#endif
