#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "history.h"
#include "util.h"

static size_t position(const struct history *h, uid_t uid)
{
    size_t lo = 0, hi = h->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (h->users[mid]->uid < uid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

const struct user_history *history_find(const struct history *h, uid_t uid)
{
    size_t at = position(h, uid);
    return at < h->count && h->users[at]->uid == uid ? h->users[at] : NULL;
}

static struct user_history *add(struct history *h, size_t at, uid_t uid, uint32_t minute)
{
    h->users = insert_at(h->users, &h->count, &h->capacity, sizeof(*h->users), at);
    struct user_history *u = xcalloc(1, sizeof(*u));
    u->uid = uid;
    u->minute = minute;
    h->users[at] = u;
    return u;
}

/* Move the ring on to minute, the minutes between at zero. */
static void advance(struct user_history *u, uint32_t minute)
{
    if (minute <= u->minute)
        return;
    uint32_t steps = minute - u->minute;
    for (uint32_t i = 0; i < steps && i < HISTORY_POINTS; i++) {
        u->newest = (uint8_t)((u->newest + 1) % HISTORY_POINTS);
        u->cpu[u->newest] = 0;
        u->memory[u->newest] = 0;
    }
    u->minute = minute;
    u->cpu_sum = 0;
    u->covered_usec = 0;
}

static void record(struct user_history *u, const struct user_sample *s, uint64_t interval)
{
    u->cpu_sum += s->cpu * (double)interval;
    uint64_t covered = u->covered_usec + interval;
    u->covered_usec = covered < HISTORY_STEP_USEC ? (uint32_t)covered : HISTORY_STEP_USEC;
    double avg = u->cpu_sum / (double)u->covered_usec * HISTORY_CPU_SCALE + 0.5;
    u->cpu[u->newest] = avg >= UINT16_MAX ? UINT16_MAX : (uint16_t)avg;
    uint64_t mib = s->memory >> 20;
    if (mib > UINT32_MAX)
        mib = UINT32_MAX;
    if (mib > u->memory[u->newest])
        u->memory[u->newest] = (uint32_t)mib;
}

static void free_idle(struct history *h, uint32_t minute)
{
    if (minute == h->swept_minute)
        return;
    h->swept_minute = minute;
    size_t kept = 0;
    for (size_t i = 0; i < h->count; i++) {
        if (minute - h->users[i]->active_minute >= HISTORY_POINTS)
            free(h->users[i]);
        else
            h->users[kept++] = h->users[i];
    }
    h->count = kept;
    if (kept == 0) {
        free(h->users);
        h->users = NULL;
        h->capacity = 0;
    }
}

void history_update(struct history *h, const struct snapshot *snap)
{
    uint32_t minute = (uint32_t)(snap->now / HISTORY_STEP_USEC);
    uint64_t interval = snap->interval < HISTORY_STEP_USEC ? snap->interval : HISTORY_STEP_USEC;
    for (size_t i = 0; i < snap->user_count; i++) {
        const struct user_sample *s = &snap->users[i];
        bool active = s->cpu >= HISTORY_ACTIVE_CPU || s->memory >= HISTORY_ACTIVE_MEMORY;
        size_t at = position(h, s->uid);
        struct user_history *u = at < h->count && h->users[at]->uid == s->uid ? h->users[at]
                                                                            : NULL;
        if (!u && !active)
            continue;
        if (!u)
            u = add(h, at, s->uid, minute);
        advance(u, minute);
        if (active)
            u->active_minute = minute;
        record(u, s, interval);
    }
    free_idle(h, minute);
}

void history_points(const struct user_history *u, uint64_t now, double cpu[HISTORY_POINTS],
                    uint64_t memory[HISTORY_POINTS])
{
    uint32_t minute = (uint32_t)(now / HISTORY_STEP_USEC);
    uint32_t behind = minute > u->minute ? minute - u->minute : 0;
    for (size_t k = 0; k < HISTORY_POINTS; k++) {
        /* Point k is (HISTORY_POINTS - 1 - k) minutes before now. */
        uint32_t age = (uint32_t)(HISTORY_POINTS - 1 - k);
        cpu[k] = 0;
        memory[k] = 0;
        if (age < behind || age - behind >= HISTORY_POINTS)
            continue;
        size_t at = (u->newest + HISTORY_POINTS - (age - behind)) % HISTORY_POINTS;
        cpu[k] = (double)u->cpu[at] / HISTORY_CPU_SCALE;
        memory[k] = (uint64_t)u->memory[at] << 20;
    }
}

size_t history_bytes(const struct history *h)
{
    return h->capacity * sizeof(*h->users) + h->count * sizeof(struct user_history);
}

void history_free(struct history *h)
{
    for (size_t i = 0; i < h->count; i++)
        free(h->users[i]);
    free(h->users);
    memset(h, 0, sizeof(*h));
}
