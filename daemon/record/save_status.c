#include "config.h"

#include "record/save_status.h"

enum save_news save_status_note(struct save_status *s, bool written, uint64_t now)
{
    s->pending = !written;
    if (written) {
        if (!s->failing)
            return SAVE_NOTHING_NEW;
        s->failing = false;
        return SAVE_WRITTEN_AGAIN;
    }
    if (s->failing) {
        s->failures++;
        return SAVE_NOTHING_NEW;
    }
    s->failing = true;
    s->failing_since = now;
    s->failures = 1;
    return SAVE_STARTED_FAILING;
}
