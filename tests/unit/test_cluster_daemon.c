/* The daemon's side of the cluster's link through its view, without a
 * link program or a database: a node in no cluster says nothing, a link
 * that cannot start is said and leaves the node queueing its changes on
 * disk.  (The records' contents are test_cluster's, the link itself the
 * integration tests'.) */
#include "config.h"

#include <jansson.h>

#include "cluster/cluster_daemon.h"
#include "fake_env.h"
#include "testutil.h"

#define UID 2000000001u

/* What the core would do, counted. */
struct calls {
    int actions, counters_changed, save_state;
};

static struct actions no_actions(void *core)
{
    ((struct calls *)core)->actions++;
    return (struct actions){0};
}

static void count_counters(void *core)
{
    ((struct calls *)core)->counters_changed++;
}

static void count_save(void *core)
{
    ((struct calls *)core)->save_state++;
}

struct fixture {
    struct cluster cluster;
    struct environment env;
    struct policy policy;
    struct event_log events;
    struct engine_state engine;
    struct snapshot snap;
    struct decisions decisions;
    struct directory *directory;
    bool enforcing;
    struct calls calls;
    struct cluster_view view;
    char events_path[256];
};

/* database: [cluster] database, or NULL for a node in no cluster. */
static void open_fixture(struct fixture *f, const char *database)
{
    memset(f, 0, sizeof(*f));
    make_test_dir();
    fake_now = 1700000000ULL * SEC;
    environment_host(&f->env);
    f->env.realtime = fake_clock;
    f->env.boottime = fake_clock;
    policy_init_defaults(&f->policy);
    free(f->policy.state_dir);
    f->policy.state_dir = strdup(test_dir);
    f->policy.cluster_database = database ? strdup(database) : NULL;
    f->policy.cluster_node = strdup("login1");
    snprintf(f->events_path, sizeof(f->events_path), "%s/events.log", test_dir);
    assert_int_equal(event_log_open(&f->events, f->events_path, false), 0);
    f->snap.now = fake_now;
    f->enforcing = true;
    f->view = (struct cluster_view){
        .cluster = &f->cluster, .env = &f->env, .policy = &f->policy, .events = &f->events,
        .engine = &f->engine, .snap = &f->snap, .decisions = &f->decisions,
        .directory = f->directory, .enforcing = &f->enforcing, .core = &f->calls,
        .actions = no_actions, .counters_changed = count_counters, .save_state = count_save};
}

static void close_fixture(struct fixture *f)
{
    cluster_daemon_stop(&f->view);
    event_log_close(&f->events);
    decisions_free(&f->decisions);
    engine_state_free(&f->engine);
    policy_free(&f->policy);
    remove_test_dir();
}

/* The records of that kind in the queue's file. */
static int count_records(const char *kind)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", test_dir, CLUSTER_QUEUE_FILE);
    FILE *in = fopen(path, "r");
    if (!in)
        return -1;
    char line[65536];
    int n = 0;
    while (fgets(line, sizeof(line), in)) {
        json_t *r = json_loads(line, 0, NULL);
        assert_non_null(r);
        const char *k = json_string_value(json_object_get(r, "kind"));
        if (k && strcmp(k, kind) == 0 && json_integer_value(json_object_get(r, "uid")) == UID)
            n++;
        json_decref(r);
    }
    fclose(in);
    return n;
}

static json_int_t queued(struct fixture *f)
{
    json_t *s = cluster_daemon_status(&f->view);
    assert_non_null(s);
    json_int_t n = json_integer_value(json_object_get(s, "queued"));
    json_decref(s);
    return n;
}

static void raise_level(struct fixture *f, int level)
{
    struct user_state *us = engine_user(&f->engine, UID, true);
    us->level = level;
    us->since = fake_now;
    us->until = fake_now + 3600 * SEC;
    us->violations = (uint32_t)level;
    f->decisions.items = realloc(f->decisions.items, sizeof(*f->decisions.items));
    f->decisions.items[0] = (struct decision){.kind = DECISION_VIOLATION, .uid = UID,
                                              .level_before = level - 1, .level_after = level};
    f->decisions.count = f->decisions.capacity = 1;
}

