/* The daemon's side of a cluster's standing: the records made of the
 * engine's decisions and of an admin's changes, and rows from the
 * database applied to the engine.  (The JSON forms themselves are
 * test_cluster_codec's.) */
#include "config.h"

#include <jansson.h>

#include "cluster/cluster.h"
#include "cluster_codec.h"
#include "testutil.h"

#define UID 2000000001u

static char err[1024];

static void open_cluster(struct cluster *c)
{
    make_test_dir();
    size_t skipped;
    assert_int_equal(cluster_open(c, "login1", test_dir, 0, &skipped, err, sizeof(err)), 0);
}

static void close_cluster(struct cluster *c)
{
    cluster_close(c);
    remove_test_dir();
}

/* The record of seq as JSON (a new reference). */
static json_t *record(const struct cluster *c, uint64_t seq)
{
    const struct cluster_record *r = cluster_queue_after(&c->queue, seq - 1);
    assert_non_null(r);
    assert_int_equal(r->seq, seq);
    json_t *o = json_loadb(r->text, r->len, 0, NULL);
    assert_non_null(o);
    return o;
}

static json_int_t get_int(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    assert_true(json_is_integer(v));
    return json_integer_value(v);
}

static const char *get_str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    assert_non_null(s);
    return s;
}

static void add_decision(struct decisions *d, enum decision_kind kind, uid_t uid)
{
    d->items = realloc(d->items, (d->count + 1) * sizeof(*d->items));
    d->items[d->count++] = (struct decision){.kind = kind, .uid = uid};
    d->capacity = d->count;
}

static void test_decisions_become_records(void **state)
{
    (void)state;
    struct cluster c;
    open_cluster(&c);
    struct engine_state e = {0};
    struct user_state *us = engine_user(&e, UID, true);
    us->level = 2;
    us->since = 1000;
    us->until = 5000;
    us->violations = 3;
    us->last_reason = VIOLATION_REASON_MEMORY;
    us->last_cpu = 0.5;
    us->last_memory = 1 << 30;
    us->cpu_over_since = 77; /* the window: not shared */
    struct decisions d = {0};
    add_decision(&d, DECISION_FORBIDDEN, UID + 1);   /* no standing changes */
    add_decision(&d, DECISION_EXPIRED, UID + 2);
    add_decision(&d, DECISION_COMPUTE, UID);
    add_decision(&d, DECISION_EXEMPT_ENDED, UID);
    add_decision(&d, DECISION_VIOLATION, UID);       /* the same step: one raise */
    add_decision(&d, DECISION_EXEMPT_ENDED, UID + 3); /* each node's clock ends it */
    cluster_add_decisions(&c, &e, &d, 123456);
    assert_int_equal(c.queue.count, 2);

    json_t *r = record(&c, 1);
    assert_string_equal(get_str(r, "t"), "record");
    assert_string_equal(get_str(r, "kind"), "lower");
    assert_int_equal(get_int(r, "uid"), UID + 2);
    /* A user the engine forgot: no penalty. */
    assert_int_equal(get_int(json_object_get(r, "penalty"), "level"), 0);
    json_decref(r);

    r = record(&c, 2);
    assert_string_equal(get_str(r, "kind"), "raise");
    assert_int_equal(get_int(r, "uid"), UID);
    assert_int_equal(get_int(r, "base_rev"), 0);
    assert_int_equal(get_int(r, "after_seq"), 0);
    assert_int_equal(get_int(r, "at"), 123456);
    assert_true(json_is_null(json_object_get(r, "by")));
    json_t *p = json_object_get(r, "penalty");
    assert_int_equal(get_int(p, "level"), 2);
    assert_int_equal(get_int(p, "since"), 1000);
    assert_int_equal(get_int(p, "until"), 5000);
    assert_int_equal(get_int(p, "violations"), 3);
    assert_string_equal(get_str(p, "last_reason"), "memory");
    assert_int_equal(get_int(p, "last_memory"), 1 << 30);
    assert_null(json_object_get(p, "cpu_over_since"));
    struct penalty back;
    assert_int_equal(penalty_from_json(p, &back, err, sizeof(err)), 0);
    assert_int_equal(back.level, 2);
    assert_true(back.last_cpu == 0.5);
    assert_int_equal(back.last_reason, VIOLATION_REASON_MEMORY);
    json_decref(r);

    /* The next change of that user follows the one still unstored, and
     * is based on the row last applied. */
    cluster_set_rev(&c, UID, 41);
    uint64_t seq = cluster_add_change(&c, CHANGE_FORGIVE, &e, UID, "admin", 999);
    r = record(&c, seq);
    assert_string_equal(get_str(r, "kind"), "forgive");
    assert_string_equal(get_str(r, "by"), "admin");
    assert_int_equal(get_int(r, "base_rev"), 41);
    assert_int_equal(get_int(r, "after_seq"), 2);
    json_decref(r);
    /* Stored: nothing of ours on its way any more. */
    assert_int_equal(cluster_queue_stored(&c.queue, seq, err, sizeof(err)), 0);
    us = engine_user(&e, UID, false);
    us->exempt_until = 8888;
    seq = cluster_add_change(&c, CHANGE_EXEMPT, &e, UID, "admin", 1000);
    r = record(&c, seq);
    assert_int_equal(get_int(r, "after_seq"), 0);
    assert_int_equal(get_int(r, "exempt_until"), 8888);
    json_decref(r);
    decisions_free(&d);
    engine_state_free(&e);
    close_cluster(&c);
}

