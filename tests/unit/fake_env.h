/* What the unit tests of the daemon's parts on their views share: a
 * clock the test moves (for struct environment's realtime and boottime),
 * and the events a part wrote to its event log, read back. */
#ifndef LOGINGUARD_FAKE_ENV_H
#define LOGINGUARD_FAKE_ENV_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "testutil.h"

#define SEC 1000000ULL

static uint64_t fake_now;

static inline uint64_t fake_clock(void *clock)
{
    (void)clock;
    return fake_now;
}

/* The events named name in the log at path (and about uid, unless uid
 * is (uid_t)-1), in order: a JSON array the caller frees. */
static inline json_t *logged_events(const char *path, const char *name, uid_t uid)
{
    json_t *found = json_array();
    FILE *in = fopen(path, "r");
    assert_non_null(in);
    char line[65536];
    while (fgets(line, sizeof(line), in)) {
        json_t *e = json_loads(line, 0, NULL);
        assert_non_null(e);
        const char *event = json_string_value(json_object_get(e, "event"));
        if (event && strcmp(event, name) == 0 &&
            (uid == (uid_t)-1 || json_integer_value(json_object_get(e, "uid")) == (json_int_t)uid))
            json_array_append(found, e);
        json_decref(e);
    }
    fclose(in);
    return found;
}

/* How many of them there are. */
static inline int count_logged(const char *path, const char *name, uid_t uid)
{
    json_t *found = logged_events(path, name, uid);
    int n = (int)json_array_size(found);
    json_decref(found);
    return n;
}

/* test_dir/name made a regular file: a state_dir below it cannot be
 * written, not even by root. */
static inline void block(const char *name)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", test_dir, name);
    FILE *file = fopen(path, "w");
    assert_non_null(file);
    fclose(file);
}

#endif
