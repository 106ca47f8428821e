/* The merge rule of the cluster's shared standings: each case of
 * cluster_merge.h, and the property it promises: racing changes give the
 * same standing whatever order they reach the database in. */
#include "config.h"

#include "cluster_merge.h"
#include "testutil.h"

#define SEC 1000000ULL
#define T0 (1700000000ULL * SEC)

static struct penalty at_level(int level, uint64_t since, uint64_t until)
{
    return (struct penalty){.level = level, .since = since, .until = until, .quiet_since = since,
                            .last_violation = since, .violations = (uint32_t)level,
                            .last_reason = VIOLATION_REASON_CPU, .last_cpu = 2.5,
                            .last_window = 60 * SEC};
}

static struct shared_standing row_at(uint64_t rev, struct penalty p, const char *node, uint64_t seq)
{
    struct shared_standing row = {.uid = 2000000001, .rev = rev, .penalty = p, .seq = seq};
    snprintf(row.node, sizeof(row.node), "%s", node);
    return row;
}

static struct standing_change change(enum standing_change_kind kind, const char *node, uint64_t seq,
                                     uint64_t base_rev, uint64_t after_seq, struct penalty p)
{
    struct standing_change c = {.kind = kind, .uid = 2000000001, .seq = seq, .base_rev = base_rev,
                                .after_seq = after_seq, .penalty = p};
    snprintf(c.node, sizeof(c.node), "%s", node);
    return c;
}

static void assert_penalty(const struct penalty *got, const struct penalty *want)
{
    assert_int_equal(got->level, want->level);
    assert_int_equal(got->until, want->until);
    assert_int_equal(penalty_compare(got, want), 0);
}

static void test_names(void **state)
{
    (void)state;
    for (int k = CHANGE_RAISE; k <= CHANGE_EXEMPT; k++)
        assert_int_equal(standing_change_kind_parse(standing_change_name(k)), k);
    assert_string_equal(standing_change_name(CHANGE_FORGIVE), "forgive");
    assert_int_equal(standing_change_kind_parse("event"), -1);
    assert_int_equal(standing_change_kind_parse(""), -1);
    assert_int_equal(standing_change_kind_parse(NULL), -1);
}

static void test_compare(void **state)
{
    (void)state;
    struct penalty a = at_level(1, T0, T0 + 600 * SEC), b = a;
    assert_int_equal(penalty_compare(&a, &b), 0);
    b.level = 2;
    b.until = T0;
    assert_true(penalty_compare(&a, &b) < 0); /* level first */
    b = a;
    b.until += 1;
    assert_true(penalty_compare(&b, &a) > 0); /* then the later end */
    b = a;
    b.last_cpu = 3;
    assert_true(penalty_compare(&b, &a) > 0); /* never equal when different */
    b = a;
    b.violations = 7;
    assert_true(penalty_compare(&b, &a) > 0);
}

static void test_user_round_trip(void **state)
{
    (void)state;
    struct user_state us = {.uid = 2000000001, .level = 2, .since = 5, .until = 6, .quiet_since = 7,
                            .last_violation = 8, .violations = 9, .exempt_until = 10,
                            .last_reason = VIOLATION_REASON_MEMORY, .last_cpu = 1.5,
                            .last_memory = 11, .last_window = 12, .cpu_over_since = 13};
    struct penalty p;
    penalty_from_user(&p, &us);
    assert_int_equal(p.level, 2);
    assert_int_equal(p.last_memory, 11);
    struct user_state back = {.uid = 2000000001, .exempt_until = 99, .cpu_over_since = 42};
    penalty_to_user(&back, &p);
    /* The exemption and the window watched now stay the node's own. */
    assert_int_equal(back.exempt_until, 99);
    assert_int_equal(back.cpu_over_since, 42);
    back.exempt_until = 10;
    back.cpu_over_since = 13;
    assert_memory_equal(&back, &us, sizeof(us));
}

