#include "config.h"

#include <stdio.h>
#include <string.h>

#include "notify/email_chart.h"

void email_chart_build(struct email_chart_data *d, const struct history *h, uid_t uid,
                       const char *user, uint64_t now, double cpu_threshold)
{
    double cpu[HISTORY_POINTS] = {0};
    uint64_t memory[HISTORY_POINTS] = {0};
    const struct user_history *u = h ? history_find(h, uid) : NULL;
    if (u)
        history_points(u, now, cpu, memory);
    for (size_t i = 0; i < HISTORY_POINTS; i++)
        d->points[i] = (struct report_point){
            .time = now - (HISTORY_POINTS - 1 - i) * HISTORY_STEP_USEC,
            .cpu_cores = cpu[i],
            .memory_bytes = memory[i],
        };
    if (user && *user)
        snprintf(d->title, sizeof(d->title), "%s, the last hour", user);
    else
        snprintf(d->title, sizeof(d->title), "uid %u, the last hour", (unsigned)uid);
    d->chart = (struct email_chart){
        .title = d->title,
        .points = d->points,
        .count = HISTORY_POINTS,
        .from = now - HISTORY_POINTS * HISTORY_STEP_USEC,
        .until = now,
        .cpu_threshold = cpu_threshold,
    };
}
