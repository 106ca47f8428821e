#include "config.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "trace_codec.h"
#include "utf8.h"
#include "util.h"

#define SAMPLE_PREFIX "{\"t\":\"sample\",\"now\":"
/* Cores in thousandths, bytes in MiB: finer than any threshold is set,
 * coarse enough that an idle user's figures stay the same from one
 * sample to the next and cost nothing. */
#define CPU_SCALE 1000.0
#define MEM_UNIT (1u << 20)
#define CPU_MAX_SCALED ((int64_t)1 << 40) /* a billion cores: nothing real */
#define EXE_MAX 4096 /* bytes of an executable's path (the daemon keeps 512) */

/* ------------------------------------------------------------------ */
/* Bytes as JSON, both ways */

static bool is_utf8(const char *s, size_t len)
{
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < len;) {
        size_t n = u[i] ? utf8_sequence(u + i, len - i) : 1;
        if (n == 0)
            return false;
        i += n;
    }
    return true;
}

static json_t *json_bytes(const char *s, size_t len)
{
    if (!s)
        return json_null();
    if (is_utf8(s, len)) {
        json_t *j = json_stringn(s, len);
        if (j)
            return j;
    }
    static const char digits[] = "0123456789abcdef";
    char *hex = xmalloc(2 * len + 1);
    for (size_t i = 0; i < len; i++) {
        hex[2 * i] = digits[(unsigned char)s[i] >> 4];
        hex[2 * i + 1] = digits[(unsigned char)s[i] & 15];
    }
    json_t *j = json_pack("{s:s#}", "hex", hex, (int)(2 * len));
    free(hex);
    return j;
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/* The bytes of j (a string, or {"hex":...}) into a new NUL-terminated
 * buffer, at most max of them; NULL for null; -1 for anything else. */
static int bytes_from_json(const json_t *j, size_t max, char **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    if (!j || json_is_null(j))
        return 0;
    if (json_is_string(j)) {
        size_t n = json_string_length(j);
        if (n > max)
            return -1;
        *out = xmalloc(n + 1);
        memcpy(*out, json_string_value(j), n);
        (*out)[n] = '\0';
        *len = n;
        return 0;
    }
    const json_t *h = json_object_get(j, "hex");
    if (!json_is_string(h) || json_object_size(j) != 1)
        return -1;
    size_t n = json_string_length(h);
    const char *s = json_string_value(h);
    if (n % 2 || n / 2 > max)
        return -1;
    char *b = xmalloc(n / 2 + 1);
    for (size_t i = 0; i < n / 2; i++) {
        int hi = hex_value(s[2 * i]), lo = hex_value(s[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            free(b);
            return -1;
        }
        b[i] = (char)(hi << 4 | lo);
    }
    b[n / 2] = '\0';
    *out = b;
    *len = n / 2;
    return 0;
}

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
    json_object_set_new(j, "host", json_bytes(host, strlen(host)));
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
    json_object_set_new(j, "name", json_bytes(u->name, strnlen(u->name, sizeof(u->name))));
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
    json_object_set_new(j, "comm", json_bytes(ps->comm, strnlen(ps->comm, sizeof(ps->comm))));
    json_object_set_new(j, "exe", json_bytes(ps->exe, ps->exe ? strlen(ps->exe) : 0));
    json_object_set_new(j, "exe_trusted", json_boolean(ps->exe_trusted));
    size_t argv_len = ps->argv_len < ARGV_KEEP ? ps->argv_len : ARGV_KEEP;
    json_object_set_new(j, "argv", json_bytes(ps->argv, argv_len));
    json_object_set_new(j, "argv_total", json_integer((json_int_t)ps->argv_total));
    json_object_set_new(j, "argv_sha256", json_string(ps->argv_sha256));
    json_object_set_new(j, "class", json_string(class_name(ps->class)));
    json_object_set_new(j, "rule", ps->rule ? json_bytes(ps->rule, strlen(ps->rule))
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
        bytes_from_json(json_object_get(j, "name"), 63, &name, &len) < 0)
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
    int rc = bytes_from_json(json_object_get(j, "comm"), COMM_LEN - 1, &comm, &len);
    rc |= bytes_from_json(json_object_get(j, "exe"), EXE_MAX, &p->ps.exe, &exe_len);
    rc |= bytes_from_json(json_object_get(j, "argv"), ARGV_KEEP, &p->ps.argv, &p->ps.argv_len);
    rc |= bytes_from_json(json_object_get(j, "rule"), 4096, &rule, &len);
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

uint64_t trace_line_time(const char *line, size_t len)
{
    size_t n = sizeof(SAMPLE_PREFIX) - 1;
    if (len <= n || memcmp(line, SAMPLE_PREFIX, n) != 0)
        return 0;
    uint64_t t = 0;
    for (size_t i = n; i < len && line[i] >= '0' && line[i] <= '9'; i++) {
        if (t > (UINT64_MAX - 9) / 10)
            return 0;
        t = t * 10 + (uint64_t)(line[i] - '0');
    }
    return t;
}
