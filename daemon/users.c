#include "config.h"

#include <grp.h>
#include <pwd.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "users.h"
#include "util.h"

/* Whether pw is in an [exempt] group; which one into name (len > 0). */
static bool exempt_group_of(const struct policy *p, const struct passwd *pw, char *name,
                            size_t len)
{
    if (p->exempt_groups.count == 0)
        return false;
    int n = 64;
    gid_t *groups = xmalloc(sizeof(gid_t) * (size_t)n);
    if (getgrouplist(pw->pw_name, pw->pw_gid, groups, &n) < 0) {
        groups = xreallocarray(groups, (size_t)n, sizeof(gid_t));
        if (getgrouplist(pw->pw_name, pw->pw_gid, groups, &n) < 0)
            n = 0;
    }
    bool found = false;
    for (int i = 0; i < n && !found; i++) {
        char buf[4096];
        struct group gr, *res = NULL;
        if (getgrgid_r(groups[i], &gr, buf, sizeof(buf), &res) == 0 && res &&
            name_list_contains(&p->exempt_groups, res->gr_name)) {
            found = true;
            copy_string(name, len, res->gr_name);
        }
    }
    free(groups);
    return found;
}

const struct user_info *users_lookup(struct user_cache *c, const struct policy *p, uid_t uid)
{
    size_t at = uid_position(c->entries, c->count, sizeof(*c->entries),
                             offsetof(struct user_info, uid), uid);
    if (at < c->count && c->entries[at].uid == uid)
        return &c->entries[at];
    c->entries = insert_at(c->entries, &c->count, &c->capacity, sizeof(*c->entries), at);
    struct user_info *u = &c->entries[at];
    u->uid = uid;
    char buf[4096];
    struct passwd pw, *res = NULL;
    if (getpwuid_r(uid, &pw, buf, sizeof(buf), &res) == 0 && res) {
        copy_string(u->name, sizeof(u->name), res->pw_name);
        char group[1];
        u->exempt_group = exempt_group_of(p, res, group, sizeof(group));
    }
    return u;
}

bool users_exempt_group(const struct policy *p, uid_t uid, char *name, size_t len)
{
    char buf[4096];
    struct passwd pw, *res = NULL;
    return getpwuid_r(uid, &pw, buf, sizeof(buf), &res) == 0 && res &&
           exempt_group_of(p, res, name, len);
}

static int by_index(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

void users_retry_unknown(struct user_cache *c)
{
    /* The nameless after the last one retried, then from the lowest uid. */
    size_t start = uid_position(c->entries, c->count, sizeof(*c->entries),
                                offsetof(struct user_info, uid), c->retried + 1);
    size_t drop[USERS_RETRY_MAX], n = 0;
    for (size_t k = 0; k < c->count && n < USERS_RETRY_MAX; k++) {
        size_t i = (start + k) % c->count;
        if (!c->entries[i].name[0])
            drop[n++] = i;
    }
    if (n == 0)
        return;
    c->retried = c->entries[drop[n - 1]].uid;
    qsort(drop, n, sizeof(drop[0]), by_index);
    size_t kept = 0, d = 0;
    for (size_t i = 0; i < c->count; i++) {
        if (d < n && drop[d] == i)
            d++;
        else
            c->entries[kept++] = c->entries[i];
    }
    c->count = kept;
}

void users_forget(struct user_cache *c)
{
    free(c->entries);
    memset(c, 0, sizeof(*c));
}