static void test_raise_current(void **state)
{
    (void)state;
    struct shared_standing row = row_at(5, at_level(2, T0, T0 + 900 * SEC), "a", 3);
    /* Current: taken as is, even weaker than what the row holds (the
     * node's raise from this very row is the truth). */
    struct standing_change c = change(CHANGE_RAISE, "b", 1, 5, 0, at_level(1, T0 + SEC, T0 + 2 * SEC));
    assert_true(standing_change_current(&row, &c));
    assert_true(standing_merge(&row, &c, NULL, 0));
    assert_penalty(&row.penalty, &c.penalty);
    /* A user without a row: base_rev 0 against the zeroed row. */
    struct shared_standing none = {.uid = 2000000001};
    c.base_rev = 0;
    assert_true(standing_merge(&none, &c, NULL, 0));
    assert_penalty(&none.penalty, &c.penalty);
}

static void test_raise_stale(void **state)
{
    (void)state;
    struct penalty strong = at_level(2, T0, T0 + 900 * SEC);
    struct shared_standing row = row_at(7, strong, "a", 3);
    struct standing_change weaker = change(CHANGE_RAISE, "b", 1, 5, 0, at_level(1, T0, T0 + 60 * SEC));
    assert_false(standing_change_current(&row, &weaker));
    assert_false(standing_merge(&row, &weaker, NULL, 0)); /* no penalty lost */
    assert_penalty(&row.penalty, &strong);
    /* Same level: the later end is kept. */
    struct standing_change later = change(CHANGE_RAISE, "b", 2, 5, 1, at_level(2, T0, T0 + 901 * SEC));
    assert_true(standing_merge(&row, &later, NULL, 0));
    assert_penalty(&row.penalty, &later.penalty);
    struct standing_change higher = change(CHANGE_RAISE, "c", 1, 5, 0, at_level(3, T0, T0 + SEC));
    assert_true(standing_merge(&row, &higher, NULL, 0));
    assert_penalty(&row.penalty, &higher.penalty);
}

static void test_lower(void **state)
{
    (void)state;
    struct penalty p = at_level(2, T0, T0 + 600 * SEC);
    struct shared_standing row = row_at(5, p, "a", 3);
    row.exempt_until = T0 + 10;
    struct penalty expired = p;
    expired.until = 0;
    expired.quiet_since = T0 + 600 * SEC;
    struct standing_change c = change(CHANGE_LOWER, "b", 4, 4, 0, expired);
    c.exempt_until = 0;
    /* Stale: dropped, every node computes the same from the newer row. */
    assert_false(standing_change_current(&row, &c));
    assert_false(standing_merge(&row, &c, NULL, 0));
    assert_penalty(&row.penalty, &p);
    assert_int_equal(row.exempt_until, T0 + 10);
    c.base_rev = 5;
    assert_true(standing_change_current(&row, &c));
    assert_true(standing_merge(&row, &c, NULL, 0));
    assert_penalty(&row.penalty, &expired);
    /* An exemption ends by every node's clock, never by a change. */
    assert_int_equal(row.exempt_until, T0 + 10);
    assert_false(standing_merge(&row, &c, NULL, 0)); /* the same again: no new rev */
}

static void test_forgive(void **state)
{
    (void)state;
    struct penalty base = at_level(2, T0, T0 + 600 * SEC);
    struct shared_standing row = row_at(10, base, "x", 1);
    /* Node a raised before its admin's forgive was made (a's seq 4 and 5);
     * b and c raised elsewhere, after a's base. */
    struct standing_change later[] = {
        change(CHANGE_RAISE, "a", 4, 10, 0, at_level(3, T0 + SEC, T0 + 3600 * SEC)),
        change(CHANGE_RAISE, "b", 1, 10, 0, at_level(1, T0 + 2 * SEC, T0 + 60 * SEC)),
        change(CHANGE_RAISE, "c", 9, 10, 0, at_level(1, T0 + 3 * SEC, T0 + 61 * SEC)),
        change(CHANGE_LOWER, "d", 1, 10, 0, at_level(4, T0, T0 + 9999 * SEC)),
        change(CHANGE_RAISE, "a", 7, 10, 0, at_level(1, T0 + 4 * SEC, T0 + 62 * SEC)),
    };
    row.penalty = later[0].penalty;
    row.rev = 14;
    struct penalty forgiven = base;
    forgiven.level = 0;
    forgiven.until = 0;
    struct standing_change f = change(CHANGE_FORGIVE, "a", 6, 10, 5, forgiven);
    assert_true(standing_merge(&row, &f, later, 5));
    /* a's own seq 4 cancelled, a's seq 7 (after the forgive) and c's kept,
     * the stronger of the ones kept: c's; a lower never folded back. */
    assert_penalty(&row.penalty, &later[4].penalty);
    /* Nothing stored after the base: the forgiven penalty itself. */
    row.penalty = base;
    assert_true(standing_merge(&row, &f, NULL, 0));
    assert_penalty(&row.penalty, &forgiven);
    /* Only the node's own earlier raises: all cancelled. */
    row.penalty = base;
    assert_true(standing_merge(&row, &f, later, 1));
    assert_penalty(&row.penalty, &forgiven);
    /* Another user's raise is not this user's. */
    later[1].uid = 2000000002;
    row.penalty = base;
    assert_true(standing_merge(&row, &f, later, 2));
    assert_penalty(&row.penalty, &forgiven);
}

