/* /etc/subuid, "name:first:count" a line: whose every subordinate uid
 * is.  Names are resolved by a stand-in for getpwnam_r that knows two
 * users, so that no input asks the node's user directory (which may be
 * LDAP) and the same input always gives the same ranges. */
#include "config.h"

#include <errno.h>
#include <pwd.h>
#include <string.h>

#include "fuzz.h"
#include "observe/subuid.h"

int getpwnam_r(const char *name, struct passwd *pw, char *buf, size_t len, struct passwd **res)
{
    (void)buf;
    (void)len;
    memset(pw, 0, sizeof(*pw));
    *res = NULL;
    if (strcmp(name, "alice") == 0)
        pw->pw_uid = 1000;
    else if (strcmp(name, "bob") == 0)
        pw->pw_uid = 1001;
    else
        return 0;
    *res = pw;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct subuid_map m;
    memset(&m, 0, sizeof(m));
    subuid_parse(&m, (const char *)data, size);
    for (size_t i = 0; i < m.count; i++) {
        const struct subuid_range *r = &m.ranges[i];
        FUZZ_CHECK(r->count > 0 && (uint64_t)r->first + r->count <= (uid_t)-1);
        /* Sorted and apart: a uid is one person's at most. */
        FUZZ_CHECK(i == 0 || m.ranges[i - 1].first + m.ranges[i - 1].count <= r->first);
        FUZZ_CHECK(subuid_owner(&m, r->first) == r->owner);
        FUZZ_CHECK(subuid_owner(&m, r->first + r->count - 1) == r->owner);
    }
    FUZZ_CHECK(subuid_owner(&m, (uid_t)-1) == (uid_t)-1);
    /* Parsing again replaces the ranges. */
    subuid_parse(&m, (const char *)data, size / 2);
    subuid_free(&m);
    return 0;
}
