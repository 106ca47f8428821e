#include "config.h"

#include <stdio.h>
#include <string.h>

#include "metrics_format.h"
#include "strbuf.h"
#include "utf8.h"

void metrics_label_value(struct strbuf *b, const char *value)
{
    const unsigned char *s = (const unsigned char *)value;
    size_t left = strlen(value);
    while (left > 0) {
        bool acting;
        size_t n = utf8_unit(s, left, &acting);
        if (*s == '\\' || *s == '"') {
            strbuf_addc(b, '\\');
            strbuf_addc(b, (char)*s);
        } else if (*s == '\n') {
            strbuf_adds(b, "\\n");
        } else if (acting) {
            /* The format knows no \x escape: the backslash itself is
             * escaped, so the value reads back as the text \xNN. */
            for (size_t i = 0; i < n; i++)
                strbuf_addf(b, "\\\\x%02x", s[i]);
        } else {
            strbuf_add(b, (const char *)s, n);
        }
        s += n;
        left -= n;
    }
}

static void family(struct strbuf *b, const char *name, const char *type, const char *help)
{
    strbuf_addf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void sample_u(struct strbuf *b, const char *name, uint64_t value)
{
    strbuf_addf(b, "%s %llu\n", name, (unsigned long long)value);
}

static void sample_f(struct strbuf *b, const char *name, double value)
{
    strbuf_addf(b, "%s %.9g\n", name, value);
}

static void gauge_u(struct strbuf *b, const char *name, const char *help, uint64_t value)
{
    family(b, name, "gauge", help);
    sample_u(b, name, value);
}

static void counter_u(struct strbuf *b, const char *name, const char *help, uint64_t value)
{
    family(b, name, "counter", help);
    sample_u(b, name, value);
}

static void daemon_info(struct strbuf *b, const struct metrics_view *v)
{
    family(b, "loginguard_build_info", "gauge", "The loginguardd that runs; always 1.");
    strbuf_adds(b, "loginguard_build_info{version=\"");
    metrics_label_value(b, v->version);
    strbuf_adds(b, "\"} 1\n");
    family(b, "loginguard_start_time_seconds", "gauge",
           "When the daemon started, in seconds since the epoch.");
    strbuf_addf(b, "loginguard_start_time_seconds %llu.%03llu\n",
                (unsigned long long)(v->counters->start_time / 1000000),
                (unsigned long long)(v->counters->start_time / 1000 % 1000));
    family(b, "loginguard_mode", "gauge",
           "The configured mode: 1 for the one in effect ([daemon] mode).");
    strbuf_addf(b, "loginguard_mode{mode=\"observe\"} %d\n", strcmp(v->mode, "observe") == 0);
    strbuf_addf(b, "loginguard_mode{mode=\"enforce\"} %d\n", strcmp(v->mode, "enforce") == 0);
    gauge_u(b, "loginguard_enforcing",
            "1 when limits are set and processes stopped: enforce mode with its backend open.",
            v->enforcing);
    family(b, "loginguard_level_info", "gauge", "The ladder's levels by number; always 1.");
    for (size_t i = 0; i < v->level_count; i++) {
        strbuf_addf(b, "loginguard_level_info{level=\"%zu\",name=\"", i + 1);
        metrics_label_value(b, v->level_names[i]);
        strbuf_adds(b, "\"} 1\n");
    }
}

/* The user and uid labels of one user's sample. */
static void user_sample(struct strbuf *b, const char *name, const struct metrics_user *u)
{
    strbuf_addf(b, "%s{user=\"", name);
    metrics_label_value(b, u->name);
    strbuf_addf(b, "\",uid=\"%lu\"} ", (unsigned long)u->uid);
}

/* CPU is a gauge of cores, not a counter of seconds: it is what the
 * policy judges (the rate over the last sample_interval), and a counter
 * would need a running per-user total that the /proc path cannot keep
 * (processes end between sweeps) and that would restart whenever a user
 * left and re-entered the users shown, which rate() reads as resets. */
static void users(struct strbuf *b, const struct metrics_view *v)
{
    static const struct {
        const char *name, *help;
    } fams[] = {
        {"loginguard_user_cpu_cores",
         "CPU a user used over the last sample interval, in cores (what the policy judges)."},
        {"loginguard_user_memory_bytes",
         "Memory a user holds at the last sample (anonymous and mapped files), in bytes."},
        {"loginguard_user_tasks", "Processes and threads a user has at the last sample."},
        {"loginguard_user_level", "A user's level on the ladder (0 none; loginguard_level_info)."},
        {"loginguard_user_exempt",
         "1 when a user is not judged now: a temporary exemption, or always (root, "
         "system accounts, [exempt])."},
    };
    for (size_t f = 0; f < sizeof(fams) / sizeof(fams[0]); f++) {
        family(b, fams[f].name, "gauge", fams[f].help);
        for (size_t i = 0; i < v->user_count; i++) {
            const struct metrics_user *u = &v->users[i];
            user_sample(b, fams[f].name, u);
            switch (f) {
            case 0: strbuf_addf(b, "%.9g\n", u->cpu_cores); break;
            case 1: strbuf_addf(b, "%llu\n", (unsigned long long)u->memory_bytes); break;
            case 2: strbuf_addf(b, "%llu\n", (unsigned long long)u->tasks); break;
            case 3: strbuf_addf(b, "%d\n", u->level); break;
            default: strbuf_addf(b, "%d\n", u->exempt); break;
            }
        }
    }
    gauge_u(b, "loginguard_users_tracked",
            "Users in the last sample, and users with a level or an exemption.", v->users_tracked);
    gauge_u(b, "loginguard_users_omitted",
            "Users not idle but left out of the loginguard_user_* series by their bound.",
            v->users_omitted);
    gauge_u(b, "loginguard_processes_tracked", "User processes the daemon follows.",
            v->processes_tracked);
}

static void actions(struct strbuf *b, const struct metrics *m)
{
    family(b, "loginguard_actions_total", "counter",
           "Enforce mode's actions by kind and outcome: limits (a level's, or the share alone),"
           " stops (SIGTERM) and how they ended, moves into a user's cgroup.");
    for (int a = 0; a < ACTION_COUNT; a++)
        strbuf_addf(b, "loginguard_actions_total{action=\"%s\",outcome=\"%s\"} %llu\n",
                    metrics_action_name((enum metrics_action)a),
                    metrics_action_outcome((enum metrics_action)a),
                    (unsigned long long)m->actions[a]);
    family(b, "loginguard_notices_total", "counter",
           "Notices to users by kind, channel and outcome (the notice events); channel all: "
           "held back before any channel.");
    for (int k = 0; k < NOTICE_KIND_COUNT; k++)
        for (int c = 0; c < CHANNEL_COUNT; c++)
            for (int o = 0; o < NOTICE_OUT_COUNT; o++)
                if (metrics_notice_possible((enum metrics_channel)c,
                                            (enum metrics_notice_outcome)o))
                    strbuf_addf(b, "loginguard_notices_total{kind=\"%s\",channel=\"%s\","
                                "outcome=\"%s\"} %llu\n",
                                notice_kind_name((enum notice_kind)k),
                                metrics_channel_name((enum metrics_channel)c),
                                metrics_notice_outcome_name((enum metrics_notice_outcome)o),
                                (unsigned long long)m->notices[k][c][o]);
}

static void samples(struct strbuf *b, const struct metrics *m)
{
    family(b, "loginguard_sample_duration_seconds", "histogram",
           "Wall time of each sample: reading usage, the policy, actions and notices.");
    uint64_t cumulative = 0;
    for (int i = 0; i < METRICS_SAMPLE_BUCKETS; i++) {
        cumulative += m->sample_buckets[i];
        strbuf_addf(b, "loginguard_sample_duration_seconds_bucket{le=\"%g\"} %llu\n",
                    metrics_sample_bounds[i], (unsigned long long)cumulative);
    }
    strbuf_addf(b, "loginguard_sample_duration_seconds_bucket{le=\"+Inf\"} %llu\n",
                (unsigned long long)m->samples);
    sample_f(b, "loginguard_sample_duration_seconds_sum", m->sample_seconds_sum);
    sample_u(b, "loginguard_sample_duration_seconds_count", m->samples);
    family(b, "loginguard_last_sample_duration_seconds", "gauge",
           "Wall time of the last sample.");
    sample_f(b, "loginguard_last_sample_duration_seconds", m->last_sample_seconds);
}

static void kernel_news(struct strbuf *b, const struct metrics_view *v)
{
    gauge_u(b, "loginguard_proc_connector_up",
            "1 when new processes come from the proc connector, 0 when /proc is listed.",
            v->connector_up);
    counter_u(b, "loginguard_proc_connector_events_total",
              "Proc connector events read (since it was last opened).", v->connector_events);
    counter_u(b, "loginguard_proc_connector_overruns_total",
              "Times the kernel dropped proc connector events (ENOBUFS, or its overrun message);"
              " each makes the next sample sweep all of /proc.", v->connector_overruns);
    gauge_u(b, "loginguard_taskstats_up",
            "1 when the kernel's exit records (taskstats) are listened to.", v->taskstats_up);
    counter_u(b, "loginguard_taskstats_exits_total",
              "Ended processes the exit records reported.", v->taskstats_exits);
    counter_u(b, "loginguard_taskstats_overruns_total",
              "Times the kernel dropped exit records (ENOBUFS, or its overrun message).",
              v->taskstats_overruns);
    counter_u(b, "loginguard_taskstats_dropped_total",
              "Exit records of threads counted alone, not summed with their process's: "
              "the daemon's table, or their uid's share of it, was full.",
              v->taskstats_dropped);
    counter_u(b, "loginguard_events_suppressed_total",
              "Events about users' processes held back by [daemon] events_per_user.",
              v->events_suppressed);
    counter_u(b, "loginguard_events_lost_total",
              "Events that could not be written to the event log (a full disk, an I/O error).",
              v->events_lost);
}

char *metrics_format(const struct metrics_view *v, size_t *len)
{
    struct strbuf b = {0};
    daemon_info(&b, v);
    users(&b, v);
    actions(&b, v->counters);
    samples(&b, v->counters);
    kernel_news(&b, v);
    *len = b.len;
    return strbuf_take(&b);
}