static void test_exempt(void **state)
{
    (void)state;
    struct penalty p = at_level(1, T0, T0 + 60 * SEC);
    struct shared_standing row = row_at(10, p, "a", 1);
    struct standing_change e1 = change(CHANGE_EXEMPT, "a", 2, 3, 0, (struct penalty){0});
    e1.exempt_until = T0 + 3600 * SEC;
    struct standing_change e2 = change(CHANGE_EXEMPT, "b", 2, 10, 0, (struct penalty){0});
    e2.exempt_until = T0 + 60 * SEC;
    /* Stale or not, the one stored last wins; the penalty is not touched. */
    assert_true(standing_merge(&row, &e1, NULL, 0));
    assert_int_equal(row.exempt_until, e1.exempt_until);
    assert_true(standing_merge(&row, &e2, NULL, 0));
    assert_int_equal(row.exempt_until, e2.exempt_until);
    assert_penalty(&row.penalty, &p);
    assert_false(standing_merge(&row, &e2, NULL, 0)); /* the same again: no new rev */
    e2.exempt_until = 0;                              /* an exemption removed */
    assert_true(standing_merge(&row, &e2, NULL, 0));
    assert_int_equal(row.exempt_until, 0);
}

static void test_after_seq(void **state)
{
    (void)state;
    /* a raised (seq 7, base 11, stored as rev 12) and, before it heard
     * back, its limits ended (seq 8, after_seq 7, base still 11). */
    struct penalty raised = at_level(1, T0, T0 + 60 * SEC);
    struct shared_standing row = row_at(12, raised, "a", 7);
    struct penalty expired = raised;
    expired.until = 0;
    struct standing_change c = change(CHANGE_LOWER, "a", 8, 11, 7, expired);
    /* Only the rev makes a change current: a's own seq 7 may have been
     * folded into something stronger from elsewhere, so the lower is
     * dropped and a lowers again from rev 12 when it has it. */
    assert_false(standing_change_current(&row, &c));
    assert_false(standing_merge(&row, &c, NULL, 0));
    assert_penalty(&row.penalty, &raised);
    c.base_rev = 12;
    assert_true(standing_merge(&row, &c, NULL, 0));
    assert_penalty(&row.penalty, &expired);
    /* A chained raise after the node's own forgive keeps what the forgive
     * folded back in: the stronger of the two, not the node's alone. */
    struct penalty other = at_level(3, T0, T0 + 86400 * SEC);
    row = row_at(14, other, "a", 9); /* a's forgive, with b's raise folded in */
    c = change(CHANGE_RAISE, "a", 10, 11, 9, at_level(1, T0 + SEC, T0 + 61 * SEC));
    assert_false(standing_merge(&row, &c, NULL, 0));
    assert_penalty(&row.penalty, &other);
}

/* ---- The property: every order of racing changes, the same result. ---- */

/* The database as the link drives it: the row locked, the raises stored
 * after a forgive's base, a new rev when something changed, every change
 * kept in the log (a dropped one too, with a rev of its own). */
struct sim {
    struct shared_standing row;
    struct standing_change log[8];
    uint64_t log_rev[8];
    size_t logged;
    uint64_t next_rev;
};