static void test_no_cluster(void **state)
{
    (void)state;
    struct fixture f;
    open_fixture(&f, NULL);
    cluster_daemon_start(&f.view);
    assert_null(cluster_daemon_status(&f.view));
    assert_int_equal(cluster_daemon_deadline(&f.view), 0);
    raise_level(&f, 1);
    cluster_daemon_decisions(&f.view);
    cluster_daemon_change(&f.view, CHANGE_FORGIVE, UID, "admin");
    assert_int_equal(count_records("raise"), -1); /* no queue at all */
    assert_null(f.events.tap);
    close_fixture(&f);
}

static void test_link_cannot_start(void **state)
{
    (void)state;
    struct fixture f;
    open_fixture(&f, "host=db.invalid dbname=loginguard");
    char program[256];
    snprintf(program, sizeof(program), "%s/no-such-link", test_dir);
    setenv("LOGINGUARD_LINK_PROGRAM", program, 1);
    cluster_daemon_start(&f.view);
    unsetenv("LOGINGUARD_LINK_PROGRAM");
    assert_true(f.cluster.enabled);
    assert_int_equal(count_logged(f.events_path, "cluster_link_error", (uid_t)-1), 1);
    json_t *s = cluster_daemon_status(&f.view);
    assert_non_null(s);
    assert_string_equal(json_string_value(json_object_get(s, "node")), "login1");
    assert_string_equal(json_string_value(json_object_get(s, "link")), "off");
    json_decref(s);

    /* A raise is queued and on disk before it is acted on. */
    json_int_t before = queued(&f);
    raise_level(&f, 2);
    cluster_daemon_decisions(&f.view);
    assert_int_equal(queued(&f), before + 1);
    assert_int_equal(count_records("raise"), 1);
    /* So is an admin's forgive. */
    engine_forgive(&f.engine, UID, fake_now);
    cluster_daemon_change(&f.view, CHANGE_FORGIVE, UID, "admin");
    assert_int_equal(queued(&f), before + 2);
    assert_int_equal(count_records("forgive"), 1);
    /* The log's events are records too, while the node is in a cluster. */
    assert_ptr_equal(f.events.tap_arg, &f.view);
    /* Nothing came from a database: the core was asked for nothing. */
    assert_int_equal(f.calls.actions, 0);
    assert_int_equal(f.calls.counters_changed, 0);
    assert_int_equal(f.calls.save_state, 0);
    close_fixture(&f);
}

/* Nothing sent is lost at a restart: the queue is read back. */
static void test_queue_kept_across_restart(void **state)
{
    (void)state;
    struct fixture f;
    open_fixture(&f, "host=db.invalid");
    setenv("LOGINGUARD_LINK_PROGRAM", "/nonexistent/link", 1);
    cluster_daemon_start(&f.view);
    raise_level(&f, 1);
    cluster_daemon_decisions(&f.view);
    json_int_t n = queued(&f);
    cluster_daemon_stop(&f.view);
    assert_null(f.events.tap);
    cluster_daemon_start(&f.view);
    unsetenv("LOGINGUARD_LINK_PROGRAM");
    /* The records of before, and the start's cluster_link_error. */
    assert_int_equal(queued(&f), n + 1);
    assert_int_equal(count_records("raise"), 1);
    close_fixture(&f);
}

/* The link runs as a user of its own, never root: none is started. */
static void test_link_user_root_refused(void **state)
{
    (void)state;
    struct fixture f;
    open_fixture(&f, "host=db.invalid");
    f.policy.cluster_link_user = strdup("root");
    setenv("LOGINGUARD_LINK_PROGRAM", "/bin/true", 1);
    cluster_daemon_start(&f.view);
    unsetenv("LOGINGUARD_LINK_PROGRAM");
    assert_int_equal(count_logged(f.events_path, "cluster_link_error", (uid_t)-1), 1);
    assert_int_equal(f.cluster.pid, 0);
    assert_int_equal(f.cluster.fd, -1);
    json_t *s = cluster_daemon_status(&f.view);
    assert_string_equal(json_string_value(json_object_get(s, "link")), "off");
    json_decref(s);
    /* Not started, so not started again either: no deadline. */
    assert_int_equal(cluster_daemon_deadline(&f.view), 0);
    close_fixture(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_cluster),
        cmocka_unit_test(test_link_cannot_start),
        cmocka_unit_test(test_queue_kept_across_restart),
        cmocka_unit_test(test_link_user_root_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
