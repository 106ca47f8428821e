#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster/cluster.h"
#include "cluster_codec.h"
#include "safefile.h"
#include "strbuf.h"
#include "util.h"

/* 30 bytes a user at most: room for two million users. */
#define REVS_FILE_MAX (64u << 20)

static int open_dir(const char *dir, char *err, size_t err_len)
{
    int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirfd < 0)
        snprintf(err, err_len, "%s: cannot open the state directory: %s", dir, strerror(errno));
    return dirfd;
}

/* cluster-revs.json into the table; a file that is not ours or not
 * understood leaves it empty (every change then counts as stale until
 * rows come: no penalty is lost). */
static int load_revs(struct cluster *c, char *err, size_t err_len)
{
    int dirfd = open_dir(c->queue.dir, err, err_len);
    if (dirfd < 0)
        return -1;
    char *text = NULL;
    size_t len;
    int r = safe_read_file(dirfd, c->queue.dir, CLUSTER_REVS_FILE, REVS_FILE_MAX, &text, &len,
                           err, err_len);
    close(dirfd);
    if (r == -2)
        return 0;
    if (r != 0) {
        if (r > 0)
            snprintf(err, err_len, "%s/%s: larger than %u bytes; not read", c->queue.dir,
                     CLUSTER_REVS_FILE, REVS_FILE_MAX);
        return -1;
    }
    json_t *root = json_loadb(text, len, 0, NULL);
    free(text);
    json_t *revs = json_object_get(root, "revs");
    int rc = json_is_array(revs) ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < json_array_size(revs); i++) {
        json_t *pair = json_array_get(revs, i);
        json_int_t uid = json_integer_value(json_array_get(pair, 0));
        json_int_t rev = json_integer_value(json_array_get(pair, 1));
        if (json_array_size(pair) != 2 || uid < 0 || uid >= (json_int_t)(uid_t)-1 || rev <= 0)
            rc = -1;
        else
            cluster_set_rev(c, (uid_t)uid, (uint64_t)rev);
    }
    json_decref(root);
    if (rc < 0) {
        c->rev_count = 0;
        snprintf(err, err_len, "%s/%s: not understood; every change counts as stale until the "
                 "database's rows come", c->queue.dir, CLUSTER_REVS_FILE);
    }
    c->revs_dirty = false;
    return rc;
}

int cluster_save_revs(struct cluster *c, char *err, size_t err_len)
{
    struct strbuf b = {0};
    strbuf_adds(&b, "{\"revs\":[");
    for (size_t i = 0; i < c->rev_count; i++)
        strbuf_addf(&b, "%s[%u,%llu]", i ? "," : "", (unsigned)c->revs[i].uid,
                    (unsigned long long)c->revs[i].rev);
    strbuf_adds(&b, "]}");
    int dirfd = open_dir(c->queue.dir, err, err_len);
    int rc = dirfd < 0 ? -1
                       : safe_write_file(dirfd, c->queue.dir, CLUSTER_REVS_FILE, b.s, err,
                                         err_len);
    if (dirfd >= 0)
        close(dirfd);
    strbuf_free(&b);
    if (rc == 0)
        c->revs_dirty = false;
    return rc;
}

int cluster_open(struct cluster *c, const char *node, const char *state_dir, uint64_t limit,
                 size_t *skipped, char *err, size_t err_len)
{
    memset(c, 0, sizeof(*c));
    c->enabled = true;
    c->fd = -1;
    snprintf(c->node, sizeof(c->node), "%s", node);
    if (cluster_queue_open(&c->queue, state_dir, limit, skipped, err, err_len) < 0)
        return -1;
    return load_revs(c, err, err_len);
}

void cluster_close(struct cluster *c)
{
    cluster_queue_close(&c->queue);
    free(c->revs);
    free(c->held);
    c->held = NULL;
    c->held_count = c->held_capacity = 0;
    free(c->database);
    free(c->passfile);
    c->database = c->passfile = NULL;
    c->revs = NULL;
    c->rev_count = c->rev_capacity = 0;
    c->enabled = false;
}

