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

#include "record/trace.h"
#include "util.h"

/* A segment at least this big before size alone starts another: each
 * new one writes every process it holds in full again. */
#define SEGMENT_MIN (1u << 20)

void trace_writer_init(struct trace_writer *t)
{
    memset(t, 0, sizeof(*t));
    t->dirfd = -1;
    t->fd = -1;
}

static void leave_segment(struct trace_writer *t)
{
    if (t->fd >= 0)
        close(t->fd);
    t->fd = -1;
    t->name[0] = '\0';
}

void trace_writer_close(struct trace_writer *t)
{
    leave_segment(t);
    if (t->dirfd >= 0)
        close(t->dirfd);
    free(t->dir);
    trace_encoder_free(&t->enc);
    strbuf_free(&t->buf);
    uint64_t written = t->bytes_written;
    bool failing = t->failing;
    trace_writer_init(t);
    t->bytes_written = written;
    t->failing = failing;
}

/* state_dir/trace, made if missing, ours and closed to everyone else. */
static int open_dir(struct trace_writer *t, const char *state_dir, char *err, size_t err_len)
{
    int sfd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (sfd < 0) {
        snprintf(err, err_len, "trace: cannot open the state directory %s: %s", state_dir,
                 strerror(errno));
        return -1;
    }
    if (mkdirat(sfd, TRACE_DIR_NAME, 0700) < 0 && errno != EEXIST) {
        snprintf(err, err_len, "trace: cannot make %s: %s; no trace is recorded", t->dir,
                 strerror(errno));
        close(sfd);
        return -1;
    }
    t->dirfd = openat(sfd, TRACE_DIR_NAME, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int e = errno;
    close(sfd);
    if (t->dirfd < 0) {
        snprintf(err, err_len, "trace: cannot open %s: %s%s; no trace is recorded", t->dir,
                 strerror(e), e == ELOOP || e == ENOTDIR ? " (it must be a directory, not a "
                                                           "symbolic link: remove it)" : "");
        return -1;
    }
    struct stat st;
    if (fstat(t->dirfd, &st) < 0 || st.st_uid != geteuid()) {
        snprintf(err, err_len, "trace: %s belongs to uid %u, not to the daemon; no trace is "
                 "recorded (remove it, or chown it to uid %u)", t->dir, (unsigned)st.st_uid,
                 (unsigned)geteuid());
        close(t->dirfd);
        t->dirfd = -1;
        return -1;
    }
    /* It holds every user's command lines. */
    if ((st.st_mode & 07777) != 0700 && fchmod(t->dirfd, 0700) < 0) {
        snprintf(err, err_len, "trace: cannot make %s mode 0700: %s; no trace is recorded",
                 t->dir, strerror(errno));
        close(t->dirfd);
        t->dirfd = -1;
        return -1;
    }
    return 0;
}

int trace_writer_open(struct trace_writer *t, const struct policy *p, char *err, size_t err_len)
{
    trace_writer_close(t);
    t->enabled = p->trace_enabled;
    if (!t->enabled)
        return 0;
    t->max_size = p->trace_max_size;
    t->max_age = p->trace_max_age;
    t->segment_max = t->max_size / 8 > SEGMENT_MIN ? t->max_size / 8 : SEGMENT_MIN;
    t->dir = xasprintf("%s/%s", p->state_dir, TRACE_DIR_NAME);
    if (open_dir(t, p->state_dir, err, err_len) < 0) {
        t->enabled = false;
        return -1;
    }
    return 0;
}

bool trace_writer_wants_argv(const struct trace_writer *t, pid_t pid, uint64_t start_time)
{
    return t->enabled && (t->fd < 0 || !trace_encoder_knows(&t->enc, pid, start_time));
}

/* Segments are named for their start, so that names sort by time. */
static bool segment_name(const char *name)
{
    size_t n = strlen(name);
    return n > 6 && strcmp(name + n - 6, ".jsonl") == 0 && name[0] >= '0' && name[0] <= '9';
}

struct segment {
    char name[64];
    uint64_t size;
    time_t mtime;
};

static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct segment *)a)->name, ((const struct segment *)b)->name);
}

