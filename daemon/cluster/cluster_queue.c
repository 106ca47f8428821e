#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cluster/cluster_queue.h"
#include "safefile.h"
#include "strbuf.h"
#include "util.h"

/* The file is rewritten once this much of it is stored and it is at
 * least half stored: rarely, and never to save a few bytes. */
#define COMPACT_MIN_BYTES (1u << 20)
#define SEQ_FILE_MAX 4096

static void record_free(struct cluster_record *r)
{
    free(r->text);
    r->text = NULL;
}

static void keep(struct cluster_queue *q, uint64_t seq, uid_t uid, bool change, char *text,
                 size_t len)
{
    q->items = grow_array(q->items, q->count, &q->capacity, sizeof(*q->items));
    q->items[q->count++] =
        (struct cluster_record){.seq = seq, .uid = uid, .change = change, .text = text, .len = len};
}

static int open_dir(const struct cluster_queue *q, char *err, size_t err_len)
{
    int dirfd = open(q->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirfd < 0)
        snprintf(err, err_len, "%s: cannot open the state directory: %s; create it (owned by "
                 "root, mode 0700) or set state_dir in loginguard.conf", q->dir, strerror(errno));
    return dirfd;
}

/* The queue file for appending, made if missing: a regular file of ours
 * no one else can write, never through a symlink. */
static int open_queue_file(struct cluster_queue *q, int dirfd, char *err, size_t err_len)
{
    int fd = openat(dirfd, CLUSTER_QUEUE_FILE,
                    O_RDWR | O_CREAT | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC,
                    0600);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) < 0) {
        snprintf(err, err_len, "%s/%s: cannot open: %s; check that it is a regular file, not a "
                 "symbolic link", q->dir, CLUSTER_QUEUE_FILE, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (!S_ISREG(sb.st_mode) || sb.st_uid != geteuid() || (sb.st_mode & 022)) {
        snprintf(err, err_len, "%s/%s: not a regular file of uid %u that only it can write; "
                 "remove it (the records in it are lost)", q->dir, CLUSTER_QUEUE_FILE,
                 (unsigned)geteuid());
        close(fd);
        return -1;
    }
    /* The mode whatever the daemon's umask. */
    fchmod(fd, 0600);
    int flags = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    return fd;
}

/* One line of the file into the queue; false if it is no record. */
static bool load_line(struct cluster_queue *q, const char *line, size_t len)
{
    json_t *o = json_loadb(line, len, JSON_REJECT_DUPLICATES, NULL);
    json_t *seq = json_object_get(o, "seq"), *uid = json_object_get(o, "uid");
    const char *kind = json_string_value(json_object_get(o, "kind"));
    bool ok = json_is_object(o) && json_is_integer(seq) && json_integer_value(seq) > 0 &&
              (uint64_t)json_integer_value(seq) > (q->count ? q->items[q->count - 1].seq : 0) &&
              kind && (!uid || json_is_integer(uid));
    if (ok) {
        bool change = strcmp(kind, "event") != 0;
        keep(q, (uint64_t)json_integer_value(seq),
             uid && change ? (uid_t)json_integer_value(uid) : CLUSTER_NO_UID, change,
             xstrndup(line, len), len);
        q->bytes += len + 1;
    }
    json_decref(o);
    return ok;
}

/* Every whole line of fd; a last line with no newline (a write a crash
 * cut short) is cut off the file. */
static int load_file(struct cluster_queue *q, int fd, size_t *skipped, char *err,
                     size_t err_len)
{
    struct stat sb;
    if (fstat(fd, &sb) < 0 || lseek(fd, 0, SEEK_SET) < 0)
        goto fail;
    char *text = xmalloc((size_t)sb.st_size + 1);
    size_t used = 0;
    while (used < (size_t)sb.st_size) {
        ssize_t n = read(fd, text + used, (size_t)sb.st_size - used);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            free(text);
            goto fail;
        }
        used += (size_t)n;
    }
    size_t start = 0;
    for (size_t i = 0; i < used; i++) {
        if (text[i] != '\n')
            continue;
        if (i > start && !load_line(q, text + start, i - start))
            (*skipped)++;
        start = i + 1;
    }
    free(text);
    /* Lines that were no records are left out: the file is rewritten. */
    q->broken = *skipped > 0;
    if (start < used && ftruncate(fd, (off_t)start) < 0)
        goto fail;
    return 0;
fail:
    snprintf(err, err_len, "%s/%s: cannot read: %s; the records in it are not sent", q->dir,
             CLUSTER_QUEUE_FILE, strerror(errno));
    return -1;
}

