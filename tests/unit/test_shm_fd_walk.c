/* The walks over users' descriptors (shm_fd_walk.h), on synthetic
 * answers: each object once per owner, budgets that stop a walk for the
 * sweep and the next sweep going on, a whole walk's figure, and owners
 * who have left. */
#include "config.h"

#include "observe/shm_fd_walk.h"
#include "testutil.h"

#define OWNER 1000

static struct fd_walk_proc proc(uid_t owner, pid_t pid)
{
    return (struct fd_walk_proc){owner, pid, (uint64_t)pid * 10};
}

/* The answer to q: objects (count of them), looked descriptors, next_fd. */
static void answer(struct fd_walk *w, uid_t owner, const struct fd_walk_request *q,
                   const struct shm_fd_object *objects, uint32_t count, uint32_t looked,
                   int32_t next_fd)
{
    struct shm_fds_reply r = {.next_fd = next_fd, .looked = looked, .count = count};
    if (count)
        memcpy(r.objects, objects, count * sizeof(*objects));
    struct argv_answer a = {
        .kind = ARGV_SHM_FDS, .pid = q->pid, .start_time = q->start_time, .tag = owner,
        .status = ARGV_OK, .argv = (const char *)&r, .len = SHM_FDS_REPLY_SIZE(count),
    };
    fd_walk_take(w, &a);
}

static void answer_status(struct fd_walk *w, uid_t owner, const struct fd_walk_request *q,
                          enum argv_status status)
{
    struct argv_answer a = {
        .kind = ARGV_SHM_FDS, .pid = q->pid, .start_time = q->start_time, .tag = owner,
        .status = status, .argv = "",
    };
    fd_walk_take(w, &a);
}

static void expect_ask(struct fd_walk *w, uid_t owner, pid_t pid, int from,
                       struct fd_walk_request *q)
{
    uint64_t bytes;
    assert_int_equal(fd_walk_next(w, owner, q, &bytes), FD_WALK_ASK);
    assert_int_equal(q->pid, pid);
    assert_int_equal(q->from, from);
    fd_walk_sent(w, owner);
}

static uint64_t expect_done(struct fd_walk *w, uid_t owner)
{
    struct fd_walk_request q;
    uint64_t bytes = 12345;
    assert_int_equal(fd_walk_next(w, owner, &q, &bytes), FD_WALK_DONE);
    return bytes;
}

/* One object held by two processes (and twice by one) counts once; a
 * process gone meanwhile is passed. */
static void test_each_object_counts_once(void **state)
{
    (void)state;
    struct fd_walk w;
    fd_walk_init(&w);
    struct fd_walk_proc procs[] = {proc(OWNER, 30), proc(OWNER, 10), proc(OWNER, 20)};
    fd_walk_begin(&w, procs, 3);
    const struct shm_fd_object big = {1, 100, 600 << 20}, small = {1, 101, 1 << 20};
    const struct shm_fd_object both[] = {big, small};
    struct fd_walk_request q;
    uint64_t bytes;
    expect_ask(&w, OWNER, 10, 0, &q);
    /* One request out at a time. */
    assert_int_equal(fd_walk_next(&w, OWNER, &q, &bytes), FD_WALK_WAIT);
    answer(&w, OWNER, &q, both, 2, 5, -1);
    expect_ask(&w, OWNER, 20, 0, &q);
    answer_status(&w, OWNER, &q, ARGV_GONE);
    expect_ask(&w, OWNER, 30, 0, &q);
    answer(&w, OWNER, &q, &big, 1, 5, -1);
    assert_int_equal(expect_done(&w, OWNER), (600 << 20) + (1 << 20));
    /* The next walk waits for the next sweep. */
    assert_int_equal(fd_walk_next(&w, OWNER, &q, &bytes), FD_WALK_WAIT);
    fd_walk_free(&w);
}

/* Each owner counts what they hold, the same object for each. */
static void test_owners_apart(void **state)
{
    (void)state;
    struct fd_walk w;
    fd_walk_init(&w);
    struct fd_walk_proc procs[] = {proc(OWNER + 1, 5), proc(OWNER, 7)};
    fd_walk_begin(&w, procs, 2);
    const struct shm_fd_object o = {1, 100, 20 << 20};
    struct fd_walk_request q, r;
    expect_ask(&w, OWNER, 7, 0, &q);
    expect_ask(&w, OWNER + 1, 5, 0, &r);
    answer(&w, OWNER + 1, &r, &o, 1, 1, -1);
    answer(&w, OWNER, &q, &o, 1, 1, -1);
    assert_int_equal(expect_done(&w, OWNER), 20 << 20);
    assert_int_equal(expect_done(&w, OWNER + 1), 20 << 20);
    size_t n;
    const struct fd_walk_proc *mine = fd_walk_procs_of(&w, OWNER, &n);
    assert_int_equal(n, 1);
    assert_int_equal(mine[0].pid, 7);
    fd_walk_free(&w);
}

