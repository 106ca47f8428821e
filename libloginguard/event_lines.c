#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "event_lines.h"
#include "util.h"

static void hold(struct event_lines *l, const char *data, size_t n)
{
    if (l->skipping)
        return;
    if (l->len + n > EVENT_LINE_MAX) {
        /* Counted once, here; the rest of it up to its '\n' is skipped. */
        l->oversized++;
        l->skipping = true;
        l->len = 0;
        return;
    }
    if (l->len + n > l->cap) {
        size_t cap = l->cap ? l->cap : 4096;
        while (cap < l->len + n)
            cap *= 2;
        l->buf = xreallocarray(l->buf, cap, 1);
        l->cap = cap;
    }
    memcpy(l->buf + l->len, data, n);
    l->len += n;
}

void event_lines_feed(struct event_lines *l, const char *data, size_t n, event_line_fn *fn,
                      void *arg)
{
    while (n > 0) {
        const char *nl = memchr(data, '\n', n);
        size_t piece = nl ? (size_t)(nl - data) : n;
        if (!nl) {
            hold(l, data, piece);
            return;
        }
        if (l->skipping) {
            l->skipping = false;
        } else if (l->len == 0) {
            if (piece <= EVENT_LINE_MAX)
                fn(data, piece, arg); /* whole in this read: no copy */
            else
                l->oversized++;
        } else {
            hold(l, data, piece);
            if (!l->skipping)
                fn(l->buf, l->len, arg);
            l->skipping = false;
        }
        l->len = 0;
        data += piece + 1;
        n -= piece + 1;
    }
}

bool event_lines_pending(const struct event_lines *l)
{
    return l->len > 0 || l->skipping;
}

bool event_lines_drop(struct event_lines *l)
{
    bool had = l->len > 0;
    l->len = 0;
    l->skipping = false;
    return had;
}

void event_lines_free(struct event_lines *l)
{
    free(l->buf);
    memset(l, 0, sizeof(*l));
}
