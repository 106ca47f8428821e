#include "config.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "trace_codec.h"
#include "trace_codec_parts.h"
#include "util.h"

/* ------------------------------------------------------------------ */
/* Reading */

static bool get_uint(const json_t *j, uint64_t max, uint64_t *out)
{
    if (!json_is_integer(j) || json_integer_value(j) < 0 ||
        (uint64_t)json_integer_value(j) > max)
        return false;
    *out = (uint64_t)json_integer_value(j);
    return true;
}

static bool field_uint(const json_t *o, const char *key, uint64_t max, uint64_t *out)
{
    return get_uint(json_object_get(o, key), max, out);
}

static struct trace_user *find_user(struct trace_decoder *d, uid_t uid, bool create)
{
    size_t at = uid_position(d->users, d->user_count, sizeof(*d->users),
                             offsetof(struct trace_user, uid), uid);
    if (at < d->user_count && d->users[at].uid == uid)
        return &d->users[at];
    if (!create)
        return NULL;
    d->users = insert_at(d->users, &d->user_count, &d->user_capacity, sizeof(*d->users), at);
    memset(&d->users[at], 0, sizeof(d->users[at]));
    d->users[at].uid = uid;
    return &d->users[at];
}

static void free_proc(struct trace_proc *p)
{
    if (!p)
        return;
    free(p->ps.exe);
    free(p->ps.argv);
    free(p->rule_name);
    free(p);
}

