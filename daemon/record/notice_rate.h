/* The rate limit on notices: at most one notice of a kind per user per
 * [notify] rate_limit, across restarts (a crash loop must not flood
 * users), so the times are kept in STATE_DIR/notified.json:
 *   {"sent": [{"uid": N, "kind": "throttled", "time": usec}, ...]}
 * Only entries still inside the limit are written. */
#ifndef LOGINGUARD_NOTICE_RATE_H
#define LOGINGUARD_NOTICE_RATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "notices.h"

struct notice_sent {
    uid_t uid;
    enum notice_kind kind;
    uint64_t time;  /* realtime usec */
};

struct notice_rate {
    struct notice_sent *items;
    size_t count, capacity;
};

/* May uid be sent a notice of kind now? */
bool notice_rate_due(const struct notice_rate *r, uid_t uid, enum notice_kind kind, uint64_t now,
                     uint64_t rate_limit);
/* A notice of kind reached uid now (on some channel). */
void notice_rate_note(struct notice_rate *r, uid_t uid, enum notice_kind kind, uint64_t now);
/* Forget every notice sent to uid: an admin forgave them, and the next
 * thing they do wrong is news to be told. */
void notice_rate_forget(struct notice_rate *r, uid_t uid);
/* Forget what is older than rate_limit. */
void notice_rate_prune(struct notice_rate *r, uint64_t now, uint64_t rate_limit);
int notice_rate_save(const struct notice_rate *r, const char *state_dir, char *err, size_t err_len);
/* A missing or unreadable file starts empty (err says why when it was
 * there but bad); returns 0 or -1. */
int notice_rate_load(struct notice_rate *r, const char *state_dir, char *err, size_t err_len);
void notice_rate_free(struct notice_rate *r);

#endif