/* A process with more descriptors than a sweep looks at: the walk stops
 * at FD_WALK_BUDGET, the next sweep goes on from the descriptor where it
 * stopped, and only then does the whole walk say what it found. */
static void test_budget_goes_on_next_sweep(void **state)
{
    (void)state;
    struct fd_walk w;
    fd_walk_init(&w);
    struct fd_walk_proc procs[] = {proc(OWNER, 10)};
    fd_walk_begin(&w, procs, 1);
    const struct shm_fd_object o = {1, 100, 300 << 20};
    struct fd_walk_request q;
    uint64_t bytes;
    int from = 0;
    for (uint32_t looked = 0; looked < FD_WALK_BUDGET; looked += FD_WALK_REQUEST) {
        expect_ask(&w, OWNER, 10, from, &q);
        assert_int_equal(q.budget, FD_WALK_REQUEST);
        from += FD_WALK_REQUEST;
        answer(&w, OWNER, &q, &o, 1, FD_WALK_REQUEST, from);
    }
    assert_int_equal(fd_walk_next(&w, OWNER, &q, &bytes), FD_WALK_WAIT);
    fd_walk_begin(&w, procs, 1);
    expect_ask(&w, OWNER, 10, from, &q);
    answer(&w, OWNER, &q, &o, 1, 3, -1);
    assert_int_equal(expect_done(&w, OWNER), 300 << 20);
    fd_walk_free(&w);
}

/* More processes than requests a sweep: the same. */
static void test_request_cap_goes_on_next_sweep(void **state)
{
    (void)state;
    struct fd_walk w;
    fd_walk_init(&w);
    size_t n = FD_WALK_REQUESTS + 10;
    struct fd_walk_proc *procs = calloc(n, sizeof(*procs));
    for (size_t i = 0; i < n; i++)
        procs[i] = proc(OWNER, (pid_t)(100 + i));
    fd_walk_begin(&w, procs, n);
    const struct shm_fd_object o = {1, 100, 64 << 20};
    struct fd_walk_request q;
    uint64_t bytes;
    for (size_t i = 0; i < FD_WALK_REQUESTS; i++) {
        expect_ask(&w, OWNER, (pid_t)(100 + i), 0, &q);
        answer(&w, OWNER, &q, NULL, 0, 1, -1);
    }
    assert_int_equal(fd_walk_next(&w, OWNER, &q, &bytes), FD_WALK_WAIT);
    fd_walk_begin(&w, procs, n);
    for (size_t i = FD_WALK_REQUESTS; i < n; i++) {
        expect_ask(&w, OWNER, (pid_t)(100 + i), 0, &q);
        answer(&w, OWNER, &q, i == n - 1 ? &o : NULL, i == n - 1, 1, -1);
    }
    assert_int_equal(expect_done(&w, OWNER), 64 << 20);
    free(procs);
    fd_walk_free(&w);
}

/* The pid the walk stopped in is another process now: it starts from
 * its first descriptor. */
static void test_reused_pid_starts_over(void **state)
{
    (void)state;
    struct fd_walk w;
    fd_walk_init(&w);
    struct fd_walk_proc procs[] = {proc(OWNER, 10)};
    fd_walk_begin(&w, procs, 1);
    struct fd_walk_request q;
    for (uint32_t looked = 0; looked < FD_WALK_BUDGET; looked += FD_WALK_REQUEST) {
        expect_ask(&w, OWNER, 10, (int)looked, &q);
        answer(&w, OWNER, &q, NULL, 0, FD_WALK_REQUEST, (int32_t)(looked + FD_WALK_REQUEST));
    }
    procs[0].start_time++;
    fd_walk_begin(&w, procs, 1);
    expect_ask(&w, OWNER, 10, 0, &q);
    fd_walk_free(&w);
}

/* A request no helper took waits for the next sweep; one that stalled
 * goes on to the next process. */
