/* Shared by the unit tests of the event log's readers (test_event_reader,
 * test_event_follow): a line callback that keeps a copy of each line it
 * is given, for the test to compare. */
#ifndef LOGINGUARD_SEEN_LINES_H
#define LOGINGUARD_SEEN_LINES_H

#include "testutil.h"

#define MAX_SEEN 64

struct seen {
    char *lines[MAX_SEEN];
    size_t count;
};

/* The readers' line callback (arg: a struct seen).  More lines than a
 * test expects is a failure, not an overflow. */
static inline void collect(const char *line, size_t len, void *arg)
{
    struct seen *s = arg;
    assert_true(s->count < MAX_SEEN);
    s->lines[s->count++] = strndup(line, len);
}

static inline void seen_free(struct seen *s)
{
    for (size_t i = 0; i < s->count; i++)
        free(s->lines[i]);
    s->count = 0;
}

#endif
