/* uid -> user name and [exempt] group membership, from NSS, cached:
 * on a login node with LDAP or SSSD a lookup can take milliseconds, and
 * the sampler asks every interval.  The cache is dropped on reload. */
#ifndef LOGINGUARD_USERS_H
#define LOGINGUARD_USERS_H

#include <stdbool.h>
#include <sys/types.h>

#include "policy.h"

struct user_info {
    uid_t uid;
    char name[64];        /* "" when the uid has no passwd entry */
    bool exempt_group;
};

struct user_cache {
    struct user_info *entries;
    size_t count, capacity;
    uid_t retried;        /* the last nameless uid asked again (a round robin) */
};

const struct user_info *users_lookup(struct user_cache *c, const struct policy *p, uid_t uid);
void users_forget(struct user_cache *c);
/* Which [exempt] group uid is in, into name (looked up anew, for
 * loginguardctl why); false when none. */
bool users_exempt_group(const struct policy *p, uid_t uid, char *name, size_t len);
/* Forget up to USERS_RETRY_MAX of the uids that had no name, in turn
 * by uid: a directory service (LDAP, sssd) that was down then is asked
 * again at the next lookup (the sampler calls this at every sweep).  A
 * lookup of a uid no directory knows is the costly kind (every NSS
 * module is asked; about 70 us through nss_systemd), and a node may run
 * hundreds of such uids (containers, batch accounts without entries):
 * asking them all at every sweep was most of the daemon's CPU. */
#define USERS_RETRY_MAX 32
void users_retry_unknown(struct user_cache *c);

#endif
