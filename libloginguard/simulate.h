/* Policy replay (loginguardctl simulate): the trace's samples through the
 * engine under two policies side by side, the one in force and a
 * candidate, counting for each user what each would have done.
 *
 * The processes are classified again under each policy's own rules (from
 * the executable, comm and command line the trace kept), the users'
 * exempt usage worked out again, and the very engine_step the daemon runs
 * decides.  Each replay begins with every user at level none (the state
 * the daemon had then is not in the trace), counts what the policy would
 * do in enforce mode whatever its mode, and leaves out the admins' words
 * (forgive, exempt). */
#ifndef LOGINGUARD_SIMULATE_H
#define LOGINGUARD_SIMULATE_H

#include <stdint.h>

#include "engine.h"
#include "notices.h"
#include "policy.h"
#include "programs.h"
#include "snapshot.h"
#include "trace_codec.h"

#define SIM_POLICIES 2      /* 0: the one in force, 1: the candidate */
#define SIM_STOPS_KEPT 100  /* per user and policy; past it they are counted only */

/* A process a policy would have stopped. */
struct sim_stop {
    uint64_t time;
    pid_t pid;
    uint64_t start_time;
    char comm[COMM_LEN];
    char *exe;             /* NULL when unknown */
    char *why;             /* the rule's name, or the level's */
    enum decision_kind kind;
};

/* A violation a policy would have seen. */
struct sim_violation {
    uint64_t time;
    int level;             /* after it */
    const char *reason;    /* "cpu", "memory", "memory_pressure" */
};

struct sim_outcome {
    uint32_t violations;
    struct sim_violation *seen; /* the first SIM_STOPS_KEPT */
    size_t seen_count;
    int highest;           /* level, 0 none */
    uint64_t throttled;    /* usec at a level that limits without stopping */
    uint64_t restricted;   /* usec at a level that stops */
    uint32_t stopped;      /* processes */
    uint32_t notices;
    struct sim_stop *stops; /* the first SIM_STOPS_KEPT */
    size_t stop_count;
    uint64_t notice_at[NOTICE_KIND_COUNT]; /* the last notice of each kind, for rate_limit */
};

struct sim_user {
    uid_t uid;
    char name[64];
    struct sim_outcome o[SIM_POLICIES];
};

struct simulation {
    const struct policy *policies[SIM_POLICIES];
    struct engine_state state[SIM_POLICIES];
    struct program_table programs[SIM_POLICIES];
    struct decisions decisions;
    struct sim_user *users;  /* by uid */
    size_t user_count, user_capacity;
    uint64_t samples;
};

void simulation_init(struct simulation *s, const struct policy *current,
                     const struct policy *candidate);
/* One sample of the trace (d: its decoder, for what each process is);
 * snap's classes and exempt usage are rewritten. */
void simulation_step(struct simulation *s, struct trace_decoder *d, struct snapshot *snap);
void simulation_free(struct simulation *s);

/* Whether a stop of a is among b's kept ones (the same process). */
bool sim_outcome_stops(const struct sim_outcome *o, pid_t pid, uint64_t start_time);

#endif