static void sim_store(struct sim *db, const struct standing_change *c)
{
    struct standing_change later[8];
    size_t n = 0;
    for (size_t i = 0; i < db->logged; i++)
        if (db->log[i].kind == CHANGE_RAISE && db->log_rev[i] > c->base_rev)
            later[n++] = db->log[i];
    uint64_t rev = db->next_rev++;
    if (standing_merge(&db->row, c, later, n)) {
        db->row.rev = rev;
        db->row.seq = c->seq;
        snprintf(db->row.node, sizeof(db->row.node), "%s", c->node);
    }
    db->log[db->logged] = *c;
    db->log_rev[db->logged++] = rev;
}

/* A small deterministic generator (the test must be the same each run). */
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
static uint32_t rnd(uint32_t n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state % n);
}

#define LEVELS 3
static const uint64_t durations[LEVELS + 1] = {0, 600 * SEC, 3600 * SEC, 86400 * SEC};
#define DECAY (7200 * SEC)

/* Lowers stamped with the node's own clock (as the engine does: the
 * step's time), or with the moment the row itself says (limits' end, the
 * decay's due time), the same on every node. */
static bool node_time;

/* One node's view: its own penalty and clock, as the engine moves them. */
struct node_view {
    char name[24];
    struct penalty p;
    uint64_t exempt_until, now, seq, last_seq;
};

static void node_raise(struct node_view *v, struct standing_change *c)
{
    struct penalty *p = &v->p;
    if (p->level < LEVELS)
        p->level++;
    p->since = p->quiet_since = p->last_violation = v->now;
    p->until = v->now + durations[p->level];
    p->violations++;
    p->last_reason = (enum violation_reason)(1 + rnd(3));
    p->last_cpu = 1 + rnd(8);
    p->last_memory = (uint64_t)rnd(4) << 30;
    p->last_window = 60 * SEC;
    c->kind = CHANGE_RAISE;
}

/* What time alone does, the first that applies: limits end, a level
 * decays, an exemption runs out.  false when none can. */
static bool node_lower(struct node_view *v, struct standing_change *c)
{
    struct penalty *p = &v->p;
    if (p->until) {
        if (v->now < p->until)
            v->now = p->until + rnd(5) * SEC;
        p->quiet_since = node_time ? v->now : p->until;
        p->until = 0;
    } else if (p->level > 0) {
        if (v->now < p->quiet_since + DECAY)
            v->now = p->quiet_since + DECAY + rnd(5) * SEC;
        p->level--;
        p->quiet_since = node_time ? v->now : p->quiet_since + DECAY;
    } else if (v->exempt_until) {
        if (v->now < v->exempt_until)
            v->now = v->exempt_until + rnd(5) * SEC;
        v->exempt_until = 0;
    } else {
        return false;
    }
    c->kind = CHANGE_LOWER;
    return true;
}

static void node_forgive(struct node_view *v, struct standing_change *c)
{
    v->p.level = 0;
    v->p.until = 0;
    v->p.quiet_since = v->now;
    c->kind = CHANGE_FORGIVE;
}

struct scenario {
    struct shared_standing base;
    struct standing_change changes[4];
    size_t count;
};

