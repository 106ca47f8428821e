/* Who a uid is: its name, whether it is in an [exempt] group, whether it
 * is an admin (root or in admin_group).  Asked of NSS by a helper
 * process, never on the daemon's loop.
 *
 * On a node with LDAP or SSSD a lookup can take milliseconds, and
 * seconds or a whole timeout when the directory is slow or down; a user
 * can make the daemon ask (a control connection, a process under a new
 * uid: a rootless container's subordinate uids).  Asked in the loop,
 * that delayed samples for everyone.  So the daemon keeps what it was
 * told, per uid, and asks the helper for what it does not know: the
 * answer comes back over a socket, the loop reads it when it comes.
 * Until then a uid has no name and no [exempt] group (it is judged as
 * one with no passwd entry, as when the directory is down); a control
 * request that needs to know who its peer is waits for the answer (its
 * connection's deadline still holds).
 *
 * A uid without a name is asked again at the next sweep (the directory
 * may have been down), one with a name after DIRECTORY_REFRESH_USEC: at
 * most DIRECTORY_REFRESH_MAX at each sweep, in turn by uid (a node may
 * run hundreds of nameless uids: containers, batch accounts without
 * entries); the old answer holds meanwhile.
 * and an admin's standing is used for DIRECTORY_ADMIN_USEC only.  A
 * helper that has been on one lookup for DIRECTORY_STALL_USEC is killed
 * and another started: that uid or name is taken as unknown, to be asked
 * again at its refresh.  Everything is dropped at a reload ([exempt]
 * groups and admin_group may have changed). */
#ifndef LOGINGUARD_DIRECTORY_H
#define LOGINGUARD_DIRECTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/helper_process.h"
#include "policy.h"
#include "snapshot.h"

#define DIRECTORY_REFRESH_USEC (10 * 60 * 1000000ULL)
#define DIRECTORY_REFRESH_MAX 32
#define DIRECTORY_ADMIN_USEC (60 * 1000000ULL)
#define DIRECTORY_STALL_USEC (30 * 1000000ULL)
/* Names asked for (an admin's `loginguardctl user NAME`) kept at most. */
#define DIRECTORY_NAMES_MAX 64
/* The groups a uid is checked against: every [exempt] group and admin_group. */
#define DIRECTORY_GROUPS_MAX (MAX_NAMES + 1)
/* Lookups waiting for the helper at most: past that a uid is asked at
 * its next refresh (a user with thousands of subordinate uids). */
#define DIRECTORY_QUEUE_MAX 4096
/* Killed helpers that have not died yet (a lookup in the kernel): no new
 * one is started while this many wait. */
#define DIRECTORY_STUCK_MAX 4

struct user_info {
    uid_t uid;
    char name[64];        /* "" when the uid has no passwd entry, or no answer yet */
    bool answered;        /* the directory has answered at least once */
    bool exempt_group;
    char exempt_group_name[64]; /* the first [exempt] group it is in */
    bool admin;           /* root, or in admin_group */
    bool asked;           /* a lookup is out */
    uint64_t answered_at; /* boottime usec */
};

/* A name an admin asked about, and the uid it has. */
struct directory_name {
    char name[64];
    bool answered, found, asked;
    uid_t uid;
    uint64_t answered_at;
};

struct directory {
    struct helper_process helper; /* its sock -1: no helper */
    uint32_t generation;          /* of the groups sent; older answers are dropped */
    char *groups[DIRECTORY_GROUPS_MAX]; /* [exempt] groups, then admin_group */
    size_t group_count;
    size_t exempt_count;          /* the first exempt_count of groups */
    bool has_admin_group;
    struct user_info *users;      /* by uid */
    size_t count, capacity;
    struct directory_name names[DIRECTORY_NAMES_MAX];
    size_t name_count;
    /* Lookups sent and not answered, in order: the helper answers in
     * the order asked. */
    struct directory_request *out;
    size_t out_head, out_count, out_capacity;
    uint64_t head_since;          /* when the oldest one out was sent */
    uid_t refreshed;              /* the last uid asked again (a round robin) */
    uint64_t stall_usec;          /* DIRECTORY_STALL_USEC; a test may choose another */
    bool news;                    /* a uid answered for the first time (directory_news) */
    uint64_t lookups, restarts;   /* for tests and status */
};

/* Start the helper.  -1 with err. */
int directory_start(struct directory *d, char *err, size_t err_len);
void directory_stop(struct directory *d);
/* The groups uids are checked against, from the policy (at start and at
 * each reload): every answer is dropped. */
void directory_set_policy(struct directory *d, const struct policy *p);

/* What is known of uid (asked for if nothing or an old answer is). */
const struct user_info *directory_user(struct directory *d, uid_t uid);
/* uid as the engine asks about it: uid, name, [exempt] group. */
struct user_sample directory_sample(struct directory *d, uid_t uid);
/* uid's name, "" when it has none or none is known yet. */
const char *directory_name_of(struct directory *d, uid_t uid);
/* Whether uid is an admin: 1, 0, or -1 when the directory has not
 * answered yet (ask again once directory_poll has taken answers).
 * subordinate: uid is another user's subordinate uid, never an admin. */
int directory_admin(struct directory *d, uid_t uid, bool subordinate);
/* The uid of a user name: 1 with *uid, 0 when no user has it, -1 when
 * the directory has not answered yet. */
int directory_uid_of(struct directory *d, const char *name, uid_t *uid);
/* At each sweep: up to DIRECTORY_REFRESH_MAX uids without a name or
 * with an old answer asked again. */
void directory_refresh(struct directory *d);

/* Whether a uid has had its first answer since the last call. */
bool directory_news(struct directory *d);

/* For the main loop: the descriptor to watch (readable: answers), -1
 * when there is none, and when to call directory_poll anyway (a stalled
 * helper; 0: nothing out). */
int directory_fd(const struct directory *d);
uint64_t directory_deadline(const struct directory *d);
/* Take every answer that has come; deal with a stalled helper.  Returns
 * how many answers were taken. */
size_t directory_poll(struct directory *d);

#endif
