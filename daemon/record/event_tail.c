#include "config.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record/event_tail.h"
#include "util.h"

/* The last EVENT_TAIL_BYTES of the file (or all of it), NUL-terminated;
 * *cut when it starts inside a line.  NULL when unreadable. */
static char *read_end(const char *path, size_t *len, bool *cut)
{
    if (!path || strcmp(path, "-") == 0)
        return NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    struct stat st;
    if (fd < 0)
        return NULL;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return NULL;
    }
    off_t from = st.st_size > EVENT_TAIL_BYTES ? st.st_size - EVENT_TAIL_BYTES : 0;
    size_t want = (size_t)(st.st_size - from), n = 0;
    char *buf = xmalloc(want + 1);
    while (n < want) {
        ssize_t got = pread(fd, buf + n, want - n, from + (off_t)n);
        if (got <= 0)
            break;
        n += (size_t)got;
    }
    close(fd);
    buf[n] = '\0';
    *len = n;
    *cut = from > 0;
    return buf;
}

static bool wanted(const json_t *e, uid_t uid, const char *only)
{
    const json_t *u = json_object_get(e, "uid");
    if (!json_is_integer(u) || json_integer_value(u) != (json_int_t)uid)
        return false;
    return !only || strcmp(json_string_value(json_object_get(e, "event")) ?: "", only) == 0;
}

json_t *event_tail(const char *path, uid_t uid, const char *only, size_t max)
{
    json_t *found = json_array();
    size_t len;
    bool cut;
    char *buf = read_end(path, &len, &cut);
    if (!buf)
        return found;
    /* From the end backwards; a line is parsed only when it names the
     * uid (the log is written compactly: "uid":N). */
    char key[32];
    int key_len = snprintf(key, sizeof(key), "\"uid\":%u", (unsigned)uid);
    size_t end = len;
    while (end > 0 && json_array_size(found) < max) {
        size_t start = end;
        while (start > 0 && buf[start - 1] != '\n')
            start--;
        if (start == 0 && cut)
            break;
        const char *hit = memmem(buf + start, end - start, key, (size_t)key_len);
        size_t after = hit ? (size_t)(hit - buf) + (size_t)key_len : 0;
        if (hit && after < end && (buf[after] < '0' || buf[after] > '9')) {
            json_t *e = json_loadb(buf + start, end - start, 0, NULL);
            if (json_is_object(e) && wanted(e, uid, only))
                json_array_insert(found, 0, e);
            json_decref(e);
        }
        end = start > 0 ? start - 1 : 0;
    }
    free(buf);
    return found;
}
