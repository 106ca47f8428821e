/* This node's part of a cluster's shared standing (issue 13): what the
 * daemon sends to the database and what it takes from it.
 *
 * Every change of a user's standing the engine or an admin makes becomes
 * a record in the durable queue (cluster_queue.h), on disk before the
 * change is acted on further: a violation a "raise", a level's limits
 * ending or a level decaying a "lower", an admin's forgive a "forgive",
 * an exemption given or removed an "exempt".  (An exemption that runs out
 * is none: each node ends it by its own clock.)  Every event the daemon
 * logs is a record too.  Each change carries base_rev, the last revision
 * of the user's row this node applied, and after_seq, this node's
 * earlier change of that user still unstored (cluster_merge.h says how
 * the database merges them).
 *
 * A row the database sends ("standing") replaces the user's penalty and
 * exemption here, unless it is not newer than the last one applied, or a
 * change of this node for that user is still on its way: then the row is
 * held back (the latest a user) and taken once that change is stored,
 * unless a newer row came meanwhile.  (A change the database dropped as
 * stale makes no row of its own: the row it was dropped for must not be
 * lost.)  The window being watched stays this node's own.
 *
 * The revisions applied are kept in DIR/cluster-revs.json,
 * {"revs": [[uid, rev], ...]}, written (like state.json, atomically)
 * after state.json whenever they change: a change made after a restart
 * is based on what this node had applied, and a forgive cancels no more
 * than the admin could have seen.  (Written after state.json, a crash
 * between the two leaves revisions older than the state: the node's next
 * changes count as stale, which loses no penalty.)
 *
 * The link process and its socket are daemon/cluster_daemon.c's. */
#ifndef LOGINGUARD_CLUSTER_H
#define LOGINGUARD_CLUSTER_H

#define CLUSTER_REVS_FILE "cluster-revs.json"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cluster/cluster_link.h"
#include "cluster/cluster_queue.h"
#include "cluster_merge.h"
#include "engine.h"
#include "record/save_status.h"

struct cluster_rev {
    uid_t uid;
    uint64_t rev;     /* the last revision of the user's row applied here */
};

struct cluster {
    bool enabled;                /* [cluster] database is set */
    char node[CLUSTER_NODE_MAX];
    struct cluster_queue queue;
    struct cluster_rev *revs;    /* sorted by uid */
    size_t rev_count, rev_capacity;
    bool revs_dirty;             /* changed since cluster-revs.json was written */
    struct shared_standing *held; /* rows held back while a change of ours was unstored */
    size_t held_count, held_capacity;
    struct save_status revs_status;
    struct save_status queue_status; /* writes of the queue, said once when failing */

    /* The link (cluster_daemon.c). */
    char *database;              /* the connection string it was started with */
    char *passfile;              /* the password file it names, or NULL */
    struct cluster_link_settings link; /* pointing at those and at node */
    pid_t pid;                   /* 0: none running */
    int fd;                      /* -1: none */
    bool up;                     /* the last word was "up" */
    bool ever_up;
    bool down_said;              /* cluster_down said for this outage */
    bool exit_said;              /* cluster_link_exited said since the last "up" */
    uint64_t sent;               /* the last seq sent on this connection */
    uint64_t restart_at;         /* boottime usec to start the link again; 0: none */
    uint64_t rows_applied;       /* ever, for the status */
};

/* Open the queue in state_dir for node (limit: cluster_queue_open's) and
 * load the revisions applied.  The cluster is enabled even when the queue
 * cannot be opened (records are then kept in memory) or the revisions
 * not read (none are known then): 0, or -1 with err. */
int cluster_open(struct cluster *c, const char *node, const char *state_dir, uint64_t limit,
                 size_t *skipped, char *err, size_t err_len);
void cluster_close(struct cluster *c);

/* The last revision of uid's row applied here, 0 if none. */
uint64_t cluster_rev(const struct cluster *c, uid_t uid);
void cluster_set_rev(struct cluster *c, uid_t uid, uint64_t rev);
/* Write cluster-revs.json; 0, or -1 with err naming the file. */
int cluster_save_revs(struct cluster *c, char *err, size_t err_len);

/* Queue a change of uid's standing as engine now holds it (at: realtime
 * usec it was made; by: the admin's name for a forgive or an exemption,
 * else NULL).  Returns its seq.  Not synced: cluster_sync. */
uint64_t cluster_add_change(struct cluster *c, enum standing_change_kind kind,
                            const struct engine_state *engine, uid_t uid, const char *by,
                            uint64_t at);
/* The changes one engine step made: one record a user whose standing
 * changed (a raise when a violation was among its decisions, else a
 * lower); forbidden and compute processes and an exemption's end change
 * no shared standing. */
void cluster_add_decisions(struct cluster *c, const struct engine_state *engine,
                           const struct decisions *d, uint64_t at);
/* An event as logged, with this node's name added.  0 when refused (the
 * queue is past its limit: *first_refusal says when that is news). */
uint64_t cluster_add_event(struct cluster *c, const json_t *event, bool *first_refusal);

enum standing_outcome {
    STANDING_OLD,       /* not newer than the row applied last: ignored */
    STANDING_WAITING,   /* a change of ours for the user is unstored: held back */
    STANDING_SAME,      /* taken; the user's standing was already that */
    STANDING_APPLIED,   /* taken; the user's standing changed */
};

/* A row from the database into engine, by the rules above. */
enum standing_outcome cluster_apply_standing(struct cluster *c, struct engine_state *engine,
                                             const struct shared_standing *row);
/* A row held back whose user has no change of ours unstored any more
 * (after a "stored"), into *row, to be applied now; false when none. */
bool cluster_take_held(struct cluster *c, struct shared_standing *row);

#endif
