/* Whether a file the daemon keeps (state.json, notified.json) holds what
 * the daemon holds in memory.  A write that fails (a full disk, a quota,
 * an I/O error) loses nothing: memory keeps it, the failure is said once,
 * the write is tried again at every sample, and the first that works is
 * said too.  Pure: the caller writes and says. */
#ifndef LOGINGUARD_SAVE_STATUS_H
#define LOGINGUARD_SAVE_STATUS_H

#include <stdbool.h>
#include <stdint.h>

struct save_status {
    bool pending;            /* the file is behind memory: write it again */
    bool failing;            /* the last write failed */
    /* The first failed write of the latest run of them (realtime usec) and
     * how many there were; still there for SAVE_WRITTEN_AGAIN to report. */
    uint64_t failing_since;
    uint64_t failures;
};

enum save_news {
    SAVE_NOTHING_NEW,        /* as before: written, or failing again */
    SAVE_STARTED_FAILING,    /* the first failure: say so */
    SAVE_WRITTEN_AGAIN,      /* written after failures: say so */
};

/* The outcome of one write at now. */
enum save_news save_status_note(struct save_status *s, bool written, uint64_t now);

#endif
