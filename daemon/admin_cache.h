/* Who may act as an admin (root, or a member of admin_group), remembered
 * per uid for ADMIN_CACHE_AGE.  Asking took three directory lookups
 * (getpwuid_r, getgrnam_r, getgrouplist) at every control connection: on
 * a node with LDAP or SSSD a user connecting in a loop delayed samples.
 * Now a uid costs those lookups once a minute at most, and a subordinate
 * uid (a rootless container's) none: it is never an admin.  At most
 * ADMIN_CACHE_MAX uids are kept, the oldest answer making way. */
#ifndef LOGINGUARD_ADMIN_CACHE_H
#define LOGINGUARD_ADMIN_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define ADMIN_CACHE_MAX 64
#define ADMIN_CACHE_AGE (60ULL * 1000 * 1000)

/* The directory's answer for uid: control_uid_admin unless a test gives
 * its own. */
typedef bool (*admin_lookup)(uid_t uid, const char *group);

struct admin_answer {
    uid_t uid;
    bool admin;
    uint64_t at;    /* when it was looked up (boottime usec) */
};

struct admin_cache {
    struct admin_answer answers[ADMIN_CACHE_MAX];
    size_t count;
    admin_lookup lookup;    /* NULL: control_uid_admin */
    uint64_t lookups;       /* made, ever: for tests */
};

/* Whether uid is an admin of group; subordinate: uid is another's
 * subordinate uid (never an admin, nothing looked up). */
bool admin_cache_check(struct admin_cache *c, uid_t uid, bool subordinate, const char *group,
                       uint64_t now);
/* Every answer dropped (at a reload: admin_group may have changed). */
void admin_cache_forget(struct admin_cache *c);

#endif
