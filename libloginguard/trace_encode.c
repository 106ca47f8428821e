#include "config.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "trace_codec.h"
#include "trace_codec_parts.h"
#include "util.h"

/* ------------------------------------------------------------------ */
/* Writing */

static uint64_t fnv(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    return h;
}

static uint64_t fnv_str(uint64_t h, const char *s)
{
    /* NULL and "" apart. */
    return s ? fnv(h, s, strlen(s) + 1) : fnv(h, "\xff", 1);
}

static uint64_t proc_sig(const struct proc_sample *ps)
{
    uint64_t h = 14695981039346656037ull;
    h = fnv(h, &ps->uid, sizeof(ps->uid));
    h = fnv(h, &ps->ppid, sizeof(ps->ppid));
    h = fnv(h, &ps->session, sizeof(ps->session));
    h = fnv(h, ps->comm, strnlen(ps->comm, sizeof(ps->comm)));
    h = fnv_str(h, ps->exe);
    h = fnv(h, &ps->exe_trusted, sizeof(ps->exe_trusted));
    /* Not the command line's bytes, read only now and then (the digest
     * stands for them): a process is written with them once a segment. */
    h = fnv(h, &ps->argv_total, sizeof(ps->argv_total));
    h = fnv_str(h, ps->argv_sha256);
    h = fnv(h, &ps->class, sizeof(ps->class));
    return fnv_str(h, ps->rule);
}

static uint64_t user_sig(const struct user_sample *u)
{
    uint64_t h = fnv_str(14695981039346656037ull, u->name);
    h = fnv(h, &u->directory_pending, sizeof(u->directory_pending));
    return fnv(h, &u->exempt_group, sizeof(u->exempt_group));
}

static int64_t scaled_cpu(double cpu)
{
    if (!(cpu > 0))
        return 0;
    double v = cpu * CPU_SCALE;
    return v >= (double)CPU_MAX_SCALED ? CPU_MAX_SCALED : llround(v);
}

static uint64_t mem_units(uint64_t bytes)
{
    return bytes / MEM_UNIT + (bytes % MEM_UNIT >= MEM_UNIT / 2);
}

static void add_json_line(struct strbuf *out, json_t *j)
{
    char *text = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (text) {
        strbuf_adds(out, text);
        strbuf_addc(out, '\n');
    }
    free(text);
    json_decref(j);
}

void trace_encode_start(struct trace_encoder *e, struct strbuf *out, const char *host,
                        uint64_t start, const char *mode, uint64_t sample_interval)
{
    e->proc_count = 0;
    e->user_count = 0;
    e->next_id = 0;
    e->spent_count = 0;
    json_t *j = json_object();
    json_object_set_new(j, "t", json_string("trace"));
    json_object_set_new(j, "version", json_integer(TRACE_VERSION));
    json_object_set_new(j, "host", trace_json_bytes(host, strlen(host)));
    json_object_set_new(j, "start", json_integer((json_int_t)start));
    json_object_set_new(j, "mode", json_string(mode));
    json_object_set_new(j, "sample_interval", json_integer((json_int_t)sample_interval));
    add_json_line(out, j);
}

static void user_line(struct strbuf *out, const struct user_sample *u)
{
    json_t *j = json_object();
    json_object_set_new(j, "t", json_string("user"));
    json_object_set_new(j, "uid", json_integer(u->uid));
    json_object_set_new(j, "name", trace_json_bytes(u->name, strnlen(u->name, sizeof(u->name))));
    json_object_set_new(j, "exempt_group", json_boolean(u->exempt_group));
    if (u->directory_pending)
        json_object_set_new(j, "directory_pending", json_true());
    add_json_line(out, j);
}

static void proc_line(struct strbuf *out, uint32_t id, const struct proc_sample *ps)
{
    json_t *j = json_object();
    json_object_set_new(j, "t", json_string("proc"));
    json_object_set_new(j, "id", json_integer(id));
    json_object_set_new(j, "pid", json_integer(ps->pid));
    json_object_set_new(j, "start", json_integer((json_int_t)ps->start_time));
    json_object_set_new(j, "uid", json_integer(ps->uid));
    json_object_set_new(j, "ppid", json_integer(ps->ppid));
    json_object_set_new(j, "session", json_integer(ps->session));
    json_object_set_new(j, "comm", trace_json_bytes(ps->comm, strnlen(ps->comm, sizeof(ps->comm))));
    json_object_set_new(j, "exe", trace_json_bytes(ps->exe, ps->exe ? strlen(ps->exe) : 0));
    json_object_set_new(j, "exe_trusted", json_boolean(ps->exe_trusted));
    size_t argv_len = ps->argv_len < ARGV_KEEP ? ps->argv_len : ARGV_KEEP;
    json_object_set_new(j, "argv", trace_json_bytes(ps->argv, argv_len));
    json_object_set_new(j, "argv_total", json_integer((json_int_t)ps->argv_total));
    json_object_set_new(j, "argv_sha256", json_string(ps->argv_sha256));
    json_object_set_new(j, "class", json_string(class_name(ps->class)));
    json_object_set_new(j, "rule", ps->rule ? trace_json_bytes(ps->rule, strlen(ps->rule))
                                           : json_null());
    add_json_line(out, j);
}