static void make_scenario(struct scenario *s)
{
    memset(s, 0, sizeof(*s));
    int level = (int)rnd(LEVELS + 1);
    uint64_t since = T0 - rnd(4000) * SEC;
    struct penalty p0 = at_level(level, since, level && rnd(2) ? since + durations[level] : 0);
    s->base = row_at(10, p0, "z", 3);
    s->base.exempt_until = rnd(3) == 0 ? T0 + rnd(600) * SEC : 0;

    size_t nodes = 2 + rnd(2);
    struct node_view views[3];
    for (size_t n = 0; n < nodes; n++) {
        views[n] = (struct node_view){.p = p0, .exempt_until = s->base.exempt_until,
                                      .now = T0 + rnd(30) * SEC, .seq = 4 + rnd(3)};
        snprintf(views[n].name, sizeof(views[n].name), "n%zu", n);
    }
    s->count = nodes + rnd((uint32_t)(5 - nodes));
    bool forgiven = false;
    for (size_t i = 0; i < s->count; i++) {
        /* Each node at least once, then any. */
        struct node_view *v = &views[i < nodes ? i : rnd((uint32_t)nodes)];
        struct standing_change *c = &s->changes[i];
        v->now += rnd(20) * SEC;
        uint32_t what = rnd(forgiven ? 2 : 3);
        if (what == 2) {
            node_forgive(v, c);
            forgiven = true;
        } else if (what == 1 && node_lower(v, c)) {
        } else {
            node_raise(v, c);
        }
        snprintf(c->node, sizeof(c->node), "%s", v->name);
        c->uid = s->base.uid;
        c->seq = ++v->seq;
        c->base_rev = s->base.rev;
        c->after_seq = v->last_seq;
        v->last_seq = c->seq;
        c->penalty = v->p;
        c->exempt_until = v->exempt_until;
    }
    /* The scenario lists changes by node, in each node's order, as the
     * stable sort below keeps them. */
}

/* Apply the changes in order[], and the result in *out. */
static void run_order(const struct scenario *s, const size_t *order, struct shared_standing *out)
{
    struct sim db = {.row = s->base, .next_rev = s->base.rev + 1};
    for (size_t i = 0; i < s->count; i++)
        sim_store(&db, &s->changes[order[i]]);
    *out = db.row;
}

/* A node's records reach the database in its own order: an order that
 * puts a node's later change first is no order the database can see. */
static bool order_possible(const struct scenario *s, const size_t *order)
{
    for (size_t i = 0; i < s->count; i++)
        for (size_t j = i + 1; j < s->count; j++) {
            const struct standing_change *a = &s->changes[order[i]], *b = &s->changes[order[j]];
            if (strcmp(a->node, b->node) == 0 && a->seq > b->seq)
                return false;
        }
    return true;
}

static bool next_permutation(size_t *a, size_t n)
{
    size_t i = n - 1;
    while (i > 0 && a[i - 1] >= a[i])
        i--;
    if (i == 0)
        return false;
    size_t j = n - 1;
    while (a[j] <= a[i - 1])
        j--;
    size_t t = a[i - 1];
    a[i - 1] = a[j];
    a[j] = t;
    for (size_t l = i, r = n - 1; l < r; l++, r--) {
        t = a[l];
        a[l] = a[r];
        a[r] = t;
    }
    return true;
}

static void print_scenario(const struct scenario *s)
{
    const struct penalty *b = &s->base.penalty;
    fprintf(stderr, "base rev %llu level %d until %llu quiet %llu exempt %llu\n",
            (unsigned long long)s->base.rev, b->level, (unsigned long long)b->until,
            (unsigned long long)b->quiet_since, (unsigned long long)s->base.exempt_until);
    for (size_t i = 0; i < s->count; i++) {
        const struct standing_change *c = &s->changes[i];
        fprintf(stderr, "  %zu: %s %s seq %llu after %llu: level %d until %llu quiet %llu exempt %llu\n",
                i, c->node, standing_change_name(c->kind), (unsigned long long)c->seq,
                (unsigned long long)c->after_seq, c->penalty.level,
                (unsigned long long)c->penalty.until, (unsigned long long)c->penalty.quiet_since,
                (unsigned long long)c->exempt_until);
    }
}

/* Whether every possible order of s gives the same penalty and
 * exempt_until; prints the scenario and two orders that differ if not. */
static bool same_result(const struct shared_standing *a, const struct shared_standing *b,
                        uint64_t quiet_slack)
{
    struct penalty pa = a->penalty, pb = b->penalty;
    uint64_t d = pa.quiet_since > pb.quiet_since ? pa.quiet_since - pb.quiet_since
                                                 : pb.quiet_since - pa.quiet_since;
    if (d > quiet_slack)
        return false;
    pa.quiet_since = pb.quiet_since = 0;
    return penalty_compare(&pa, &pb) == 0 && a->exempt_until == b->exempt_until;
}