static void test_error_waits_stall_passes(void **state)
{
    (void)state;
    struct fd_walk w;
    fd_walk_init(&w);
    struct fd_walk_proc procs[] = {proc(OWNER, 10), proc(OWNER, 20)};
    fd_walk_begin(&w, procs, 2);
    struct fd_walk_request q;
    uint64_t bytes;
    expect_ask(&w, OWNER, 10, 0, &q);
    answer_status(&w, OWNER, &q, ARGV_ERROR);
    assert_int_equal(fd_walk_next(&w, OWNER, &q, &bytes), FD_WALK_WAIT);
    fd_walk_begin(&w, procs, 2);
    expect_ask(&w, OWNER, 10, 0, &q);
    answer_status(&w, OWNER, &q, ARGV_BLOCKED);
    expect_ask(&w, OWNER, 20, 0, &q);
    fd_walk_free(&w);
}

/* An answer that is not the one asked for changes nothing. */
static void test_stray_answer_ignored(void **state)
{
    (void)state;
    struct fd_walk w;
    fd_walk_init(&w);
    struct fd_walk_proc procs[] = {proc(OWNER, 10)};
    fd_walk_begin(&w, procs, 1);
    struct fd_walk_request q, other = {.pid = 11, .start_time = 110};
    const struct shm_fd_object o = {1, 100, 64 << 20};
    expect_ask(&w, OWNER, 10, 0, &q);
    answer(&w, OWNER, &other, &o, 1, 1, -1);
    answer(&w, OWNER + 1, &q, &o, 1, 1, -1);
    answer(&w, OWNER, &q, NULL, 0, 1, -1);
    assert_int_equal(expect_done(&w, OWNER), 0);
    fd_walk_free(&w);
}

/* More objects than a walk remembers: those past it count each time
 * they are seen (more, never less). */
static void test_objects_past_the_cap_count_each_time(void **state)
{
    (void)state;
    struct fd_walk w;
    fd_walk_init(&w);
    struct fd_walk_proc procs[] = {proc(OWNER, 10), proc(OWNER, 20)};
    fd_walk_begin(&w, procs, 2);
    struct shm_fd_object objects[SHM_FDS_OBJECTS];
    size_t sent = 0;
    struct fd_walk_request q;
    uint64_t pages = 0;
    /* Process 10: FD_WALK_OBJECTS + 1 objects of one page each. */
    for (int32_t fd = 0; sent < FD_WALK_OBJECTS + 1; fd += SHM_FDS_OBJECTS) {
        uint32_t count = 0;
        while (count < SHM_FDS_OBJECTS && sent < FD_WALK_OBJECTS + 1)
            objects[count++] = (struct shm_fd_object){1, 1000 + sent++, 4096};
        expect_ask(&w, OWNER, 10, fd, &q);
        bool more = sent < FD_WALK_OBJECTS + 1;
        answer(&w, OWNER, &q, objects, count, count, more ? fd + SHM_FDS_OBJECTS : -1);
        pages += count;
    }
    /* Process 20 holds the first and the last again. */
    objects[0] = (struct shm_fd_object){1, 1000, 4096};
    objects[1] = (struct shm_fd_object){1, 1000 + FD_WALK_OBJECTS, 4096};
    expect_ask(&w, OWNER, 20, 0, &q);
    answer(&w, OWNER, &q, objects, 2, 2, -1);
    assert_int_equal(expect_done(&w, OWNER), (pages + 1) * 4096);
    fd_walk_free(&w);
}

/* An owner with no process left: one walk says 0, and they are
 * forgotten at the next sweep. */
static void test_owner_gone(void **state)
{
    (void)state;
    struct fd_walk w;
    fd_walk_init(&w);
    struct fd_walk_proc procs[] = {proc(OWNER, 10)};
    fd_walk_begin(&w, procs, 1);
    const struct shm_fd_object o = {1, 100, 64 << 20};
    struct fd_walk_request q;
    expect_ask(&w, OWNER, 10, 0, &q);
    answer(&w, OWNER, &q, &o, 1, 1, -1);
    assert_int_equal(expect_done(&w, OWNER), 64 << 20);
    fd_walk_begin(&w, NULL, 0);
    assert_int_equal(w.count, 1);
    assert_int_equal(expect_done(&w, OWNER), 0);
    fd_walk_begin(&w, NULL, 0);
    assert_int_equal(w.count, 0);
    fd_walk_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_object_counts_once),
        cmocka_unit_test(test_owners_apart),
        cmocka_unit_test(test_budget_goes_on_next_sweep),
        cmocka_unit_test(test_request_cap_goes_on_next_sweep),
        cmocka_unit_test(test_reused_pid_starts_over),
        cmocka_unit_test(test_error_waits_stall_passes),
        cmocka_unit_test(test_stray_answer_ignored),
        cmocka_unit_test(test_objects_past_the_cap_count_each_time),
        cmocka_unit_test(test_owner_gone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
