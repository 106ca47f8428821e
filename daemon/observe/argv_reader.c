#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <nettle/sha2.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/environment.h"
#include "base/helper_process.h"
#include "observe/argv_reader.h"
#include "observe/code_check.h"
#include "observe/procfs.h"
#include "observe/shm_fds.h"
#include "snapshot.h"
#include "util.h"

/* What goes over the socket (one datagram each way: SOCK_SEQPACKET). */
struct wire_answer {
    pid_t pid;
    uint64_t start_time;
    int32_t status;
    uint32_t len, total;
    uint8_t cut;
    char sha256[65];
};
_Static_assert(sizeof(struct wire_answer) <= ARGV_WIRE_FIXED, "ARGV_WIRE_FIXED too small");
_Static_assert(sizeof(struct argv_request) == 32, "a request has padding");
_Static_assert(CODE_WHY_MAX <= ARGV_KEEP, "a reason must fit an answer");
_Static_assert(sizeof(struct shm_fds_reply) <= ARGV_KEEP, "shared memory must fit an answer");

#define READ_CHUNK 16384
/* How often a runnable helper past its stall is looked at again. */
#define RECHECK_USEC (50 * 1000)

/* ---- the helper ---- */

static void hex(const uint8_t *digest, char out[65])
{
    for (size_t i = 0; i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", digest[i]);
}

/* Read pid's command line if it is still the process that started at
 * start_time; answer into a (its argv bytes into keep). */
/* The /proc directory of the process asked about, if it is still the
 * one that started at start_time (a pid reused since is another one):
 * everything is read through it.  -1 when it is gone. */
static int open_process(int proc_fd, const struct argv_request *q)
{
    char name[24], stat[1024];
    struct proc_stat st;
    snprintf(name, sizeof(name), "%d", (int)q->pid);
    int dir = openat(proc_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (dir < 0)
        return -1;
    int fd = openat(dir, "stat", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    ssize_t n = fd >= 0 ? procfs_pread(fd, stat, sizeof(stat)) : -1;
    if (fd >= 0)
        close(fd);
    if (n > 0 && procfs_parse_stat(stat, (size_t)n, &st) == 0 && st.start_time == q->start_time)
        return dir;
    close(dir);
    return -1;
}

static void read_cmdline(int proc_fd, const struct argv_request *q, struct wire_answer *a,
                         char *keep, char *chunk)
{
    a->status = ARGV_GONE;
    int dir = open_process(proc_fd, q);
    if (dir < 0)
        return;
    int fd = openat(dir, "cmdline", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    close(dir);
    if (fd < 0)
        return;
    ssize_t n;
    struct sha256_ctx ctx;
    sha256_init(&ctx);
    size_t total = 0;
    bool trailing_nul = false;
    while (total < ARGV_CAP && (n = read(fd, chunk, READ_CHUNK)) > 0) {
        size_t take = (size_t)n < ARGV_CAP - total ? (size_t)n : ARGV_CAP - total;
        if (total < ARGV_KEEP)
            memcpy(keep + total, chunk, take < ARGV_KEEP - total ? take : ARGV_KEEP - total);
        /* The last NUL ends the last argument; it is not part of it.  It
         * is hashed only once the next chunk shows it was not the last. */
        if (trailing_nul)
            sha256_update(&ctx, 1, (const uint8_t *)"");
        trailing_nul = chunk[take - 1] == '\0';
        sha256_update(&ctx, take - trailing_nul, (const uint8_t *)chunk);
        total += take;
    }
    a->cut = total >= ARGV_CAP && n > 0;
    close(fd);
    if (n < 0 && total == 0)
        return;
    total -= trailing_nul && !a->cut;
    if (a->cut && trailing_nul)
        sha256_update(&ctx, 1, (const uint8_t *)"");
    uint8_t digest[SHA256_DIGEST_SIZE];
    sha256_digest(&ctx, sizeof(digest), digest);
    hex(digest, a->sha256);
    a->status = ARGV_OK;
    a->total = (uint32_t)total;
    a->len = (uint32_t)(total < ARGV_KEEP ? total : ARGV_KEEP);
}

/* Whether the process runs only its own code: the reason it does not
 * into why ("" when it does). */
static void check_code(int proc_fd, const struct argv_request *q, struct wire_answer *a,
                       char *why)
{
    a->status = ARGV_GONE;
    int dir = open_process(proc_fd, q);
    if (dir < 0)
        return;
    why[0] = '\0';
    int verdict = code_check(dir, why, CODE_WHY_MAX);
    close(dir);
    if (verdict < 0)
        return;
    a->status = ARGV_OK;
    a->len = a->total = verdict ? 0 : (uint32_t)strlen(why);
}

/* The shared memory with no name the process holds through descriptors
 * (shm_fds.h), into reply. */
static void read_shm_fds(int proc_fd, const struct argv_request *q, struct wire_answer *a,
                         struct shm_mounts *mounts, char *reply)
{
    a->status = ARGV_GONE;
    int dir = open_process(proc_fd, q);
    if (dir < 0)
        return;
    shm_mounts_refresh(mounts, proc_fd);
    struct shm_fds_reply r;
    int rc = shm_fds_read(dir, mounts, q->from, q->budget, &r);
    close(dir);
    if (rc < 0)
        return;
    a->status = ARGV_OK;
    a->len = a->total = (uint32_t)SHM_FDS_REPLY_SIZE(r.count);
    memcpy(reply, &r, a->len);
}

/* The helper, its socket as 3 and the /proc it reads as 4: asked, it
 * answers, until the daemon closes its end. */
static void serve(void *arg)
{
    (void)arg;
    char answer[ARGV_WIRE_FIXED + ARGV_KEEP], chunk[READ_CHUNK];
    struct shm_mounts mounts = {0};
    struct argv_request q;
    ssize_t n;
    while ((n = recv(3, &q, sizeof(q), 0)) == (ssize_t)sizeof(q)) {
        struct wire_answer *a = (struct wire_answer *)answer;
        memset(a, 0, sizeof(*a));
        a->pid = q.pid;
        a->start_time = q.start_time;
        if (q.kind == ARGV_CODE)
            check_code(4, &q, a, answer + sizeof(*a));
        else if (q.kind == ARGV_SHM_FDS)
            read_shm_fds(4, &q, a, &mounts, answer + sizeof(*a));
        else
            read_cmdline(4, &q, a, answer + sizeof(*a), chunk);
        if (send(3, answer, sizeof(*a) + (a->status == ARGV_OK ? a->len : 0), MSG_NOSIGNAL) < 0)
            break;
    }
}

/* ---- the daemon's side ---- */

/* A new helper, unless ARGV_STUCK_MAX killed ones still wait on their
 * reads.  (A helper runs only while fewer than that are waiting so:
 * there is always room for it when it is killed.) */
static int spawn(struct argv_reader *r)
{
    if (helper_process_start(&r->helper, "loginguard-argv", &r->proc_fd, 1, serve, NULL) < 0)
        return -1;
    r->sent = 0;
    return 0;
}

int argv_reader_start(struct argv_reader *r, const char *proc_root, char *err, size_t err_len)
{
    memset(r, 0, sizeof(*r));
    helper_process_init(&r->helper, ARGV_STUCK_MAX);
    r->stall_usec = ARGV_STALL_USEC;
    r->proc_fd = open(proc_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (r->proc_fd < 0 || spawn(r) < 0) {
        snprintf(err, err_len, "cannot start the command line reader on %s: %s", proc_root,
                 strerror(errno));
        if (r->proc_fd >= 0)
            close(r->proc_fd);
        r->proc_fd = -1;
        return -1;
    }
    return 0;
}

void argv_reader_stop(struct argv_reader *r)
{
    helper_process_stop(&r->helper);
    if (r->proc_fd >= 0)
        close(r->proc_fd);
    free(r->queue);
    memset(r, 0, sizeof(*r));
    helper_process_init(&r->helper, ARGV_STUCK_MAX);
    r->proc_fd = -1;
}

static struct argv_request *at(const struct argv_reader *r, size_t i)
{
    return &r->queue[(r->head + i) % r->capacity];
}

static int enqueue(struct argv_reader *r, struct argv_request request)
{
    if (r->count == ARGV_QUEUE_MAX)
        return -1;
    if (r->count == r->capacity) {
        /* Grow the ring, keeping its order. */
        size_t capacity = r->capacity ? r->capacity * 2 : 64;
        struct argv_request *q = xreallocarray(NULL, capacity, sizeof(*q));
        for (size_t i = 0; i < r->count; i++)
            q[i] = *at(r, i);
        free(r->queue);
        r->queue = q;
        r->head = 0;
        r->capacity = capacity;
    }
    *at(r, r->count++) = request;
    return 0;
}

int argv_reader_request(struct argv_reader *r, pid_t pid, uint64_t start_time, uint32_t tag)
{
    return enqueue(r, (struct argv_request){.start_time = start_time, .pid = pid, .tag = tag,
                                            .kind = ARGV_CMDLINE});
}

int argv_reader_request_code(struct argv_reader *r, pid_t pid, uint64_t start_time, uint32_t tag)
{
    return enqueue(r, (struct argv_request){.start_time = start_time, .pid = pid, .tag = tag,
                                            .kind = ARGV_CODE});
}

int argv_reader_request_fds(struct argv_reader *r, pid_t pid, uint64_t start_time, uint32_t tag,
                            int from, uint32_t budget)
{
    return enqueue(r, (struct argv_request){.start_time = start_time, .pid = pid, .tag = tag,
                                            .kind = ARGV_SHM_FDS, .from = from,
                                            .budget = budget});
}

/* An empty queue that a burst grew (every process's command line at
 * start-up: 16,384 entries, 384 KiB) is not kept for the few asked later. */
static void release_queue(struct argv_reader *r)
{
    if (r->count || r->capacity <= 1024)
        return;
    free(r->queue);
    r->queue = NULL;
    r->head = r->capacity = 0;
}

static void head_starts(struct argv_reader *r)
{
    r->head_since = now_boottime_usec();
    r->head_check = r->head_since + r->stall_usec;
}

/* Whether the helper is runnable (state R): waiting for a CPU, or using
 * one, rather than asleep in a read that someone else holds up.  Its own
 * /proc entry, the real one whatever proc_root the reads use. */
static bool helper_runnable(const struct argv_reader *r)
{
    char name[40], buf[512];
    snprintf(name, sizeof(name), "%s/%d/stat", environment_host_proc, (int)r->helper.child.pid);
    int fd = open(name, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = procfs_pread(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    const char *end = strrchr(buf, ')');
    return end && end[1] == ' ' && end[2] == 'R';
}

/* Write what the helper has not been given yet, as far as its socket
 * takes it. */
static void send_queued(struct argv_reader *r)
{
    while (r->helper.sock >= 0 && r->sent < r->count) {
        if (send(r->helper.sock, at(r, r->sent), sizeof(struct argv_request), MSG_NOSIGNAL) < 0)
            return; /* full (EAGAIN), or the helper is gone: the next poll sees */
        if (r->sent++ == 0)
            head_starts(r);
    }
}

static void pop(struct argv_reader *r)
{
    r->head = (r->head + 1) % r->capacity;
    r->count--;
    if (r->sent)
        r->sent--;
    head_starts(r); /* the next one starts now */
}

enum unread { HEAD, HEAD_AND_ITS_TAG, ALL };

/* Answer requests without reading them: the oldest, the oldest and the
 * others of its tag, or all. */
static size_t answer_unread(struct argv_reader *r, enum argv_status status, enum unread which,
                            void (*fn)(const struct argv_answer *a, void *arg), void *arg)
{
    if (!r->count)
        return 0;
    uint32_t tag = at(r, 0)->tag;
    size_t n = 0, kept = 0, count = r->count;
    struct argv_request *rest = xreallocarray(NULL, count, sizeof(*rest));
    for (size_t i = 0; i < count; i++) {
        struct argv_request q = *at(r, i);
        if (i > 0 && (which == HEAD || (which == HEAD_AND_ITS_TAG && q.tag != tag))) {
            rest[kept++] = q;
            continue;
        }
        struct argv_answer a = {.kind = q.kind, .pid = q.pid, .start_time = q.start_time,
                                .tag = q.tag, .status = status, .argv = ""};
        fn(&a, arg);
        n++;
    }
    r->blocked += status == ARGV_BLOCKED ? n : 0;
    for (size_t i = 0; i < kept; i++)
        r->queue[i] = rest[i];
    free(rest);
    r->head = 0;
    r->count = kept;
    r->sent = 0;
    return n;
}

/* The helper stalled on the oldest request (ARGV_BLOCKED: it and the
 * others of its owner are not read), or died on it (ARGV_ERROR: so that
 * a request that kills helpers kills no more than one).  The rest go to
 * the next helper. */
static size_t drop_helper(struct argv_reader *r, enum argv_status status,
                          void (*fn)(const struct argv_answer *a, void *arg), void *arg)
{
    bool was_reading = r->sent > 0;
    helper_process_end(&r->helper);
    if (!was_reading)
        return 0;
    return answer_unread(r, status, status == ARGV_BLOCKED ? HEAD_AND_ITS_TAG : HEAD, fn, arg);
}

/* A new helper for the requests waiting; with ARGV_STUCK_MAX killed
 * ones still waiting on their reads, or none to be had, they are
 * answered ARGV_ERROR. */
static size_t new_helper(struct argv_reader *r,
                         void (*fn)(const struct argv_answer *a, void *arg), void *arg)
{
    r->restarts++;
    if (spawn(r) == 0)
        return 0;
    return answer_unread(r, ARGV_ERROR, ALL, fn, arg);
}

/* Take the answers waiting on the socket.  -1 when the helper is gone
 * (or said something it cannot have meant). */
static int take_answers(struct argv_reader *r, void (*fn)(const struct argv_answer *a, void *arg),
                        void *arg, size_t *taken)
{
    for (;;) {
        ssize_t n = recv(r->helper.sock, r->answer, sizeof(r->answer), 0);
        if (n < 0)
            return errno == EAGAIN || errno == EINTR ? 0 : -1;
        const struct wire_answer *w = (const struct wire_answer *)r->answer;
        if (n == 0 || (size_t)n < sizeof(*w) || !r->sent || w->len > ARGV_KEEP ||
            (size_t)n != sizeof(*w) + (w->status == ARGV_OK ? w->len : 0))
            return -1;
        struct argv_request q = *at(r, 0);
        pop(r);
        struct argv_answer a = {
            .kind = q.kind, .pid = q.pid, .start_time = q.start_time, .tag = q.tag, .status = w->status,
            .argv = r->answer + sizeof(*w), .len = w->len, .total = w->total, .cut = w->cut,
        };
        memcpy(a.sha256, w->sha256, sizeof(a.sha256));
        a.sha256[64] = '\0';
        fn(&a, arg);
        (*taken)++;
    }
}

size_t argv_reader_poll(struct argv_reader *r, uint64_t wait_usec,
                        void (*fn)(const struct argv_answer *a, void *arg), void *arg)
{
    size_t taken = 0;
    uint64_t until = now_boottime_usec() + wait_usec;
    bool started = false; /* one new helper a call at most, whatever becomes of it */
    helper_process_reap(&r->helper);
    for (;;) {
        if (r->helper.sock < 0 && r->count) {
            if (started)
                return taken;
            taken += new_helper(r, fn, arg);
            started = true;
            continue;
        }
        send_queued(r);
        if (r->helper.sock >= 0 && take_answers(r, fn, arg, &taken) < 0) {
            taken += drop_helper(r, ARGV_ERROR, fn, arg);
            continue;
        }
        if (!r->count) {
            release_queue(r);
            return taken;
        }
        uint64_t now = now_boottime_usec();
        if (r->sent && now >= r->head_check) {
            if (helper_runnable(r) && now < r->head_since + ARGV_RUNNABLE_MAX_USEC) {
                r->head_check = now + RECHECK_USEC;
                continue;
            }
            /* Asleep: but an answer sent just before it went back to
             * waiting for the next request is not a stall. */
            size_t before = taken;
            if (take_answers(r, fn, arg, &taken) < 0)
                taken += drop_helper(r, ARGV_ERROR, fn, arg);
            else if (taken == before)
                taken += drop_helper(r, ARGV_BLOCKED, fn, arg);
            continue;
        }
        if (now >= until) {
            send_queued(r); /* those the answers' callbacks asked for too */
            return taken;
        }
        uint64_t next = r->sent && r->head_check < until ? r->head_check : until;
        struct pollfd p = {.fd = r->helper.sock, .events = POLLIN};
        poll(&p, 1, (int)((next - now + 999) / 1000));
    }
}

int argv_reader_fd(const struct argv_reader *r)
{
    return r->helper.sock;
}

uint64_t argv_reader_deadline(const struct argv_reader *r)
{
    return r->count && r->sent ? r->head_check : 0;
}
