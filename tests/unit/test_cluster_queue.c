/* The queue of records for the cluster's database: kept across restarts,
 * seq numbers never given twice, dropped once stored, bounded. */
#include "config.h"

#include <jansson.h>

#include "cluster/cluster_queue.h"
#include "testutil.h"

static char err[1024];

static void open_queue(struct cluster_queue *q, uint64_t limit, size_t *skipped)
{
    size_t none;
    int rc = cluster_queue_open(q, test_dir, limit, skipped ? skipped : &none, err, sizeof(err));
    if (rc < 0)
        fprintf(stderr, "%s\n", err);
    assert_int_equal(rc, 0);
}

static uint64_t add_change(struct cluster_queue *q, uid_t uid, const char *kind)
{
    json_t *r = json_pack("{s:s, s:s, s:I, s:I, s:I}", "t", "record", "kind", kind, "uid",
                          (json_int_t)uid, "base_rev", (json_int_t)0, "after_seq", (json_int_t)0);
    uint64_t seq = cluster_queue_add(q, r, true, uid, NULL);
    json_decref(r);
    return seq;
}

static uint64_t add_event(struct cluster_queue *q, const char *name, bool *first)
{
    json_t *r = json_pack("{s:s, s:s, s:{s:s}}", "t", "record", "kind", "event", "event",
                          "event", name);
    uint64_t seq = cluster_queue_add(q, r, false, CLUSTER_NO_UID, first);
    json_decref(r);
    return seq;
}

static off_t file_size(const char *name)
{
    char path[256];
    struct stat sb;
    snprintf(path, sizeof(path), "%s/%s", test_dir, name);
    return stat(path, &sb) == 0 ? sb.st_size : -1;
}

static void test_kept_across_restarts(void **state)
{
    (void)state;
    make_test_dir();
    struct cluster_queue q;
    open_queue(&q, 0, NULL);
    assert_int_equal(q.count, 0);
    assert_int_equal(add_change(&q, 2000000001, "raise"), 1);
    assert_int_equal(add_event(&q, "violation", NULL), 2);
    assert_int_equal(add_change(&q, 2000000002, "lower"), 3);
    assert_int_equal(cluster_queue_sync(&q, err, sizeof(err)), 0);
    char first[256];
    snprintf(first, sizeof(first), "%s", q.items[0].text);
    cluster_queue_close(&q);

    char path[256];
    snprintf(path, sizeof(path), "%s/%s", test_dir, CLUSTER_QUEUE_FILE);
    struct stat sb;
    assert_int_equal(lstat(path, &sb), 0);
    assert_int_equal(sb.st_mode & 07777, 0600);

    open_queue(&q, 0, NULL);
    assert_int_equal(q.count, 3);
    assert_int_equal(q.last_seq, 3);
    assert_string_equal(q.items[0].text, first);
    json_t *o = json_loads(first, 0, NULL);
    assert_int_equal(json_integer_value(json_object_get(o, "seq")), 1);
    assert_string_equal(json_string_value(json_object_get(o, "kind")), "raise");
    json_decref(o);
    assert_true(q.items[0].change);
    assert_false(q.items[1].change);
    assert_int_equal(q.items[1].uid, CLUSTER_NO_UID);
    assert_int_equal(cluster_queue_last_change(&q, 2000000002), 3);
    assert_int_equal(cluster_queue_last_change(&q, 2000000003), 0);
    assert_int_equal(cluster_queue_after(&q, 0)->seq, 1);
    assert_int_equal(cluster_queue_after(&q, 1)->seq, 2);
    assert_null(cluster_queue_after(&q, 3));
    assert_int_equal(add_change(&q, 2000000001, "lower"), 4);
    cluster_queue_close(&q);
    remove_test_dir();
}

static void test_stored_dropped_seq_kept(void **state)
{
    (void)state;
    make_test_dir();
    struct cluster_queue q;
    open_queue(&q, 0, NULL);
    for (int i = 0; i < 5; i++)
        add_change(&q, 2000000001, "raise");
    assert_int_equal(cluster_queue_stored(&q, 2, err, sizeof(err)), 0);
    assert_int_equal(q.count, 3);
    assert_int_equal(q.items[0].seq, 3);
    assert_int_equal(cluster_queue_after(&q, 2)->seq, 3);
    /* All stored: the file is emptied, the seq kept beside it. */
    assert_int_equal(cluster_queue_stored(&q, 5, err, sizeof(err)), 0);
    assert_int_equal(q.count, 0);
    assert_int_equal(file_size(CLUSTER_QUEUE_FILE), 0);
    assert_true(file_size(CLUSTER_SEQ_FILE) > 0);
    cluster_queue_close(&q);
    open_queue(&q, 0, NULL);
    assert_int_equal(q.count, 0);
    assert_int_equal(add_change(&q, 2000000001, "lower"), 6);
    /* The database knows more of this node than the node (its state
     * directory was wiped): numbering goes on past it. */
    assert_int_equal(cluster_queue_stored(&q, 40, err, sizeof(err)), 0);
    assert_int_equal(add_change(&q, 2000000001, "lower"), 41);
    cluster_queue_close(&q);
    open_queue(&q, 0, NULL);
    assert_int_equal(q.last_seq, 41);
    cluster_queue_close(&q);
    remove_test_dir();
}

