/* How one user's shared standing changes when a node's change reaches
 * the database: the merge rule of a cluster of login nodes.  Pure: no I/O,
 * no clock.  The link program (link/) runs it inside the transaction
 * that holds the user's row locked (SELECT ... FOR UPDATE), so every node
 * of the cluster applies the very same code to the very same inputs.
 *
 * The rule (loginguard.conf(5) and loginguardd(8) say it to admins):
 *
 * A node sends a change together with the row revision it was based on
 * (base_rev: the last revision of the user's row it had applied), and,
 * when its own earlier change to that user was still on its way, the
 * sequence number of that change (after_seq, kept in loginguard.changes
 * to tell the story; the rule does not use it).  A change is current when
 * the row is still what the node saw (row.rev == base_rev); else it is
 * stale: it raced a change made elsewhere, followed the node's own change
 * still on its way (which may have been folded into something stronger
 * from elsewhere), or waited in the node's queue while the database was
 * down.
 *
 *  RAISE (a violation raised the level): current, the node's penalty is
 *    taken; stale, the stronger of the row's penalty and the node's is
 *    kept (higher level, then later until, then the rest of the fields
 *    in a fixed order).  Two nodes that raise a user from the same level
 *    at the same moment therefore count as one rung, whichever commits
 *    first.  A raise never lowers anything: no penalty is lost.
 *  LOWER (limits expired, a level decayed: what time alone does): the
 *    node's penalty taken only when current; a stale one is dropped,
 *    since every node computes the same from the newer row (and sends
 *    it again based on that row).  A LOWER never touches exempt_until:
 *    an exemption ends by each node's clock at the time the row holds.
 *  FORGIVE (an admin's forgive): the node's forgiven penalty is taken,
 *    then every RAISE stored after base_rev (applied or not) is folded
 *    back in with the stronger-of rule, except the forgiving node's own raises sent before
 *    the forgive: a forgive cancels exactly what the admin could have
 *    seen, and a violation the admin's node had not yet heard of stands.
 *  EXEMPT (an admin's exempt, or the removal of one): exempt_until is
 *    set; the one stored last wins.
 *
 * The result does not depend on the order in which racing raises, lowers
 * and a forgive reach the database (tests/unit/test_cluster_merge.c tries
 * every order), but for one thing: two nodes lowering the same row stamp
 * quiet_since with their own clocks, and the first stored stands.  No
 * time of two different nodes is compared except to break a tie: a clock
 * a few seconds off moves a limit's end by as much, nothing more. */
#ifndef LOGINGUARD_CLUSTER_MERGE_H
#define LOGINGUARD_CLUSTER_MERGE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "engine.h"

#define CLUSTER_NODE_MAX 64 /* bytes of a node's name, with its NUL */

enum standing_change_kind {
    CHANGE_RAISE,
    CHANGE_LOWER,
    CHANGE_FORGIVE,
    CHANGE_EXEMPT,
};

/* What a user's penalty is: the persistent part of struct user_state but
 * the exemption.  The window being watched stays on each node. */
struct penalty {
    int level;
    uint64_t since, until, quiet_since, last_violation;
    uint32_t violations;
    enum violation_reason last_reason;
    double last_cpu;
    uint64_t last_memory, last_window;
};

/* One user's row of loginguard.standing. */
struct shared_standing {
    uid_t uid;
    uint64_t rev;                 /* from the sequence loginguard.rev */
    struct penalty penalty;
    uint64_t exempt_until;
    char node[CLUSTER_NODE_MAX];  /* whose change made this revision */
    uint64_t seq;                 /* that node's sequence number of it */
};

/* One change as a node sends it (and as loginguard.changes keeps it). */
struct standing_change {
    enum standing_change_kind kind;
    uid_t uid;
    char node[CLUSTER_NODE_MAX];
    uint64_t seq;                 /* the node's own sequence number, from 1 */
    uint64_t base_rev;            /* 0: the node knew no row of this user */
    uint64_t after_seq;           /* 0: no earlier change of the node on its way */
    struct penalty penalty;       /* RAISE, LOWER, FORGIVE: the node's result */
    uint64_t exempt_until;        /* EXEMPT: the admin's word (0: none) */
};

/* Whether c was based on what row holds now. */
bool standing_change_current(const struct shared_standing *row, const struct standing_change *c);

/* Apply c to row (a user without a row: a zeroed one with rev 0 and the
 * uid set).  later: for a FORGIVE, the RAISE changes of this user stored
 * after c->base_rev (in any order; those of c's own node with a smaller
 * seq are skipped here); ignored for the other kinds.  The caller gives
 * row its new rev, node and seq when something changed: returns false
 * when c changes nothing (a stale LOWER, say). */
bool standing_merge(struct shared_standing *row, const struct standing_change *c,
                    const struct standing_change *later, size_t later_count);

/* The stronger of two penalties, by the order above: <0, 0 or >0. */
int penalty_compare(const struct penalty *a, const struct penalty *b);

/* Between the engine's user_state and the shared form. */
void penalty_from_user(struct penalty *p, const struct user_state *us);
void penalty_to_user(struct user_state *us, const struct penalty *p);

/* The cluster's standing of uid into the engine's state, as another node
 * or an admin left it: the engine's own input for a row from the cluster,
 * as engine_forgive is for a forgive.  False when it is what the engine
 * holds already. */
bool engine_take_standing(struct engine_state *st, uid_t uid, const struct penalty *p,
                          uint64_t exempt_until);

const char *standing_change_name(enum standing_change_kind k);
/* -1 when name is no kind. */
int standing_change_kind_parse(const char *name);

#endif
