#include "config.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/helper_process.h"
#include "observe/directory.h"
#include "util.h"

/* What goes over the socket, one datagram each (SOCK_SEQPACKET). */
enum wire_kind {
    WIRE_UID,       /* who is this uid */
    WIRE_NAME,      /* who has this name */
    WIRE_GROUPS,    /* the groups to check uids against, NUL-separated after the request */
};

struct directory_request {
    uint32_t kind;
    uint32_t generation;
    uint32_t uid;
    char name[64];
};

struct wire_answer {
    uint32_t kind;
    uint32_t generation;
    uint32_t uid;
    uint32_t found;
    char asked[64];                            /* the name asked (WIRE_NAME) */
    char name[64];
    uint8_t member[DIRECTORY_GROUPS_MAX];      /* in groups[i] */
};

#define GROUPS_WIRE_MAX (sizeof(struct directory_request) + DIRECTORY_GROUPS_MAX * 64)

/* ---- the helper ---- */

struct helper_groups {
    char names[DIRECTORY_GROUPS_MAX][64];
    size_t count;
};

static void take_groups(struct helper_groups *g, const char *buf, size_t len)
{
    g->count = 0;
    size_t at = sizeof(struct directory_request);
    while (at < len && g->count < DIRECTORY_GROUPS_MAX) {
        size_t n = strnlen(buf + at, len - at);
        copy_string(g->names[g->count++], 64, buf + at);
        at += n + 1;
    }
}

/* Which of the groups the user pw is in (its primary group included). */
static void fill_membership(const struct helper_groups *g, const struct passwd *pw,
                            struct wire_answer *a)
{
    if (g->count == 0)
        return;
    int n = 64;
    gid_t *gids = xmalloc(sizeof(gid_t) * (size_t)n);
    if (getgrouplist(pw->pw_name, pw->pw_gid, gids, &n) < 0) {
        gids = xreallocarray(gids, (size_t)n, sizeof(gid_t));
        if (getgrouplist(pw->pw_name, pw->pw_gid, gids, &n) < 0)
            n = 0;
    }
    for (size_t i = 0; i < g->count; i++) {
        char buf[4096];
        struct group gr, *res = NULL;
        if (!g->names[i][0] || getgrnam_r(g->names[i], &gr, buf, sizeof(buf), &res) != 0 || !res)
            continue;
        for (int k = 0; k < n && !a->member[i]; k++)
            a->member[i] = gids[k] == res->gr_gid;
    }
    free(gids);
}

static void look_up(const struct helper_groups *g, const struct directory_request *q,
                    struct wire_answer *a)
{
    char buf[4096];
    struct passwd pw, *res = NULL;
    memset(a, 0, sizeof(*a));
    a->kind = q->kind;
    a->generation = q->generation;
    a->uid = q->uid;
    copy_string(a->asked, sizeof(a->asked), q->name);
    int rc = q->kind == WIRE_NAME ? getpwnam_r(q->name, &pw, buf, sizeof(buf), &res)
                                  : getpwuid_r(q->uid, &pw, buf, sizeof(buf), &res);
    if (rc != 0 || !res)
        return;
    a->found = 1;
    a->uid = res->pw_uid;
    copy_string(a->name, sizeof(a->name), res->pw_name);
    fill_membership(g, res, a);
}

/* The helper, its socket as 3: asked, it answers, until the daemon
 * closes its end. */
static void serve(void *arg)
{
    (void)arg;
    static struct helper_groups groups;
    static char in[GROUPS_WIRE_MAX];
    struct wire_answer a;
    ssize_t n;
    while ((n = recv(3, in, sizeof(in), 0)) >= (ssize_t)sizeof(struct directory_request)) {
        struct directory_request q;
        memcpy(&q, in, sizeof(q));
        q.name[sizeof(q.name) - 1] = '\0';
        if (q.kind == WIRE_GROUPS) {
            take_groups(&groups, in, (size_t)n);
            continue;
        }
        look_up(&groups, &q, &a);
        if (send(3, &a, sizeof(a), MSG_NOSIGNAL) < 0)
            break;
    }
}

