/* The engine's per-user state on disk, so that a restart or a crash
 * (kill -9) of the daemon loses no penalty.
 *
 * DIR/state.json is one JSON object:
 *   {"version": 1, "saved": <usec>,
 *    "users": [{"uid": N, "level": N, "since": usec, "until": usec,
 *               "quiet_since": usec, "last_violation": usec,
 *               "violations": N, "exempt_until": usec,
 *               "last": {"reason": "cpu", "cpu": cores, "memory": bytes,
 *                        "window": usec}}, ...]}
 * Times are integers, microseconds since the epoch (UTC), 0 = none.
 * Every field shown is required when loading, but "last" (the last
 * violation, absent before the first and in older files); other keys are
 * ignored.
 * Only users with something to remember (a level, limits until a time, an
 * exemption or past violations) are written.  The window being watched
 * (cpu_over_*, mem_over_*) is not: after a restart it starts afresh.
 *
 * Files in DIR are opened without following symlinks and must be regular
 * files: the directory may sit on a path a user can influence on a
 * misconfigured node, and root must not be steered into writing or
 * reading somewhere else.  DIR itself is taken as the admin named it. */
#ifndef LOGINGUARD_STATE_H
#define LOGINGUARD_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "engine.h"

#define STATE_FILE "state.json"
#define STATE_VERSION 1
#define STATE_MAX_LEVEL 64

/* Write st's users to DIR/state.json atomically: any old
 * DIR/state.json.tmp is removed, a new one is created (O_EXCL,
 * O_NOFOLLOW, mode 0600), written, fsynced and renamed over state.json,
 * then the directory is fsynced, so that after a crash state.json is the
 * old file or the new one, whole.  now (realtime usec) goes in "saved".
 * Returns 0, or -1 with err naming the file and what to do (nothing is
 * left behind: the old state.json stays as it was). */
int state_save(const char *dir, const struct engine_state *st, uint64_t now, char *err,
               size_t err_len);

enum state_load_result {
    STATE_LOADED,       /* st holds the saved users */
    STATE_ABSENT,       /* no state.json (or no DIR): a first start */
    STATE_MOVED_ASIDE,  /* state.json was bad and is now moved_to; st is empty */
    STATE_ERROR,        /* state.json could not be read; st is empty, err says why */
};

/* Read DIR/state.json into st, which must be empty (STATE_ERROR if not).
 * A file that does not parse, or has the wrong shape (a missing or
 * mistyped field, a uid that does not fit uid_t, a level outside 0..64, a
 * negative time, a uid listed twice, a version other than 1) is renamed
 * to DIR/state.json.bad-<now in seconds> (".1", ".2"... appended if that
 * name is taken), its path put in moved_to, what was wrong put in err, and
 * st stays empty: the daemon starts clean rather than refusing to run,
 * and the admin keeps the bytes to look at.  One bad user entry makes the
 * whole file bad: half a state is worse than a clean start.
 * Absent file (or absent DIR): STATE_ABSENT.  Unreadable (permissions, a
 * symlink, not a regular file) or not movable aside: STATE_ERROR with
 * err.  now is realtime usec. */
enum state_load_result state_load(const char *dir, struct engine_state *st, uint64_t now,
                                  char *moved_to, size_t moved_len, char *err, size_t err_len);

#endif