static void test_events_carry_the_node(void **state)
{
    (void)state;
    struct cluster c;
    open_cluster(&c);
    json_t *e = json_pack("{s:s, s:i}", "event", "limits_set", "uid", (int)UID);
    bool first;
    uint64_t seq = cluster_add_event(&c, e, &first);
    assert_int_equal(seq, 1);
    assert_null(json_object_get(e, "node")); /* the logged event is left alone */
    json_decref(e);
    json_t *r = record(&c, 1);
    assert_string_equal(get_str(r, "kind"), "event");
    json_t *ev = json_object_get(r, "event");
    assert_string_equal(get_str(ev, "node"), "login1");
    assert_string_equal(get_str(ev, "event"), "limits_set");
    json_decref(r);
    /* An event is no change of the user's standing. */
    assert_int_equal(cluster_queue_last_change(&c.queue, UID), 0);
    close_cluster(&c);
}

static struct shared_standing row_of(uid_t uid, uint64_t rev, const char *node, uint64_t seq,
                                     int level)
{
    struct shared_standing row = {.uid = uid, .rev = rev, .seq = seq};
    snprintf(row.node, sizeof(row.node), "%s", node);
    row.penalty.level = level;
    row.penalty.since = level ? 100 : 0;
    row.penalty.until = level ? 900 : 0;
    row.penalty.violations = (uint32_t)level;
    return row;
}

static void test_standing_applied(void **state)
{
    (void)state;
    struct cluster c;
    open_cluster(&c);
    struct engine_state e = {0};
    struct user_state *us = engine_user(&e, UID, true);
    us->cpu_over_since = 50;
    us->cpu_over_sum = 7.0;

    struct shared_standing row = row_of(UID, 10, "login2", 4, 3);
    row.exempt_until = 0;
    assert_int_equal(cluster_apply_standing(&c, &e, &row), STANDING_APPLIED);
    us = engine_user(&e, UID, false);
    assert_int_equal(us->level, 3);
    assert_int_equal(us->until, 900);
    assert_int_equal(us->violations, 3);
    /* The window being watched stays this node's. */
    assert_int_equal(us->cpu_over_since, 50);
    assert_true(us->cpu_over_sum == 7.0);
    assert_int_equal(cluster_rev(&c, UID), 10);
    /* Not newer: ignored. */
    row = row_of(UID, 10, "login2", 5, 1);
    assert_int_equal(cluster_apply_standing(&c, &e, &row), STANDING_OLD);
    row.rev = 9;
    assert_int_equal(cluster_apply_standing(&c, &e, &row), STANDING_OLD);
    assert_int_equal(engine_user(&e, UID, false)->level, 3);
    /* The same again under a newer rev: taken, nothing changes. */
    row = row_of(UID, 11, "login3", 1, 3);
    assert_int_equal(cluster_apply_standing(&c, &e, &row), STANDING_SAME);
    assert_int_equal(cluster_rev(&c, UID), 11);
    /* A user this node never saw. */
    row = row_of(UID + 5, 12, "login2", 6, 1);
    row.exempt_until = 4242;
    assert_int_equal(cluster_apply_standing(&c, &e, &row), STANDING_APPLIED);
    assert_int_equal(engine_user(&e, UID + 5, false)->exempt_until, 4242);
    /* A row with nothing, for a user with nothing here. */
    row = row_of(UID + 6, 13, "login2", 7, 0);
    assert_int_equal(cluster_apply_standing(&c, &e, &row), STANDING_SAME);
    assert_null(engine_user(&e, UID + 6, false));
    engine_state_free(&e);
    close_cluster(&c);
}