static void load_seq_file(struct cluster_queue *q, int dirfd)
{
    char *text = NULL, err[300];
    size_t len;
    if (safe_read_file(dirfd, q->dir, CLUSTER_SEQ_FILE, SEQ_FILE_MAX, &text, &len, err,
                       sizeof(err)) != 0)
        return;
    json_t *o = json_loadb(text, len, 0, NULL);
    json_t *seq = json_object_get(o, "seq");
    if (json_is_integer(seq) && json_integer_value(seq) > 0 &&
        (uint64_t)json_integer_value(seq) > q->last_seq)
        q->last_seq = (uint64_t)json_integer_value(seq);
    json_decref(o);
    free(text);
}

static int save_seq_file(struct cluster_queue *q, int dirfd, char *err, size_t err_len)
{
    char text[64];
    snprintf(text, sizeof(text), "{\"seq\":%" PRIu64 "}", q->last_seq);
    return safe_write_file(dirfd, q->dir, CLUSTER_SEQ_FILE, text, err, err_len);
}

int cluster_queue_open(struct cluster_queue *q, const char *dir, uint64_t limit,
                       size_t *skipped, char *err, size_t err_len)
{
    memset(q, 0, sizeof(*q));
    q->fd = -1;
    q->dir = xstrdup(dir);
    q->limit = limit ? limit : CLUSTER_QUEUE_LIMIT;
    *skipped = 0;
    int dirfd = open_dir(q, err, err_len);
    if (dirfd < 0) {
        q->broken = true;
        return -1;
    }
    int rc = -1;
    q->fd = open_queue_file(q, dirfd, err, err_len);
    if (q->fd >= 0 && load_file(q, q->fd, skipped, err, err_len) == 0)
        rc = 0;
    if (q->count)
        q->last_seq = q->items[q->count - 1].seq;
    load_seq_file(q, dirfd);
    close(dirfd);
    if (rc < 0)
        q->broken = true;
    return rc;
}

void cluster_queue_close(struct cluster_queue *q)
{
    for (size_t i = 0; i < q->count; i++)
        record_free(&q->items[i]);
    free(q->items);
    free(q->dir);
    if (q->fd >= 0)
        close(q->fd);
    memset(q, 0, sizeof(*q));
    q->fd = -1;
}

