#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "trace_files.h"
#include "util.h"

#define READ_CHUNK (1u << 20)

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The segments' names, sorted (they begin with their start time). */
static int list_segments(const char *dir, char ***names, size_t *count, char *err,
                         size_t err_len)
{
    DIR *dp = opendir(dir);
    *names = NULL;
    *count = 0;
    if (!dp) {
        snprintf(err, err_len, "cannot read the trace directory %s: %s%s", dir, strerror(errno),
                 errno == ENOENT ? " (is [trace] enabled? give --trace DIR for another)" : "");
        return -1;
    }
    size_t cap = 0;
    struct dirent *de;
    while ((de = readdir(dp))) {
        size_t n = strlen(de->d_name);
        if (n <= 6 || strcmp(de->d_name + n - 6, ".jsonl") != 0 || de->d_name[0] == '.')
            continue;
        *names = grow_array(*names, *count, &cap, sizeof(**names));
        (*names)[(*count)++] = xstrdup(de->d_name);
    }
    closedir(dp);
    qsort(*names, *count, sizeof(**names), by_name);
    return 0;
}

/* The start of a segment from its name (YYYYmmddTHHMMSS.UUUUUU-NN.jsonl,
 * UTC), or 0. */
static uint64_t segment_time(const char *name)
{
    struct tm tm = {0};
    unsigned usec;
    if (sscanf(name, "%4d%2d%2dT%2d%2d%2d.%6u", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
               &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &usec) != 7)
        return 0;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    time_t t = timegm(&tm);
    return t < 0 ? 0 : (uint64_t)t * 1000000 + usec;
}

struct reading {
    struct trace_decoder dec;
    struct snapshot snap;
    uint64_t since, until;
    trace_sample_fn *fn;
    void *arg;
    struct trace_read_stats *stats;
};

static void take_line(struct reading *r, const char *line, size_t len)
{
    /* Samples before the range are still decoded (a sample says only what
     * changed), after it they are not needed. */
    uint64_t t = trace_line_time(line, len);
    if (t && r->until && t >= r->until)
        return;
    if (trace_decode_line(&r->dec, line, len, &r->snap) != 1)
        return;
    if (r->snap.now < r->since || (r->until && r->snap.now >= r->until))
        return;
    if (!r->stats->first)
        r->stats->first = r->snap.now;
    r->stats->last = r->snap.now;
    r->stats->samples++;
    r->fn(&r->dec, &r->snap, r->arg);
}

static int read_segment(struct reading *r, int fd)
{
    char *buf = xmalloc(READ_CHUNK);
    size_t cap = READ_CHUNK, len = 0;
    bool skipping = false;
    int rc = 0;
    for (;;) {
        if (len == cap) {
            if (cap >= TRACE_LINE_MAX) {
                /* Too long to be the daemon's: dropped up to its end. */
                r->stats->oversized += !skipping;
                skipping = true;
                len = 0;
            } else {
                cap *= 2;
                buf = xreallocarray(buf, cap, 1);
            }
        }
        ssize_t got = read(fd, buf + len, cap - len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            rc = -1;
            break;
        }
        if (got == 0)
            break;
        size_t start = 0, end = len + (size_t)got;
        for (char *nl; (nl = memchr(buf + len, '\n', end - len)); len = (size_t)(nl - buf) + 1) {
            size_t line_end = (size_t)(nl - buf);
            if (!skipping)
                take_line(r, buf + start, line_end - start);
            skipping = false;
            start = line_end + 1;
        }
        memmove(buf, buf + start, end - start);
        len = end - start;
    }
    if (len && !skipping)
        r->stats->cut++;
    free(buf);
    return rc;
}

int trace_read_dir(const char *dir, uint64_t since, uint64_t until, trace_sample_fn *fn,
                   void *arg, struct trace_read_stats *stats, char *err, size_t err_len)
{
    memset(stats, 0, sizeof(*stats));
    char **names;
    size_t count;
    if (list_segments(dir, &names, &count, err, err_len) < 0)
        return -1;
    struct reading r = {.since = since, .until = until, .fn = fn, .arg = arg, .stats = stats};
    int rc = 0;
    for (size_t i = 0; i < count && rc == 0; i++) {
        /* A segment is over when the next begins: one over before the
         * range is not read at all. */
        uint64_t next_start = i + 1 < count ? segment_time(names[i + 1]) : 0;
        if (since && next_start && next_start <= since)
            continue;
        char *path = xasprintf("%s/%s", dir, names[i]);
        int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
            if (!(fd < 0 && errno == ENOENT)) { /* deleted by the daemon meanwhile */
                snprintf(err, err_len, "cannot read %s: %s", path,
                         fd < 0 ? strerror(errno) : "not a regular file");
                rc = -1;
            }
        } else {
            stats->files++;
            /* Each segment stands alone. */
            r.dec.in_segment = false;
            if (read_segment(&r, fd) < 0) {
                snprintf(err, err_len, "cannot read %s: %s", path, strerror(errno));
                rc = -1;
            }
        }
        if (fd >= 0)
            close(fd);
        free(path);
    }
    stats->skipped = r.dec.skipped;
    trace_decoder_free(&r.dec);
    trace_snapshot_free(&r.snap);
    for (size_t i = 0; i < count; i++)
        free(names[i]);
    free(names);
    return rc;
}
