/* A datagram on the taskstats socket: the kernel's exit records, one per
 * ended thread, summed per process in a table that lives across
 * records.  The input is fed twice to one listener, so that records of
 * the second pass meet the sums (and the finished groups) of the
 * first. */
#include "config.h"

#include <string.h>

#include "fuzz.h"
#include "observe/taskstats.h"

#define FAMILY 31 /* the generic-netlink id the corpus is written for */

static void check_exit(const struct ts_exit *e, void *arg)
{
    unsigned *exits = arg;
    (*exits)++;
    FUZZ_CHECK(e->tgid > 0);
    FUZZ_CHECK(e->threads >= 1);
    FUZZ_CHECK(memchr(e->comm, '\0', sizeof(e->comm)) != NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct taskstats_listener t;
    unsigned exits = 0;
    taskstats_init(&t, FAMILY);
    for (int pass = 0; pass < 2; pass++)
        taskstats_feed(&t, data, size, 0, check_exit, &exits);
    FUZZ_CHECK(exits == t.exits);
    FUZZ_CHECK(t.group_count <= TS_GROUPS_MAX && t.group_count <= t.records);
    FUZZ_CHECK(taskstats_feed(&t, data, size, 4242, check_exit, &exits) == 0);
    FUZZ_CHECK(exits == t.exits);
    taskstats_close(&t);
    return 0;
}
