#include "config.h"

#include <string.h>

#include "metrics.h"

static const struct {
    const char *action, *outcome;
} actions[ACTION_COUNT] = {
    [ACTION_LIMITS_LEVEL_DONE] = {"limits_level", "done"},
    [ACTION_LIMITS_LEVEL_FAILED] = {"limits_level", "failed"},
    [ACTION_LIMITS_SHARE_DONE] = {"limits_share", "done"},
    [ACTION_LIMITS_SHARE_FAILED] = {"limits_share", "failed"},
    [ACTION_STOP_SIGNALLED] = {"stop", "signalled"},
    [ACTION_STOP_SKIPPED] = {"stop", "skipped"},
    [ACTION_STOP_FAILED] = {"stop", "failed"},
    [ACTION_STOP_GONE] = {"stop", "gone"},
    [ACTION_STOP_END_EXITED] = {"stop_end", "exited"},
    [ACTION_STOP_END_KILLED] = {"stop_end", "killed"},
    [ACTION_MOVE_DONE] = {"move", "done"},
    [ACTION_MOVE_GONE] = {"move", "gone"},
    [ACTION_MOVE_FAILED] = {"move", "failed"},
};

static const char *const channels[CHANNEL_COUNT] = {"tty", "desktop", "email", "login", "all"};
static const char *const outcomes[NOTICE_OUT_COUNT] = {"sent", "skipped", "failed",
                                                       "rate_limited"};

/* From a millisecond (a small node's sample) to far beyond the 2 s a
 * sample_interval gives (a sample that runs into the next). */
const double metrics_sample_bounds[METRICS_SAMPLE_BUCKETS] = {
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
};

const char *metrics_action_name(enum metrics_action a)
{
    return actions[a].action;
}

const char *metrics_action_outcome(enum metrics_action a)
{
    return actions[a].outcome;
}

const char *metrics_channel_name(enum metrics_channel c)
{
    return channels[c];
}

const char *metrics_notice_outcome_name(enum metrics_notice_outcome o)
{
    return outcomes[o];
}

bool metrics_notice_possible(enum metrics_channel c, enum metrics_notice_outcome o)
{
    /* A channel's own outcomes; before the channels, only the rate limit
     * or a missing template ("failed"). */
    if (c == CHANNEL_ALL)
        return o == NOTICE_OUT_RATE_LIMITED || o == NOTICE_OUT_FAILED;
    return o != NOTICE_OUT_RATE_LIMITED;
}

void metrics_count_action(struct metrics *m, enum metrics_action a)
{
    m->actions[a]++;
}

static int find(const char *const *names, int count, const char *name)
{
    for (int i = 0; i < count; i++)
        if (strcmp(names[i], name) == 0)
            return i;
    return -1;
}

void metrics_count_notice(struct metrics *m, enum notice_kind kind, const char *channel,
                          const char *outcome)
{
    int c = find(channels, CHANNEL_COUNT, channel);
    int o = find(outcomes, NOTICE_OUT_COUNT, outcome);
    if ((unsigned)kind < NOTICE_KIND_COUNT && c >= 0 && o >= 0)
        m->notices[kind][c][o]++;
}

void metrics_count_sample(struct metrics *m, uint64_t usec)
{
    double s = (double)usec / 1e6;
    m->samples++;
    m->sample_seconds_sum += s;
    m->last_sample_seconds = s;
    for (int i = 0; i < METRICS_SAMPLE_BUCKETS; i++) {
        if (s <= metrics_sample_bounds[i]) {
            m->sample_buckets[i]++;
            break;
        }
    }
}
