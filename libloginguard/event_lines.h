/* The event log as a reader takes it: bytes split into lines, each at
 * most EVENT_LINE_MAX bytes.  The daemon writes a line with one write(2),
 * but a reader may read while that write is under way, so a line without
 * its '\n' yet is held until the rest comes. */
#ifndef LOGINGUARD_EVENT_LINES_H
#define LOGINGUARD_EVENT_LINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The longest line the daemon writes is a violation with TOP_PROCS
 * processes, each with a command line and an executable at the most the
 * events show of them (EVENT_ARGV_MAX, EVENT_EXE_MAX): 11.8 KiB, as
 * test_events measures.  A line longer than this is not the daemon's and
 * is skipped. */
#define EVENT_LINE_MAX (64 * 1024)

struct event_lines {
    char *buf;          /* a line begun, not yet ended */
    size_t len, cap;
    bool skipping;      /* inside a line already past EVENT_LINE_MAX */
    uint64_t oversized; /* lines skipped for their length */
};

typedef void event_line_fn(const char *line, size_t len, void *arg);

/* Each line that n more bytes complete, without its '\n', to fn. */
void event_lines_feed(struct event_lines *l, const char *data, size_t n, event_line_fn *fn,
                      void *arg);
/* Whether a line is begun and not ended. */
bool event_lines_pending(const struct event_lines *l);
/* The file is done with (rotated away and read to its end, or cut short
 * by copytruncate): a line held is dropped, as it will never be ended;
 * returns whether there was one. */
bool event_lines_drop(struct event_lines *l);
void event_lines_free(struct event_lines *l);

#endif
