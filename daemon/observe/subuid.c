#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "observe/subuid.h"
#include "util.h"

/* /etc/subuid is small; a larger file is not read. */
#define SUBUID_MAX (4 * 1024 * 1024)

static bool parse_uid(const char *s, size_t len, uint64_t *out)
{
    uint64_t v = 0;
    if (len == 0 || len > 10)
        return false;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    *out = v;
    return v < (uid_t)-1;
}

static bool owner_of(const char *name, size_t len, uid_t *owner)
{
    uint64_t v;
    if (parse_uid(name, len, &v)) {
        *owner = (uid_t)v;
        return true;
    }
    char *copy = xstrndup(name, len);
    char buf[4096];
    struct passwd pw, *res = NULL;
    bool found = getpwnam_r(copy, &pw, buf, sizeof(buf), &res) == 0 && res;
    if (found)
        *owner = res->pw_uid;
    free(copy);
    return found;
}

/* One "owner:first:count" line into r. */
static bool parse_line(const char *line, size_t len, struct subuid_range *r)
{
    const char *c1 = memchr(line, ':', len);
    const char *c2 = c1 ? memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - line)) : NULL;
    uint64_t first, count;
    if (!c2 || !parse_uid(c1 + 1, (size_t)(c2 - c1 - 1), &first) ||
        !parse_uid(c2 + 1, len - (size_t)(c2 + 1 - line), &count) || count == 0 ||
        first + count > (uid_t)-1)
        return false;
    r->first = (uid_t)first;
    r->count = (uid_t)count;
    return owner_of(line, (size_t)(c1 - line), &r->owner);
}

static int by_first(const void *a, const void *b)
{
    const struct subuid_range *x = a, *y = b;
    return x->first < y->first ? -1 : x->first > y->first;
}

void subuid_parse(struct subuid_map *m, const char *text, size_t len)
{
    free(m->ranges);
    m->ranges = NULL;
    m->count = m->skipped = 0;
    size_t capacity = 0;
    for (const char *p = text, *end = text + len; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = (size_t)((nl ? nl : end) - p);
        struct subuid_range r;
        if (n > 0 && p[0] != '#') {
            if (parse_line(p, n, &r)) {
                m->ranges = grow_array(m->ranges, m->count, &capacity, sizeof(r));
                m->ranges[m->count++] = r;
            } else {
                m->skipped++;
            }
        }
        p += n + 1;
    }
    if (m->count) /* qsort's pointer must not be NULL, even for nothing */
        qsort(m->ranges, m->count, sizeof(*m->ranges), by_first);
    /* Overlapping ranges would make a uid two people's: the first wins. */
    size_t kept = 0;
    for (size_t i = 0; i < m->count; i++) {
        const struct subuid_range *last = kept ? &m->ranges[kept - 1] : NULL;
        if (last && m->ranges[i].first < last->first + last->count)
            m->skipped++;
        else
            m->ranges[kept++] = m->ranges[i];
    }
    m->count = kept;
}

int subuid_refresh(struct subuid_map *m, const char *path)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > SUBUID_MAX) {
        if (fd >= 0)
            close(fd);
        bool had = m->present || m->count;
        subuid_parse(m, "", 0);
        m->present = false;
        return had;
    }
    if (m->present && st.st_dev == m->dev && st.st_ino == m->ino && st.st_size == m->size &&
        st.st_mtim.tv_sec == m->mtime.tv_sec && st.st_mtim.tv_nsec == m->mtime.tv_nsec) {
        close(fd);
        return 0;
    }
    char *text = xmalloc((size_t)st.st_size + 1);
    size_t used = 0;
    ssize_t n;
    while (used < (size_t)st.st_size &&
           (n = read(fd, text + used, (size_t)st.st_size - used)) > 0)
        used += (size_t)n;
    close(fd);
    subuid_parse(m, text, used);
    free(text);
    m->present = true;
    m->dev = st.st_dev;
    m->ino = st.st_ino;
    m->size = st.st_size;
    m->mtime = st.st_mtim;
    return 1;
}

uid_t subuid_owner(const struct subuid_map *m, uid_t uid)
{
    size_t lo = 0, hi = m->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct subuid_range *r = &m->ranges[mid];
        if (uid < r->first)
            hi = mid;
        else if (uid - r->first >= r->count)
            lo = mid + 1;
        else
            return r->owner;
    }
    return uid;
}

void subuid_free(struct subuid_map *m)
{
    free(m->ranges);
    memset(m, 0, sizeof(*m));
}