static int cmp_identity(pid_t pa, uint64_t sa, pid_t pb, uint64_t sb)
{
    if (pa != pb)
        return pa < pb ? -1 : 1;
    return sa < sb ? -1 : sa > sb;
}

static int order_procs(const void *a, const void *b, void *arg)
{
    const struct snapshot *s = arg;
    const struct proc_sample *x = &s->procs[*(const size_t *)a];
    const struct proc_sample *y = &s->procs[*(const size_t *)b];
    return cmp_identity(x->pid, x->start_time, y->pid, y->start_time);
}

static int order_users(const void *a, const void *b, void *arg)
{
    const struct snapshot *s = arg;
    uid_t x = s->users[*(const size_t *)a].uid, y = s->users[*(const size_t *)b].uid;
    return x < y ? -1 : x > y;
}

static void sorted_order(struct trace_encoder *e, size_t n, const struct snapshot *snap,
                         int (*cmp)(const void *, const void *, void *))
{
    if (n + 1 > e->order_capacity) {
        e->order_capacity = n + 1;
        free(e->order);
        e->order = xmalloc(e->order_capacity * sizeof(*e->order));
    }
    for (size_t i = 0; i < n; i++)
        e->order[i] = i;
    qsort_r(e->order, n, sizeof(*e->order), cmp, (void *)snap);
}

/* Users new or changed since the last sample into items, those gone into
 * gone; e->users becomes this sample's. */
static void encode_users(struct trace_encoder *e, const struct snapshot *snap, struct strbuf *out,
                         struct strbuf *items, struct strbuf *gone)
{
    sorted_order(e, snap->user_count, snap, order_users);
    struct trace_enc_user *now = xmalloc((snap->user_count + 1) * sizeof(*now));
    size_t n = 0, old = 0;
    for (size_t k = 0; k < snap->user_count; k++) {
        const struct user_sample *u = &snap->users[e->order[k]];
        if (n && now[n - 1].uid == u->uid)
            continue; /* a uid twice: the first stands */
        while (old < e->user_count && e->users[old].uid < u->uid) {
            strbuf_addf(gone, "%s%u", gone->len ? "," : "", (unsigned)e->users[old].uid);
            old++;
        }
        const struct trace_enc_user *was =
            old < e->user_count && e->users[old].uid == u->uid ? &e->users[old++] : NULL;
        struct trace_enc_user *x = &now[n++];
        *x = (struct trace_enc_user){
            .uid = u->uid, .sig = user_sig(u), .cpu = scaled_cpu(u->cpu),
            .memory = mem_units(u->memory), .tasks = u->tasks,
            .flags = u->detailed ? TRACE_USER_DETAILED : 0,
        };
        if (!was || was->sig != x->sig)
            user_line(out, u);
        if (was && was->cpu == x->cpu && was->memory == x->memory && was->tasks == x->tasks &&
            was->flags == x->flags)
            continue;
        strbuf_addf(items, "%s[%u,%lld,%llu,%llu,%u]", items->len ? "," : "", (unsigned)x->uid,
                    (long long)x->cpu, (unsigned long long)x->memory,
                    (unsigned long long)x->tasks, x->flags);
    }
    for (; old < e->user_count; old++)
        strbuf_addf(gone, "%s%u", gone->len ? "," : "", (unsigned)e->users[old].uid);
    free(e->users);
    e->users = now;
    e->user_count = e->user_capacity = n;
}

static uint64_t *spent_of(struct trace_encoder *e, uid_t uid)
{
    size_t at;
    e->spent = uid_entry(e->spent, &e->spent_count, &e->spent_capacity, sizeof(*e->spent),
                         offsetof(struct trace_enc_spent, uid), uid, &at);
    return &e->spent[at].bytes;
}

/* Whether uid's processes have spent four budgets in this segment: from
 * then on they are left out of it. */
static bool spent_out(struct trace_encoder *e, uid_t uid)
{
    return e->user_budget && *spent_of(e, uid) >= 4 * e->user_budget;
}

/* A process leaves the segment: the reader forgets it. */
static void leave(struct strbuf *left, struct trace_enc_proc *x)
{
    strbuf_addf(left, "%s%u", left->len ? "," : "", x->id);
    x->omitted = true;
    x->argv_missing = false;
}

/* A process new to the segment: its proc line, within its user's budget.
 * False when it is left out. */