void trace_writer_prune(struct trace_writer *t, uint64_t now)
{
    if (t->dirfd < 0)
        return;
    int fd = openat(t->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
    if (!dir) {
        if (fd >= 0)
            close(fd);
        return;
    }
    struct segment *segs = NULL;
    size_t count = 0, cap = 0;
    uint64_t total = 0;
    struct dirent *de;
    while ((de = readdir(dir))) {
        struct stat st;
        if (!segment_name(de->d_name) || strlen(de->d_name) >= sizeof(segs->name) ||
            fstatat(t->dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
            continue;
        segs = grow_array(segs, count, &cap, sizeof(*segs));
        copy_string(segs[count].name, sizeof(segs[count].name), de->d_name);
        segs[count].size = (uint64_t)st.st_size;
        segs[count].mtime = st.st_mtime;
        total += segs[count].size;
        count++;
    }
    closedir(dir);
    qsort(segs, count, sizeof(*segs), by_name);
    time_t oldest = (time_t)((now > t->max_age ? now - t->max_age : 0) / 1000000);
    for (size_t i = 0; i < count; i++) {
        if (strcmp(segs[i].name, t->name) == 0)
            break; /* the one being written, and any after it, stay */
        if (total <= t->max_size && segs[i].mtime >= oldest)
            break;
        if (unlinkat(t->dirfd, segs[i].name, 0) == 0)
            total -= segs[i].size;
    }
    t->total_bytes = total;
    free(segs);
}

static int begin_segment(struct trace_writer *t, uint64_t now, const char *host,
                         const char *mode, uint64_t sample_interval, char *err, size_t err_len)
{
    leave_segment(t);
    time_t secs = (time_t)(now / 1000000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    char stamp[32];
    strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%S", &tm);
    for (int attempt = 0; attempt < 100 && t->fd < 0; attempt++) {
        snprintf(t->name, sizeof(t->name), "%s.%06u-%02d.jsonl", stamp,
                 (unsigned)(now % 1000000), attempt);
        t->fd = openat(t->dirfd, t->name,
                       O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (t->fd < 0 && errno != EEXIST)
            break;
    }
    if (t->fd < 0) {
        snprintf(err, err_len, "trace: cannot create a file in %s: %s; tried again at the next "
                 "sample", t->dir, strerror(errno));
        t->name[0] = '\0';
        return -1;
    }
    t->segment_start = now;
    t->segment_bytes = 0;
    trace_writer_prune(t, now);
    t->buf.len = 0;
    trace_encode_start(&t->enc, &t->buf, host, now, mode, sample_interval);
    t->enc.user_budget = t->segment_max / 64;
    return 0;
}

int trace_writer_sample(struct trace_writer *t, const struct snapshot *snap, const char *host,
                        const char *mode, uint64_t sample_interval, char *err, size_t err_len)
{
    if (!t->enabled || t->dirfd < 0)
        return 0;
    t->buf.len = 0;
    if (t->fd < 0 || snap->now / TRACE_SEGMENT_USEC != t->segment_start / TRACE_SEGMENT_USEC ||
        snap->now < t->segment_start || t->segment_bytes >= t->segment_max) {
        if (begin_segment(t, snap->now, host, mode, sample_interval, err, err_len) < 0)
            return -1;
    }
    trace_encode_sample(&t->enc, snap, &t->buf);
    /* One write: a crash leaves this sample cut short, never an earlier one. */
    size_t off = 0;
    while (off < t->buf.len) {
        ssize_t w = write(t->fd, t->buf.s + off, t->buf.len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            snprintf(err, err_len, "trace: cannot write %s/%s: %s; a new file is begun at the "
                     "next sample", t->dir, t->name, w < 0 ? strerror(errno) : "nothing written");
            /* What follows a cut line must not be glued to it. */
            leave_segment(t);
            return -1;
        }
        off += (size_t)w;
    }
    t->segment_bytes += off;
    t->total_bytes += off;
    t->bytes_written += off;
    if (t->total_bytes > t->max_size)
        trace_writer_prune(t, snap->now);
    return 0;
}