/* Where uid is, or would go, in the sorted table. */
static size_t rev_position(const struct cluster *c, uid_t uid)
{
    size_t lo = 0, hi = c->rev_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->revs[mid].uid < uid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

uint64_t cluster_rev(const struct cluster *c, uid_t uid)
{
    size_t at = rev_position(c, uid);
    return at < c->rev_count && c->revs[at].uid == uid ? c->revs[at].rev : 0;
}

void cluster_set_rev(struct cluster *c, uid_t uid, uint64_t rev)
{
    size_t at = rev_position(c, uid);
    c->revs_dirty = true;
    if (at < c->rev_count && c->revs[at].uid == uid) {
        c->revs[at].rev = rev;
        return;
    }
    c->revs = grow_array(c->revs, c->rev_count, &c->rev_capacity, sizeof(*c->revs));
    memmove(c->revs + at + 1, c->revs + at, (c->rev_count - at) * sizeof(*c->revs));
    c->revs[at] = (struct cluster_rev){uid, rev};
    c->rev_count++;
}

uint64_t cluster_add_change(struct cluster *c, enum standing_change_kind kind,
                            const struct engine_state *engine, uid_t uid, const char *by,
                            uint64_t at)
{
    /* A user the engine forgot (nothing left to remember) has none. */
    const struct user_state *us = engine_user((struct engine_state *)engine, uid, false);
    struct user_state none = {.uid = uid};
    struct standing_change ch = {
        .kind = kind,
        .uid = uid,
        .seq = c->queue.last_seq + 1, /* given again by the queue */
        .base_rev = cluster_rev(c, uid),
        .after_seq = cluster_queue_last_change(&c->queue, uid),
        .exempt_until = us ? us->exempt_until : 0,
    };
    snprintf(ch.node, sizeof(ch.node), "%s", c->node);
    penalty_from_user(&ch.penalty, us ? us : &none);
    json_t *r = change_to_json(&ch, at, by);
    uint64_t seq = cluster_queue_add(&c->queue, r, true, uid, NULL);
    json_decref(r);
    return seq;
}

/* What a decision does to its user's standing. */
static bool raises(enum decision_kind k)
{
    return k == DECISION_VIOLATION;
}

/* An exemption that runs out is no change: each node ends it by its own
 * clock at the time the row holds (cluster_merge.h). */
static bool lowers(enum decision_kind k)
{
    return k == DECISION_EXPIRED || k == DECISION_DECAYED;
}

void cluster_add_decisions(struct cluster *c, const struct engine_state *engine,
                           const struct decisions *d, uint64_t at)
{
    for (size_t i = 0; i < d->count; i++) {
        const struct decision *x = &d->items[i];
        if (!raises(x->kind) && !lowers(x->kind))
            continue;
        /* One record a user, at their first decision that changes their
         * standing: a raise if any of them is a violation. */
        bool first = true, raise = false;
        for (size_t k = 0; k < d->count; k++) {
            const struct decision *y = &d->items[k];
            if (y->uid != x->uid)
                continue;
            first &= k >= i || !(raises(y->kind) || lowers(y->kind));
            raise |= raises(y->kind);
        }
        if (first)
            cluster_add_change(c, raise ? CHANGE_RAISE : CHANGE_LOWER, engine, x->uid, NULL, at);
    }
}

uint64_t cluster_add_event(struct cluster *c, const json_t *event, bool *first_refusal)
{
    json_t *copy = json_copy((json_t *)event);
    json_object_set_new(copy, "node", json_string(c->node));
    json_t *r = json_pack("{s:s, s:s, s:o}", "t", "record", "kind", "event", "event", copy);
    json_t *uid = json_object_get(event, "uid");
    uint64_t seq = cluster_queue_add(&c->queue, r, false,
                                     json_is_integer(uid) ? (uid_t)json_integer_value(uid)
                                                          : CLUSTER_NO_UID,
                                     first_refusal);
    json_decref(r);
    return seq;
}

static struct shared_standing *find_held(struct cluster *c, uid_t uid)
{
    for (size_t i = 0; i < c->held_count; i++)
        if (c->held[i].uid == uid)
            return &c->held[i];
    return NULL;
}

/* The latest row of a user held back. */
static void hold(struct cluster *c, const struct shared_standing *row)
{
    struct shared_standing *h = find_held(c, row->uid);
    if (h) {
        if (row->rev > h->rev)
            *h = *row;
        return;
    }
    c->held = grow_array(c->held, c->held_count, &c->held_capacity, sizeof(*c->held));
    c->held[c->held_count++] = *row;
}

/* A held row no newer than rev is of no more use. */
static void drop_held(struct cluster *c, uid_t uid, uint64_t rev)
{
    struct shared_standing *h = find_held(c, uid);
    if (h && h->rev <= rev)
        *h = c->held[--c->held_count];
}

bool cluster_take_held(struct cluster *c, struct shared_standing *row)
{
    for (size_t i = 0; i < c->held_count; i++) {
        if (cluster_queue_last_change(&c->queue, c->held[i].uid))
            continue;
        *row = c->held[i];
        c->held[i] = c->held[--c->held_count];
        return true;
    }
    return false;
}

enum standing_outcome cluster_apply_standing(struct cluster *c, struct engine_state *engine,
                                             const struct shared_standing *row)
{
    if (row->rev <= cluster_rev(c, row->uid))
        return STANDING_OLD;
    /* A change of ours still on its way: the row after it will come.  The
     * row that change made (or any later) is taken. */
    uint64_t pending = cluster_queue_last_change(&c->queue, row->uid);
    if (pending && !(strcmp(row->node, c->node) == 0 && row->seq >= pending)) {
        hold(c, row);
        return STANDING_WAITING;
    }
    drop_held(c, row->uid, row->rev);
    cluster_set_rev(c, row->uid, row->rev);
    return engine_take_standing(engine, row->uid, &row->penalty, row->exempt_until)
               ? STANDING_APPLIED
               : STANDING_SAME;
}