static bool write_proc(struct trace_encoder *e, struct strbuf *out, struct trace_enc_proc *x,
                       const struct proc_sample *ps)
{
    if (spent_out(e, ps->uid)) {
        x->omitted = true;
        x->argv_missing = false;
        return false;
    }
    uint64_t *spent = spent_of(e, ps->uid);
    size_t before = out->len;
    x->id = e->next_id++;
    if (e->user_budget && *spent >= e->user_budget && ps->argv) {
        struct proc_sample bare = *ps;
        bare.argv = NULL;
        bare.argv_len = 0;
        proc_line(out, x->id, &bare);
        x->argv_missing = false;
    } else {
        proc_line(out, x->id, ps);
    }
    *spent += out->len - before;
    return true;
}

static void encode_procs(struct trace_encoder *e, const struct snapshot *snap, struct strbuf *out,
                         struct strbuf *items, struct strbuf *left)
{
    sorted_order(e, snap->proc_count, snap, order_procs);
    struct trace_enc_proc *now = xmalloc((snap->proc_count + 1) * sizeof(*now));
    size_t n = 0, old = 0;
    for (size_t k = 0; k < snap->proc_count; k++) {
        const struct proc_sample *ps = &snap->procs[e->order[k]];
        if (n && now[n - 1].pid == ps->pid && now[n - 1].start_time == ps->start_time)
            continue;
        while (old < e->proc_count && cmp_identity(e->procs[old].pid, e->procs[old].start_time,
                                                   ps->pid, ps->start_time) < 0) {
            if (!e->procs[old].omitted)
                strbuf_addf(left, "%s%u", left->len ? "," : "", e->procs[old].id);
            old++;
        }
        const struct trace_enc_proc *was =
            old < e->proc_count && e->procs[old].pid == ps->pid &&
                    e->procs[old].start_time == ps->start_time
                ? &e->procs[old++]
                : NULL;
        struct trace_enc_proc *x = &now[n++];
        *x = (struct trace_enc_proc){
            .pid = ps->pid, .start_time = ps->start_time, .sig = proc_sig(ps),
            .cpu = scaled_cpu(ps->cpu), .rss = mem_units(ps->rss),
            .argv_missing = !ps->argv && ps->argv_sha256[0],
        };
        /* A command line not read in time when the process was written
         * comes as soon as it is: the rules may need it in the replay. */
        if (was && was->sig == x->sig && !(was->argv_missing && ps->argv)) {
            x->id = was->id;
            x->argv_missing = was->argv_missing;
            x->omitted = was->omitted;
            if (x->omitted || (was->cpu == x->cpu && was->rss == x->rss))
                continue;
            /* Each change written counts too: 2,000 busy processes of
             * one user would otherwise fill the segment sample by sample. */
            if (spent_out(e, ps->uid)) {
                leave(left, x);
                continue;
            }
        } else {
            /* An exec or a rename is a new process to the reader. */
            if (was && !was->omitted)
                strbuf_addf(left, "%s%u", left->len ? "," : "", was->id);
            if (!write_proc(e, out, x, ps))
                continue;
        }
        size_t before = items->len;
        strbuf_addf(items, "%s[%u,%lld,%llu]", items->len ? "," : "", x->id, (long long)x->cpu,
                    (unsigned long long)x->rss);
        if (e->user_budget)
            *spent_of(e, ps->uid) += items->len - before;
    }
    for (; old < e->proc_count; old++)
        if (!e->procs[old].omitted)
            strbuf_addf(left, "%s%u", left->len ? "," : "", e->procs[old].id);
    free(e->procs);
    e->procs = now;
    e->proc_count = e->proc_capacity = n;
}

void trace_encode_sample(struct trace_encoder *e, const struct snapshot *snap,
                         struct strbuf *out)
{
    struct strbuf users = {0}, gone = {0}, procs = {0}, left = {0};
    encode_users(e, snap, out, &users, &gone);
    encode_procs(e, snap, out, &procs, &left);
    strbuf_addf(out, SAMPLE_PREFIX "%llu,\"interval\":%llu", (unsigned long long)snap->now,
                (unsigned long long)snap->interval);
    if (snap->memory_pressure >= 0)
        strbuf_addf(out, ",\"pressure\":%.2f", snap->memory_pressure);
    strbuf_addf(out, ",\"users\":[%s],\"gone\":[%s],\"procs\":[%s],\"left\":[%s]}\n",
                users.len ? users.s : "", gone.len ? gone.s : "", procs.len ? procs.s : "",
                left.len ? left.s : "");
    strbuf_free(&users);
    strbuf_free(&gone);
    strbuf_free(&procs);
    strbuf_free(&left);
}

bool trace_encoder_knows(const struct trace_encoder *e, pid_t pid, uint64_t start_time)
{
    size_t lo = 0, hi = e->proc_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = cmp_identity(e->procs[mid].pid, e->procs[mid].start_time, pid, start_time);
        if (c == 0)
            return !e->procs[mid].argv_missing;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

void trace_encoder_free(struct trace_encoder *e)
{
    free(e->procs);
    free(e->users);
    free(e->order);
    free(e->spent);
    memset(e, 0, sizeof(*e));
}
