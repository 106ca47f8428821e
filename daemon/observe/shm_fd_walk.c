#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "observe/shm_fd_walk.h"
#include "util.h"

void fd_walk_init(struct fd_walk *w)
{
    memset(w, 0, sizeof(*w));
}

static void reset_walk(struct fd_walk_owner *o)
{
    o->pid = 0;
    o->start_time = 0;
    o->fd = 0;
    o->bytes = 0;
    free(o->seen);
    o->seen = NULL;
    o->seen_count = o->seen_capacity = 0;
}

void fd_walk_free(struct fd_walk *w)
{
    for (size_t i = 0; i < w->count; i++)
        reset_walk(&w->owners[i]);
    free(w->owners);
    free(w->procs);
    memset(w, 0, sizeof(*w));
}

static struct fd_walk_owner *find(const struct fd_walk *w, uid_t uid)
{
    size_t at = uid_position(w->owners, w->count, sizeof(*w->owners),
                             offsetof(struct fd_walk_owner, uid), uid);
    return at < w->count && w->owners[at].uid == uid ? &w->owners[at] : NULL;
}

static int by_owner_and_pid(const void *a, const void *b)
{
    const struct fd_walk_proc *x = a, *y = b;
    if (x->owner != y->owner)
        return x->owner < y->owner ? -1 : 1;
    return (x->pid > y->pid) - (x->pid < y->pid);
}

/* Owners with no process left whose last walk said 0 and who wait for
 * no answer have nothing more to say. */
static void forget_idle(struct fd_walk *w)
{
    size_t kept = 0;
    for (size_t i = 0; i < w->count; i++) {
        struct fd_walk_owner *o = &w->owners[i];
        if (o->procs == 0 && !o->out && o->last == 0 && o->pid == 0 && o->bytes == 0) {
            reset_walk(o);
            continue;
        }
        w->owners[kept++] = *o;
    }
    w->count = kept;
}

void fd_walk_begin(struct fd_walk *w, const struct fd_walk_proc *procs, size_t n)
{
    if (n > w->proc_capacity) {
        free(w->procs);
        w->procs = xreallocarray(NULL, n, sizeof(*w->procs));
        w->proc_capacity = n;
    }
    if (n) { /* (neither takes a null array, even empty) */
        memcpy(w->procs, procs, n * sizeof(*procs));
        qsort(w->procs, n, sizeof(*w->procs), by_owner_and_pid);
    }
    w->proc_count = n;
    for (size_t i = 0; i < w->count; i++) {
        struct fd_walk_owner *o = &w->owners[i];
        o->first = o->procs = 0;
        o->finished = false;
        o->looked = o->requests = 0;
    }
    for (size_t i = 0; i < n;) {
        size_t at, end = i;
        while (end < n && w->procs[end].owner == w->procs[i].owner)
            end++;
        w->owners = uid_entry(w->owners, &w->count, &w->capacity, sizeof(*w->owners),
                              offsetof(struct fd_walk_owner, uid), w->procs[i].owner, &at);
        w->owners[at].first = i;
        w->owners[at].procs = end - i;
        i = end;
    }
    forget_idle(w);
}

const struct fd_walk_proc *fd_walk_procs_of(const struct fd_walk *w, uid_t owner, size_t *n)
{
    const struct fd_walk_owner *o = find(w, owner);
    *n = o ? o->procs : 0;
    return o ? &w->procs[o->first] : NULL;
}

/* The owner's first process in the list at or after where the walk
 * stands; NULL when the walk is through. */