/* ---- the daemon's side ---- */

static void send_groups(struct directory *d)
{
    char buf[GROUPS_WIRE_MAX];
    struct directory_request q = {.kind = WIRE_GROUPS, .generation = d->generation};
    memcpy(buf, &q, sizeof(q));
    size_t len = sizeof(q);
    for (size_t i = 0; i < d->group_count; i++) {
        size_t n = strlen(d->groups[i]) + 1;
        memcpy(buf + len, d->groups[i], n);
        len += n;
    }
    if (send(d->helper.sock, buf, len, MSG_NOSIGNAL) < 0)
        helper_process_end(&d->helper); /* a fresh socket has room: the helper is gone */
}

static int spawn(struct directory *d)
{
    if (helper_process_start(&d->helper, "loginguard-nss", NULL, 0, serve, NULL) < 0)
        return -1;
    send_groups(d);
    return d->helper.sock >= 0 ? 0 : -1;
}

int directory_start(struct directory *d, char *err, size_t err_len)
{
    memset(d, 0, sizeof(*d));
    helper_process_init(&d->helper, DIRECTORY_STUCK_MAX);
    d->stall_usec = DIRECTORY_STALL_USEC;
    if (spawn(d) < 0) {
        snprintf(err, err_len, "cannot start the user directory helper: %s", strerror(errno));
        return -1;
    }
    return 0;
}

static void forget_answers(struct directory *d)
{
    free(d->users);
    d->users = NULL;
    d->count = d->capacity = 0;
    d->name_count = 0;
    /* The lookups out stay: the helper answers them, in order. */
}

void directory_stop(struct directory *d)
{
    helper_process_stop(&d->helper);
    for (size_t i = 0; i < d->group_count; i++)
        free(d->groups[i]);
    forget_answers(d);
    free(d->out);
    memset(d, 0, sizeof(*d));
    helper_process_init(&d->helper, DIRECTORY_STUCK_MAX);
}

void directory_set_policy(struct directory *d, const struct policy *p)
{
    for (size_t i = 0; i < d->group_count; i++)
        free(d->groups[i]);
    d->group_count = 0;
    for (size_t i = 0; i < p->exempt_groups.count && i < MAX_NAMES; i++)
        d->groups[d->group_count++] = xstrdup(p->exempt_groups.names[i]);
    d->exempt_count = d->group_count;
    d->has_admin_group = p->admin_group && p->admin_group[0];
    if (d->has_admin_group)
        d->groups[d->group_count++] = xstrdup(p->admin_group);
    /* Answers out now were for the old groups: dropped when they come. */
    d->generation++;
    forget_answers(d);
    if (d->helper.sock >= 0)
        send_groups(d);
}

/* ---- asking ---- */

static struct directory_request *out_at(const struct directory *d, size_t i)
{
    return &d->out[(d->out_head + i) % d->out_capacity];
}