static void test_standing_waits_for_our_change(void **state)
{
    (void)state;
    struct cluster c;
    open_cluster(&c);
    struct engine_state e = {0};
    engine_user(&e, UID, true)->level = 2;
    /* Events take seqs too: 1 is an event, 2 our raise. */
    json_t *ev = json_pack("{s:s}", "event", "daemon_started");
    cluster_add_event(&c, ev, NULL);
    json_decref(ev);
    uint64_t mine = cluster_add_change(&c, CHANGE_RAISE, &e, UID, NULL, 1);
    assert_int_equal(mine, 2);
    /* Another node's row while ours is on its way: not taken, and its rev
     * is not counted as seen. */
    struct shared_standing row = row_of(UID, 20, "login2", 9, 1);
    assert_int_equal(cluster_apply_standing(&c, &e, &row), STANDING_WAITING);
    assert_int_equal(engine_user(&e, UID, false)->level, 2);
    assert_int_equal(cluster_rev(&c, UID), 0);
    /* Other users are not held up. */
    row = row_of(UID + 1, 21, "login2", 10, 1);
    assert_int_equal(cluster_apply_standing(&c, &e, &row), STANDING_APPLIED);
    /* The row our change made (merged with a stronger one) is taken even
     * before "stored" says so. */
    row = row_of(UID, 22, "login1", mine, 4);
    assert_int_equal(cluster_apply_standing(&c, &e, &row), STANDING_APPLIED);
    assert_int_equal(engine_user(&e, UID, false)->level, 4);
    assert_int_equal(cluster_rev(&c, UID), 22);
    /* Once stored, rows from elsewhere are taken again. */
    assert_int_equal(cluster_queue_stored(&c.queue, mine, err, sizeof(err)), 0);
    row = row_of(UID, 23, "login2", 11, 0);
    assert_int_equal(cluster_apply_standing(&c, &e, &row), STANDING_APPLIED);
    assert_int_equal(engine_user(&e, UID, false)->level, 0);
    engine_state_free(&e);
    close_cluster(&c);
}

static void test_revs_kept(void **state)
{
    (void)state;
    struct cluster c;
    open_cluster(&c);
    cluster_set_rev(&c, UID + 2, 30);
    cluster_set_rev(&c, UID, 12);
    cluster_set_rev(&c, UID, 14);
    assert_true(c.revs_dirty);
    assert_int_equal(cluster_save_revs(&c, err, sizeof(err)), 0);
    assert_false(c.revs_dirty);
    cluster_close(&c);
    size_t skipped;
    assert_int_equal(cluster_open(&c, "login1", test_dir, 0, &skipped, err, sizeof(err)), 0);
    assert_int_equal(c.rev_count, 2);
    assert_int_equal(cluster_rev(&c, UID), 14);
    assert_int_equal(cluster_rev(&c, UID + 2), 30);
    assert_int_equal(cluster_rev(&c, UID + 1), 0);
    cluster_close(&c);
    /* Not understood: none known (changes count as stale), said. */
    write_file(CLUSTER_REVS_FILE, "{\"revs\":[[1,2],[3]]}");
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", test_dir, CLUSTER_REVS_FILE);
    chmod(path, 0600);
    assert_int_equal(cluster_open(&c, "login1", test_dir, 0, &skipped, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "not understood"));
    assert_int_equal(c.rev_count, 0);
    assert_true(c.enabled);
    close_cluster(&c);
}

/* A change of ours the database dropped as stale makes no row: the row
 * of another node that came while it was on its way is taken once it is
 * stored, in whichever order "standing" and "stored" come. */
static void test_held_row_taken_once_stored(void **state)
{
    (void)state;
    struct cluster c;
    open_cluster(&c);
    struct engine_state e = {0};
    engine_user(&e, UID, true)->level = 1;
    cluster_set_rev(&c, UID, 5);
    uint64_t mine = cluster_add_change(&c, CHANGE_LOWER, &e, UID, NULL, 1);
    struct shared_standing row = row_of(UID, 6, "login2", 3, 2), taken;
    assert_int_equal(cluster_apply_standing(&c, &e, &row), STANDING_WAITING);
    struct shared_standing newer = row_of(UID, 7, "login3", 1, 3);
    assert_int_equal(cluster_apply_standing(&c, &e, &newer), STANDING_WAITING);
    assert_int_equal(c.held_count, 1);
    assert_false(cluster_take_held(&c, &taken));
    assert_int_equal(cluster_queue_stored(&c.queue, mine, err, sizeof(err)), 0);
    assert_true(cluster_take_held(&c, &taken));
    assert_int_equal(taken.rev, 7);
    assert_false(cluster_take_held(&c, &taken));
    assert_int_equal(cluster_apply_standing(&c, &e, &taken), STANDING_APPLIED);
    assert_int_equal(engine_user(&e, UID, false)->level, 3);
    /* A held row older than one applied since is dropped. */
    mine = cluster_add_change(&c, CHANGE_RAISE, &e, UID, NULL, 2);
    row = row_of(UID, 8, "login2", 4, 1);
    assert_int_equal(cluster_apply_standing(&c, &e, &row), STANDING_WAITING);
    row = row_of(UID, 9, "login1", mine, 4);
    assert_int_equal(cluster_apply_standing(&c, &e, &row), STANDING_APPLIED);
    assert_int_equal(c.held_count, 0);
    engine_state_free(&e);
    close_cluster(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decisions_become_records),
        cmocka_unit_test(test_events_carry_the_node),
        cmocka_unit_test(test_standing_applied),
        cmocka_unit_test(test_standing_waits_for_our_change),
        cmocka_unit_test(test_revs_kept),
        cmocka_unit_test(test_held_row_taken_once_stored),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