static bool order_free(const struct scenario *s, uint64_t quiet_slack)
{
    size_t order[4] = {0, 1, 2, 3};
    struct shared_standing first, got;
    size_t first_order[4];
    bool have = false;
    do {
        if (!order_possible(s, order))
            continue;
        run_order(s, order, &got);
        if (!have) {
            first = got;
            memcpy(first_order, order, sizeof(order));
            have = true;
        } else if (!same_result(&got, &first, quiet_slack)) {
            print_scenario(s);
            fprintf(stderr, "  order %zu%zu%zu%zu: level %d until %llu quiet %llu exempt %llu\n",
                    first_order[0], first_order[1], first_order[2], first_order[3],
                    first.penalty.level, (unsigned long long)first.penalty.until,
                    (unsigned long long)first.penalty.quiet_since,
                    (unsigned long long)first.exempt_until);
            fprintf(stderr, "  order %zu%zu%zu%zu: level %d until %llu quiet %llu exempt %llu\n",
                    order[0], order[1], order[2], order[3], got.penalty.level,
                    (unsigned long long)got.penalty.until,
                    (unsigned long long)got.penalty.quiet_since, (unsigned long long)got.exempt_until);
            return false;
        }
    } while (next_permutation(order, s->count));
    return true;
}

static void test_every_order(void **state)
{
    (void)state;
    unsigned failed = 0;
    node_time = false;
    for (int i = 0; i < 20000; i++) {
        struct scenario s;
        make_scenario(&s);
        if (!order_free(&s, 0) && ++failed >= 3)
            break;
    }
    assert_int_equal(failed, 0);
}

/* With each node's own clock, racing lowers from one row differ in the
 * moment they stamp (quiet_since), and the first stored stands: the
 * orders agree on all else, and on quiet_since within the spread of the
 * nodes' clocks (here 5 s past the due moment, plus the steps' 20 s). */
static void test_every_order_node_clocks(void **state)
{
    (void)state;
    unsigned failed = 0;
    node_time = true;
    for (int i = 0; i < 20000; i++) {
        struct scenario s;
        make_scenario(&s);
        if (!order_free(&s, 100 * SEC) && ++failed >= 3)
            break;
    }
    node_time = false;
    assert_int_equal(failed, 0);
}

/* A row from the cluster enters the engine through engine_take_standing:
 * taken when it differs from what the engine holds, and only then. */
static void test_take_standing(void **state)
{
    (void)state;
    struct engine_state e = {0};
    struct user_state *us = engine_user(&e, 2000000001, true);
    us->level = 1;
    us->since = T0;
    us->cpu_over_since = T0 + 5 * SEC; /* the window watched: this node's own */
    struct penalty p = at_level(3, T0 + SEC, T0 + 3600 * SEC);
    assert_true(engine_take_standing(&e, 2000000001, &p, 0));
    us = engine_user(&e, 2000000001, false);
    assert_non_null(us);
    assert_int_equal(us->level, 3);
    assert_int_equal(us->until, T0 + 3600 * SEC);
    assert_int_equal(us->violations, 3);
    assert_int_equal(us->cpu_over_since, T0 + 5 * SEC);
    /* The same row again changes nothing. */
    assert_false(engine_take_standing(&e, 2000000001, &p, 0));
    assert_int_equal(engine_user(&e, 2000000001, false)->level, 3);
    /* An exemption alone is a change; a user the engine did not know is
     * made. */
    assert_true(engine_take_standing(&e, 2000000001, &p, T0 + 7200 * SEC));
    assert_int_equal(engine_user(&e, 2000000001, false)->exempt_until, T0 + 7200 * SEC);
    assert_true(engine_take_standing(&e, 2000000002, &p, 0));
    assert_int_equal(engine_user(&e, 2000000002, false)->level, 3);
    engine_state_free(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),         cmocka_unit_test(test_compare),
        cmocka_unit_test(test_user_round_trip), cmocka_unit_test(test_raise_current),
        cmocka_unit_test(test_raise_stale),   cmocka_unit_test(test_lower),
        cmocka_unit_test(test_forgive),       cmocka_unit_test(test_exempt),
        cmocka_unit_test(test_after_seq),     cmocka_unit_test(test_every_order),
        cmocka_unit_test(test_every_order_node_clocks), cmocka_unit_test(test_take_standing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