static int append(struct cluster_queue *q, const char *text, size_t len)
{
    if (q->fd < 0 || q->broken) {
        errno = EIO;
        return -1;
    }
    char *line = xmalloc(len + 1);
    memcpy(line, text, len);
    line[len] = '\n';
    size_t done = 0;
    while (done < len + 1) {
        ssize_t n = write(q->fd, line + done, len + 1 - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        done += (size_t)n;
    }
    int e = errno;
    free(line);
    if (done == len + 1)
        return 0;
    /* A piece of a line cannot stay: the whole file is written again. */
    q->broken = true;
    errno = done ? ENOSPC : e;
    return -1;
}

uint64_t cluster_queue_add(struct cluster_queue *q, json_t *record, bool change, uid_t uid,
                           bool *first_refusal)
{
    if (first_refusal)
        *first_refusal = false;
    if (!change && q->bytes >= q->limit) {
        if (first_refusal)
            *first_refusal = q->refused == 0;
        q->refused++;
        q->refused_total++;
        return 0;
    }
    uint64_t seq = q->last_seq + 1;
    json_object_set_new(record, "seq", json_integer((json_int_t)seq));
    char *text = json_dumps(record, JSON_COMPACT | JSON_REAL_PRECISION(17));
    if (!text)
        abort(); /* out of memory, as xmalloc (util.h) */
    q->last_seq = seq;
    size_t len = strlen(text);
    keep(q, seq, change ? uid : CLUSTER_NO_UID, change, text, len);
    q->bytes += len + 1;
    if (append(q, text, len) == 0)
        q->dirty = true;
    return seq;
}

/* The whole queue as the file's text (lines, the last without its
 * newline: safe_write_file adds it). */
static char *queue_text(const struct cluster_queue *q)
{
    struct strbuf b = {0};
    for (size_t i = 0; i < q->count; i++) {
        if (i)
            strbuf_add(&b, "\n", 1);
        strbuf_add(&b, q->items[i].text, q->items[i].len);
    }
    return strbuf_take(&b);
}

/* Write the queue again, whole: the seq first while it is empty, then the
 * file cut to nothing; else a new file renamed over the old one. */
static int rewrite(struct cluster_queue *q, char *err, size_t err_len)
{
    int dirfd = open_dir(q, err, err_len);
    if (dirfd < 0)
        return -1;
    int rc = -1;
    if (q->count == 0) {
        if (save_seq_file(q, dirfd, err, err_len) == 0) {
            if (q->fd < 0)
                q->fd = open_queue_file(q, dirfd, err, err_len);
            if (q->fd >= 0 && ftruncate(q->fd, 0) == 0 && fsync(q->fd) == 0)
                rc = 0;
            else if (q->fd >= 0)
                snprintf(err, err_len, "%s/%s: cannot empty it: %s", q->dir, CLUSTER_QUEUE_FILE,
                         strerror(errno));
        }
    } else {
        char *text = queue_text(q);
        if (safe_write_file(dirfd, q->dir, CLUSTER_QUEUE_FILE, text, err, err_len) == 0) {
            if (q->fd >= 0)
                close(q->fd);
            q->fd = open_queue_file(q, dirfd, err, err_len);
            rc = q->fd >= 0 ? 0 : -1;
        }
        free(text);
    }
    close(dirfd);
    if (rc == 0) {
        q->broken = q->dirty = false;
        q->stored_bytes = 0;
    }
    return rc;
}

int cluster_queue_sync(struct cluster_queue *q, char *err, size_t err_len)
{
    if (q->broken)
        return rewrite(q, err, err_len);
    if (!q->dirty)
        return 0;
    if (fdatasync(q->fd) < 0) {
        snprintf(err, err_len, "%s/%s: cannot sync: %s; it is written again whole at every "
                 "sample", q->dir, CLUSTER_QUEUE_FILE, strerror(errno));
        q->broken = true;
        return -1;
    }
    q->dirty = false;
    return 0;
}

int cluster_queue_stored(struct cluster_queue *q, uint64_t seq, char *err, size_t err_len)
{
    size_t n = 0;
    while (n < q->count && q->items[n].seq <= seq) {
        q->bytes -= q->items[n].len + 1;
        q->stored_bytes += q->items[n].len + 1;
        record_free(&q->items[n++]);
    }
    bool moved = seq > q->last_seq;
    if (moved)
        q->last_seq = seq;
    if (n == 0 && !moved)
        return 0;
    memmove(q->items, q->items + n, (q->count - n) * sizeof(*q->items));
    q->count -= n;
    if (q->bytes < q->limit)
        q->refused = 0;
    bool compact = q->count == 0 ||
                   (q->stored_bytes >= COMPACT_MIN_BYTES && q->stored_bytes >= q->bytes);
    if (!compact)
        return 0;
    /* Appended records reach the disk before the file is replaced. */
    if (cluster_queue_sync(q, err, err_len) < 0)
        return -1;
    return rewrite(q, err, err_len);
}

const struct cluster_record *cluster_queue_after(const struct cluster_queue *q, uint64_t seq)
{
    size_t lo = 0, hi = q->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (q->items[mid].seq <= seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < q->count ? &q->items[lo] : NULL;
}

uint64_t cluster_queue_last_change(const struct cluster_queue *q, uid_t uid)
{
    for (size_t i = q->count; i-- > 0;)
        if (q->items[i].change && q->items[i].uid == uid)
            return q->items[i].seq;
    return 0;
}