/* The slot of id: procs are kept by id, which only grows in a segment. */
static struct trace_proc **find_proc(struct trace_decoder *d, uint32_t id)
{
    size_t lo = 0, hi = d->proc_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (d->procs[mid]->id == id)
            return &d->procs[mid];
        if (d->procs[mid]->id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* The processes that left, freed. */
static void compact_procs(struct trace_decoder *d)
{
    size_t kept = 0;
    for (size_t i = 0; i < d->proc_count; i++) {
        if (d->procs[i]->left)
            free_proc(d->procs[i]);
        else
            d->procs[kept++] = d->procs[i];
    }
    d->proc_count = kept;
}

static void reset_segment(struct trace_decoder *d)
{
    for (size_t i = 0; i < d->proc_count; i++)
        free_proc(d->procs[i]);
    d->proc_count = 0;
    d->user_count = 0;
}

static int decode_header(struct trace_decoder *d, const json_t *j)
{
    uint64_t version, start, interval;
    const char *host = json_string_value(json_object_get(j, "host"));
    const char *mode = json_string_value(json_object_get(j, "mode"));
    if (!field_uint(j, "version", INT32_MAX, &version) || version != TRACE_VERSION ||
        !field_uint(j, "start", INT64_MAX, &start) ||
        !field_uint(j, "sample_interval", INT64_MAX, &interval))
        return -1;
    reset_segment(d);
    d->in_segment = true;
    d->segment_start = start;
    copy_string(d->host, sizeof(d->host), host ? host : "");
    copy_string(d->mode, sizeof(d->mode), mode ? mode : "");
    return 0;
}

static int decode_user(struct trace_decoder *d, const json_t *j)
{
    uint64_t uid;
    char *name;
    size_t len;
    if (!field_uint(j, "uid", UINT32_MAX - 1, &uid) ||
        trace_bytes_from_json(json_object_get(j, "name"), 63, &name, &len) < 0)
        return -1;
    struct trace_user *u = find_user(d, (uid_t)uid, true);
    copy_string(u->name, sizeof(u->name), name ? name : "");
    free(name);
    u->exempt_group = json_is_true(json_object_get(j, "exempt_group"));
    u->directory_pending = json_is_true(json_object_get(j, "directory_pending"));
    return 0;
}

static int decode_proc(struct trace_decoder *d, const json_t *j)
{
    uint64_t id, pid, start, uid, ppid, session, total = 0;
    if (!field_uint(j, "id", TRACE_MAX_IDS - 1, &id) || !field_uint(j, "pid", INT32_MAX, &pid) ||
        !field_uint(j, "start", INT64_MAX, &start) ||
        !field_uint(j, "uid", UINT32_MAX - 1, &uid) || !field_uint(j, "ppid", INT32_MAX, &ppid) ||
        !field_uint(j, "session", INT32_MAX, &session))
        return -1;
    /* Ids only grow: anything else is not the daemon's. */
    if (d->proc_count && d->procs[d->proc_count - 1]->id >= id)
        return -1;
    json_t *argv_total = json_object_get(j, "argv_total");
    if (argv_total && !get_uint(argv_total, INT64_MAX, &total))
        return -1;
    struct trace_proc *p = xcalloc(1, sizeof(*p));
    char *comm = NULL, *rule = NULL;
    size_t len, exe_len;
    const char *sha = json_string_value(json_object_get(j, "argv_sha256"));
    const char *cls = json_string_value(json_object_get(j, "class"));
    int rc = trace_bytes_from_json(json_object_get(j, "comm"), COMM_LEN - 1, &comm, &len);
    rc |= trace_bytes_from_json(json_object_get(j, "exe"), EXE_MAX, &p->ps.exe, &exe_len);
    rc |= trace_bytes_from_json(json_object_get(j, "argv"), ARGV_KEEP, &p->ps.argv, &p->ps.argv_len);
    rc |= trace_bytes_from_json(json_object_get(j, "rule"), 4096, &rule, &len);
    if (rc < 0 || (sha && strlen(sha) >= sizeof(p->ps.argv_sha256))) {
        free(comm);
        free(rule);
        free_proc(p);
        return -1;
    }
    p->id = (uint32_t)id;
    p->ps.pid = (pid_t)pid;
    p->ps.start_time = start;
    p->ps.uid = (uid_t)uid;
    p->ps.ppid = (pid_t)ppid;
    p->ps.session = (pid_t)session;
    copy_string(p->ps.comm, sizeof(p->ps.comm), comm ? comm : "");
    free(comm);
    p->ps.exe_trusted = json_is_true(json_object_get(j, "exe_trusted"));
    p->ps.argv_total = total > p->ps.argv_len ? total : p->ps.argv_len;
    copy_string(p->ps.argv_sha256, sizeof(p->ps.argv_sha256), sha ? sha : "");
    p->ps.class = CLASS_NONE;
    for (enum proc_class c = CLASS_NONE; c <= CLASS_FORBIDDEN; c++)
        if (cls && strcmp(cls, class_name(c)) == 0)
            p->ps.class = c;
    p->rule_name = rule;
    p->ps.rule = rule;
    d->procs = grow_array(d->procs, d->proc_count, &d->proc_capacity, sizeof(*d->procs));
    d->procs[d->proc_count++] = p;
    return 0;
}

/* The changes of a sample line applied; -1 (nothing applied) if any part
 * is not understood. */
static int check_sample(const json_t *users, const json_t *gone, const json_t *procs,
                        const json_t *left)
{
    if (!json_is_array(users) || !json_is_array(gone) || !json_is_array(procs) ||
        !json_is_array(left))
        return -1;
    size_t i;
    const json_t *x;
    uint64_t v;
    json_array_foreach(users, i, x) {
        if (json_array_size(x) != 5 || !get_uint(json_array_get(x, 0), UINT32_MAX - 1, &v) ||
            !get_uint(json_array_get(x, 1), CPU_MAX_SCALED, &v) ||
            !get_uint(json_array_get(x, 2), UINT64_MAX / MEM_UNIT, &v) ||
            !get_uint(json_array_get(x, 3), INT64_MAX, &v) ||
            !get_uint(json_array_get(x, 4), 255, &v))
            return -1;
    }
    json_array_foreach(procs, i, x) {
        if (json_array_size(x) != 3 || !get_uint(json_array_get(x, 0), TRACE_MAX_IDS, &v) ||
            !get_uint(json_array_get(x, 1), CPU_MAX_SCALED, &v) ||
            !get_uint(json_array_get(x, 2), UINT64_MAX / MEM_UNIT, &v))
            return -1;
    }
    json_array_foreach(gone, i, x) if (!get_uint(x, UINT32_MAX - 1, &v)) return -1;
    json_array_foreach(left, i, x) if (!get_uint(x, TRACE_MAX_IDS, &v)) return -1;
    return 0;
}

static void apply_sample(struct trace_decoder *d, const json_t *users, const json_t *gone,
                         const json_t *procs, const json_t *left)
{
    size_t i;
    const json_t *x;
    json_array_foreach(users, i, x) {
        struct trace_user *u = find_user(d, (uid_t)json_integer_value(json_array_get(x, 0)), true);
        u->present = true;
        u->cpu = json_integer_value(json_array_get(x, 1));
        u->memory = (uint64_t)json_integer_value(json_array_get(x, 2));
        u->tasks = (uint64_t)json_integer_value(json_array_get(x, 3));
        u->flags = (unsigned)json_integer_value(json_array_get(x, 4));
    }
    json_array_foreach(gone, i, x) {
        struct trace_user *u = find_user(d, (uid_t)json_integer_value(x), false);
        if (u)
            u->present = false;
    }
    size_t dead = 0;
    json_array_foreach(left, i, x) {
        struct trace_proc **slot = find_proc(d, (uint32_t)json_integer_value(x));
        if (slot && !(*slot)->left) {
            (*slot)->left = true;
            dead++;
        }
    }
    if (dead)
        compact_procs(d);
    json_array_foreach(procs, i, x) {
        struct trace_proc **slot = find_proc(d, (uint32_t)json_integer_value(json_array_get(x, 0)));
        if (!slot)
            continue; /* its proc line was lost: nothing to say what it runs */
        (*slot)->present = true;
        (*slot)->cpu = json_integer_value(json_array_get(x, 1));
        (*slot)->rss = (uint64_t)json_integer_value(json_array_get(x, 2));
    }
}

static void fill_snapshot(struct trace_decoder *d, struct snapshot *snap)
{
    trace_snapshot_reset(snap);
    for (size_t i = 0; i < d->user_count; i++) {
        const struct trace_user *t = &d->users[i];
        if (!t->present)
            continue;
        struct user_sample *u = snapshot_add_user(snap, t->uid);
        copy_string(u->name, sizeof(u->name), t->name);
        u->exempt_group = t->exempt_group;
        u->directory_pending = t->directory_pending;
        u->cpu = (double)t->cpu / CPU_SCALE;
        u->memory = t->memory * MEM_UNIT;
        u->tasks = t->tasks;
        u->detailed = t->flags & TRACE_USER_DETAILED;
    }
    if (d->proc_count + 1 > d->snap_capacity) {
        d->snap_capacity = d->proc_count + 1;
        free(d->snap_procs);
        d->snap_procs = xmalloc(d->snap_capacity * sizeof(*d->snap_procs));
    }
    for (size_t i = 0; i < d->proc_count; i++) {
        struct trace_proc *p = d->procs[i];
        if (!p->present)
            continue;
        d->snap_procs[snap->proc_count] = p;
        struct proc_sample *ps = snapshot_add_proc(snap);
        *ps = p->ps;
        ps->cpu = (double)p->cpu / CPU_SCALE;
        ps->rss = p->rss * MEM_UNIT;
    }
}

static int decode_sample(struct trace_decoder *d, const json_t *j, struct snapshot *snap)
{
    uint64_t now, interval;
    const json_t *pressure = json_object_get(j, "pressure");
    const json_t *users = json_object_get(j, "users"), *gone = json_object_get(j, "gone");
    const json_t *procs = json_object_get(j, "procs"), *left = json_object_get(j, "left");
    if (!d->in_segment || !field_uint(j, "now", INT64_MAX, &now) ||
        !field_uint(j, "interval", INT64_MAX, &interval) || interval == 0 ||
        (pressure && !json_is_number(pressure)) || check_sample(users, gone, procs, left) < 0)
        return -1;
    apply_sample(d, users, gone, procs, left);
    fill_snapshot(d, snap);
    snap->now = now;
    snap->interval = interval;
    snap->memory_pressure = pressure ? json_number_value(pressure) : -1;
    d->samples++;
    return 1;
}

int trace_decode_line(struct trace_decoder *d, const char *line, size_t len,
                      struct snapshot *snap)
{
    /* NUL allowed: it separates a command line's arguments. */
    json_t *j = len <= TRACE_LINE_MAX
                    ? json_loadb(line, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, NULL)
                    : NULL;
    const char *t = json_string_value(json_object_get(j, "t"));
    int rc = -1;
    if (t && strcmp(t, "sample") == 0)
        rc = decode_sample(d, j, snap);
    else if (t && strcmp(t, "trace") == 0)
        rc = decode_header(d, j);
    else if (t && strcmp(t, "user") == 0 && d->in_segment)
        rc = decode_user(d, j);
    else if (t && strcmp(t, "proc") == 0 && d->in_segment)
        rc = decode_proc(d, j);
    json_decref(j);
    if (rc < 0)
        d->skipped++;
    return rc;
}

void trace_snapshot_reset(struct snapshot *snap)
{
    snap->proc_count = 0;
    snap->user_count = 0;
}

void trace_snapshot_free(struct snapshot *snap)
{
    free(snap->procs);
    free(snap->users);
    memset(snap, 0, sizeof(*snap));
}

void trace_decoder_free(struct trace_decoder *d)
{
    reset_segment(d);
    free(d->procs);
    free(d->users);
    free(d->snap_procs);
    memset(d, 0, sizeof(*d));
}