static void test_torn_and_bad_lines(void **state)
{
    (void)state;
    make_test_dir();
    write_file(CLUSTER_QUEUE_FILE,
               "{\"t\":\"record\",\"kind\":\"raise\",\"uid\":7,\"seq\":1}\n"
               "not json\n"
               "{\"t\":\"record\",\"kind\":\"event\",\"seq\":2,\"event\":{}}\n"
               "{\"t\":\"record\",\"kind\":\"raise\",\"uid\":7,\"seq\":2}\n"
               "{\"t\":\"record\",\"kind\":\"lower\",\"ui");
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", test_dir, CLUSTER_QUEUE_FILE);
    chmod(path, 0600);
    struct cluster_queue q;
    size_t skipped;
    open_queue(&q, 0, &skipped);
    /* The torn line is cut off; the bad one and the repeated seq skipped. */
    assert_int_equal(skipped, 2);
    assert_int_equal(q.count, 2);
    assert_int_equal(q.last_seq, 2);
    assert_true(q.broken);
    assert_int_equal(cluster_queue_sync(&q, err, sizeof(err)), 0);
    cluster_queue_close(&q);
    open_queue(&q, 0, &skipped);
    assert_int_equal(skipped, 0);
    assert_int_equal(q.count, 2);
    cluster_queue_close(&q);
    remove_test_dir();
}

static void test_limit_refuses_events_not_changes(void **state)
{
    (void)state;
    make_test_dir();
    struct cluster_queue q;
    open_queue(&q, 300, NULL);
    bool first;
    int queued = 0;
    while (add_event(&q, "limits_set", &first) > 0)
        queued++;
    assert_true(queued >= 3);
    assert_true(first);
    assert_int_equal(add_event(&q, "limits_set", &first), 0);
    assert_false(first);
    assert_int_equal(q.refused_total, 2);
    uint64_t seq = add_change(&q, 2000000001, "raise");
    assert_int_equal(seq, (uint64_t)queued + 1);
    /* Below the limit again: a later overflow is news again. */
    assert_int_equal(cluster_queue_stored(&q, seq, err, sizeof(err)), 0);
    while (add_event(&q, "limits_set", &first) > 0)
        ;
    assert_true(first);
    cluster_queue_close(&q);
    remove_test_dir();
}

static void test_compaction(void **state)
{
    (void)state;
    make_test_dir();
    struct cluster_queue q;
    open_queue(&q, 0, NULL);
    for (int i = 0; i < 12000; i++)
        add_event(&q, "limits_set_with_a_longer_name_to_fill_a_hundred_bytes_or_so", NULL);
    off_t before = file_size(CLUSTER_QUEUE_FILE);
    assert_true(before > (1 << 20));
    assert_int_equal(cluster_queue_stored(&q, 11000, err, sizeof(err)), 0);
    off_t after = file_size(CLUSTER_QUEUE_FILE);
    assert_true(after < before / 10);
    /* Appending goes on into the new file. */
    add_event(&q, "x", NULL);
    cluster_queue_close(&q);
    open_queue(&q, 0, NULL);
    assert_int_equal(q.count, 1001);
    assert_int_equal(q.items[0].seq, 11001);
    assert_int_equal(q.last_seq, 12001);
    cluster_queue_close(&q);
    remove_test_dir();
}

static void test_symlink_refused(void **state)
{
    (void)state;
    make_test_dir();
    char target[256], link[256];
    snprintf(target, sizeof(target), "%s/elsewhere", test_dir);
    snprintf(link, sizeof(link), "%s/%s", test_dir, CLUSTER_QUEUE_FILE);
    assert_int_equal(symlink(target, link), 0);
    struct cluster_queue q;
    size_t skipped;
    assert_int_equal(cluster_queue_open(&q, test_dir, 0, &skipped, err, sizeof(err)), -1);
    assert_non_null(strstr(err, CLUSTER_QUEUE_FILE));
    assert_int_equal(access(target, F_OK), -1);
    /* Kept in memory meanwhile. */
    assert_int_equal(add_change(&q, 2000000001, "raise"), 1);
    assert_int_equal(q.count, 1);
    cluster_queue_close(&q);
    remove_test_dir();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kept_across_restarts),
        cmocka_unit_test(test_stored_dropped_seq_kept),
        cmocka_unit_test(test_torn_and_bad_lines),
        cmocka_unit_test(test_limit_refuses_events_not_changes),
        cmocka_unit_test(test_compaction),
        cmocka_unit_test(test_symlink_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