/* Send a lookup; false when DIRECTORY_QUEUE_MAX are out already. */
static bool ask(struct directory *d, struct directory_request q)
{
    if (d->out_count == DIRECTORY_QUEUE_MAX || d->helper.sock < 0)
        return false;
    if (d->out_count == d->out_capacity) {
        size_t capacity = d->out_capacity ? d->out_capacity * 2 : 64;
        struct directory_request *out = xreallocarray(NULL, capacity, sizeof(*out));
        for (size_t i = 0; i < d->out_count; i++)
            out[i] = *out_at(d, i);
        free(d->out);
        d->out = out;
        d->out_head = 0;
        d->out_capacity = capacity;
    }
    q.generation = d->generation;
    /* A full socket (thousands out) drops this one: asked again at its
     * refresh.  A gone helper is seen by the next poll. */
    if (send(d->helper.sock, &q, sizeof(q), MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
        return false;
    if (d->out_count == 0)
        d->head_since = now_boottime_usec();
    *out_at(d, d->out_count++) = q;
    d->lookups++;
    return true;
}

static struct user_info *find_user(struct directory *d, uid_t uid, bool add)
{
    size_t at = uid_position(d->users, d->count, sizeof(*d->users),
                             offsetof(struct user_info, uid), uid);
    if (at < d->count && d->users[at].uid == uid)
        return &d->users[at];
    if (!add)
        return NULL;
    d->users = insert_at(d->users, &d->count, &d->capacity, sizeof(*d->users), at);
    memset(&d->users[at], 0, sizeof(d->users[at]));
    d->users[at].uid = uid;
    return &d->users[at];
}

static void ask_uid(struct directory *d, struct user_info *u)
{
    if (!u->asked)
        u->asked = ask(d, (struct directory_request){.kind = WIRE_UID, .uid = u->uid});
}

const struct user_info *directory_user(struct directory *d, uid_t uid)
{
    struct user_info *u = find_user(d, uid, true);
    if (!u->answered)
        ask_uid(d, u);
    return u;
}

struct user_sample directory_sample(struct directory *d, uid_t uid)
{
    const struct user_info *info = directory_user(d, uid);
    struct user_sample u = {.uid = uid, .exempt_group = info->exempt_group,
                            .directory_pending = !info->answered};
    copy_string(u.name, sizeof(u.name), info->name);
    return u;
}

const char *directory_name_of(struct directory *d, uid_t uid)
{
    return directory_user(d, uid)->name;
}

int directory_admin(struct directory *d, uid_t uid, bool subordinate)
{
    if (uid == 0)
        return 1;
    if (subordinate || !d->has_admin_group)
        return 0;
    struct user_info *u = find_user(d, uid, true);
    if (u->answered && now_boottime_usec() - u->answered_at < DIRECTORY_ADMIN_USEC)
        return u->admin;
    ask_uid(d, u);
    return -1;
}

int directory_uid_of(struct directory *d, const char *name, uid_t *uid)
{
    struct directory_name *n = NULL;
    for (size_t i = 0; i < d->name_count && !n; i++)
        if (strcmp(d->names[i].name, name) == 0)
            n = &d->names[i];
    uint64_t now = now_boottime_usec();
    if (n && n->answered && now - n->answered_at < DIRECTORY_ADMIN_USEC) {
        *uid = n->uid;
        return n->found;
    }
    if (!n) {
        /* A free slot, else the oldest answer's (an admin's questions). */
        n = &d->names[d->name_count < DIRECTORY_NAMES_MAX ? d->name_count++ : 0];
        for (size_t i = 0; i < d->name_count; i++)
            if (!d->names[i].asked && d->names[i].answered_at < n->answered_at)
                n = &d->names[i];
        memset(n, 0, sizeof(*n));
        copy_string(n->name, sizeof(n->name), name);
    }
    if (!n->asked) {
        struct directory_request q = {.kind = WIRE_NAME};
        copy_string(q.name, sizeof(q.name), name);
        n->asked = ask(d, q);
    }
    return -1;
}

void directory_refresh(struct directory *d)
{
    uint64_t now = now_boottime_usec();
    size_t start = uid_position(d->users, d->count, sizeof(*d->users),
                                offsetof(struct user_info, uid), d->refreshed + 1);
    size_t asked = 0;
    for (size_t k = 0; k < d->count && asked < DIRECTORY_REFRESH_MAX; k++) {
        struct user_info *u = &d->users[(start + k) % d->count];
        bool due = !u->answered || !u->name[0] || now - u->answered_at >= DIRECTORY_REFRESH_USEC;
        if (u->asked || !due)
            continue;
        ask_uid(d, u);
        if (!u->asked)
            return; /* no room: the next sweep goes on */
        d->refreshed = u->uid;
        asked++;
    }
}

/* ---- answers ---- */

static void take_user(struct directory *d, const struct wire_answer *a, uint64_t now)
{
    struct user_info *u = find_user(d, a->uid, true);
    d->news |= !u->answered;
    u->asked = false;
    u->answered = true;
    u->answered_at = now;
    copy_string(u->name, sizeof(u->name), a->found ? a->name : "");
    u->exempt_group = false;
    u->exempt_group_name[0] = '\0';
    for (size_t i = 0; i < d->exempt_count && !u->exempt_group; i++) {
        if (a->member[i]) {
            u->exempt_group = true;
            copy_string(u->exempt_group_name, sizeof(u->exempt_group_name), d->groups[i]);
        }
    }
    u->admin = d->has_admin_group && a->member[d->exempt_count];
}

static void take_name(struct directory *d, const struct wire_answer *a, uint64_t now)
{
    for (size_t i = 0; i < d->name_count; i++) {
        struct directory_name *n = &d->names[i];
        if (strcmp(n->name, a->asked) != 0)
            continue;
        *n = (struct directory_name){.answered = true, .found = a->found, .uid = a->uid,
                                     .answered_at = now};
        copy_string(n->name, sizeof(n->name), a->asked);
    }
    if (a->found)
        take_user(d, a, now);
}

static void take(struct directory *d, const struct wire_answer *a)
{
    if (a->generation != d->generation)
        return;
    uint64_t now = now_boottime_usec();
    if (a->kind == WIRE_NAME)
        take_name(d, a, now);
    else
        take_user(d, a, now);
}

/* The helper stalled on (or died at) the oldest lookup out: that one is
 * answered "unknown", the rest go to a new helper. */
static void replace_helper(struct directory *d)
{
    helper_process_end(&d->helper);
    d->restarts++;
    size_t count = d->out_count;
    struct directory_request *rest = xreallocarray(NULL, count ? count : 1, sizeof(*rest));
    for (size_t i = 0; i < count; i++)
        rest[i] = *out_at(d, i);
    d->out_head = d->out_count = 0;
    if (count > 0) {
        struct wire_answer unknown = {.kind = rest[0].kind, .generation = rest[0].generation,
                                      .uid = rest[0].uid};
        copy_string(unknown.asked, sizeof(unknown.asked), rest[0].name);
        take(d, &unknown);
    }
    if (spawn(d) == 0)
        for (size_t i = 1; i < count; i++)
            if (rest[i].generation == d->generation)
                ask(d, rest[i]);
    /* No helper: those lookups are marked not out, to be asked again. */
    for (size_t i = 0; i < d->count; i++)
        d->users[i].asked = d->users[i].asked && d->helper.sock >= 0;
    for (size_t i = 0; i < d->name_count; i++)
        d->names[i].asked = d->names[i].asked && d->helper.sock >= 0;
    free(rest);
}

size_t directory_poll(struct directory *d)
{
    size_t taken = 0;
    struct wire_answer a;
    while (d->helper.sock >= 0) {
        ssize_t n = recv(d->helper.sock, &a, sizeof(a), MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            break;
        if (n != (ssize_t)sizeof(a) || d->out_count == 0) {
            replace_helper(d); /* gone, or said what it cannot have meant */
            continue;
        }
        a.asked[sizeof(a.asked) - 1] = a.name[sizeof(a.name) - 1] = '\0';
        d->out_head = (d->out_head + 1) % d->out_capacity;
        d->out_count--;
        d->head_since = now_boottime_usec();
        take(d, &a);
        taken++;
    }
    if (d->helper.sock < 0 || (d->out_count && now_boottime_usec() >= directory_deadline(d)))
        replace_helper(d);
    return taken;
}

bool directory_news(struct directory *d)
{
    bool news = d->news;
    d->news = false;
    return news;
}

int directory_fd(const struct directory *d)
{
    return d->helper.sock;
}

uint64_t directory_deadline(const struct directory *d)
{
    if (d->helper.sock < 0)
        return now_boottime_usec() + d->stall_usec; /* try a new helper then */
    return d->out_count ? d->head_since + d->stall_usec : 0;
}