static const struct fd_walk_proc *next_proc(const struct fd_walk *w,
                                            const struct fd_walk_owner *o)
{
    size_t lo = o->first, hi = o->first + o->procs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (w->procs[mid].pid < o->pid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < o->first + o->procs ? &w->procs[lo] : NULL;
}

enum fd_walk_step fd_walk_next(struct fd_walk *w, uid_t owner, struct fd_walk_request *q,
                               uint64_t *bytes)
{
    struct fd_walk_owner *o = find(w, owner);
    if (!o || o->out || o->finished || o->looked >= FD_WALK_BUDGET ||
        o->requests >= FD_WALK_REQUESTS)
        return FD_WALK_WAIT;
    const struct fd_walk_proc *p = next_proc(w, o);
    if (!p) {
        *bytes = o->last = o->bytes;
        o->finished = true; /* the next walk starts at the next sweep */
        reset_walk(o);
        return FD_WALK_DONE;
    }
    /* The process the walk stopped in goes on from where it stopped;
     * another (a later pid, or the pid of a new process) from the start. */
    if (p->pid != o->pid || p->start_time != o->start_time)
        o->fd = 0;
    o->pid = p->pid;
    o->start_time = p->start_time;
    uint32_t left = FD_WALK_BUDGET - o->looked;
    *q = (struct fd_walk_request){
        .pid = p->pid, .start_time = p->start_time, .from = o->fd,
        .budget = left < FD_WALK_REQUEST ? left : FD_WALK_REQUEST,
    };
    return FD_WALK_ASK;
}

void fd_walk_sent(struct fd_walk *w, uid_t owner)
{
    struct fd_walk_owner *o = find(w, owner);
    if (o) {
        o->out = true;
        o->requests++;
    }
}

static int compare_key(const struct fd_walk_key *a, const struct fd_walk_key *b)
{
    if (a->dev != b->dev)
        return a->dev < b->dev ? -1 : 1;
    return (a->ino > b->ino) - (a->ino < b->ino);
}

/* Whether the walk has seen the object; remembered now if not (while
 * there is room). */
static bool seen_before(struct fd_walk_owner *o, struct fd_walk_key key)
{
    size_t lo = 0, hi = o->seen_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = compare_key(&o->seen[mid], &key);
        if (c == 0)
            return true;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (o->seen_count < FD_WALK_OBJECTS) {
        o->seen = grow_array(o->seen, o->seen_count, &o->seen_capacity, sizeof(*o->seen));
        memmove(&o->seen[lo + 1], &o->seen[lo], (o->seen_count - lo) * sizeof(*o->seen));
        o->seen[lo] = key;
        o->seen_count++;
    }
    return false;
}

/* What one answer found.  False when it says the process has no more. */
static bool add_reply(struct fd_walk_owner *o, const struct argv_answer *a)
{
    struct shm_fds_reply r;
    size_t head = SHM_FDS_REPLY_SIZE(0);
    if (a->len < head || a->len > sizeof(r))
        return false;
    memcpy(&r, a->argv, a->len);
    if (r.count > SHM_FDS_OBJECTS || a->len != SHM_FDS_REPLY_SIZE(r.count))
        return false;
    for (uint32_t i = 0; i < r.count; i++) {
        const struct shm_fd_object *ob = &r.objects[i];
        if (!seen_before(o, (struct fd_walk_key){ob->dev, ob->ino}))
            o->bytes += ob->bytes;
    }
    o->looked += r.looked < FD_WALK_REQUEST ? r.looked : FD_WALK_REQUEST;
    /* Going on in the same process only where the answer got further. */
    if (r.next_fd < 0 || (r.looked == 0 && r.next_fd <= o->fd))
        return false;
    o->fd = r.next_fd;
    return true;
}

void fd_walk_take(struct fd_walk *w, const struct argv_answer *a)
{
    struct fd_walk_owner *o = find(w, (uid_t)a->tag);
    if (!o || !o->out || a->pid != o->pid || a->start_time != o->start_time)
        return;
    o->out = false;
    /* Not read (no helper could take it): asked again at the next sweep,
     * the walk waiting where it stands rather than ending without it. */
    if (a->status == ARGV_ERROR) {
        o->looked = FD_WALK_BUDGET;
        return;
    }
    if (a->status == ARGV_OK && add_reply(o, a))
        return;
    /* Gone, or not read in time (a stall: the caller asks no more of its
     * owner while it lives): on to the next process. */
    o->pid++;
    o->start_time = 0;
    o->fd = 0;
}
