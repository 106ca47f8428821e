#include "config.h"

#include <stddef.h>
#include <string.h>

#include "config_keys.h"
#include "policy.h"

#define P(field) offsetof(struct policy, field)
#define L(field) offsetof(struct level, field)

const struct config_key config_keys[] = {
    {"daemon", "mode", T_MODE, P(mode), 0},
    {"daemon", "sample_interval", T_DURATION, P(sample_interval), 0},
    {"daemon", "scan_interval", T_DURATION, P(scan_interval), 0},
    {"daemon", "proc_connector", T_BOOL, P(proc_connector), 0},
    {"daemon", "min_uid", T_UID, P(min_uid), 0},
    {"daemon", "admin_group", T_STRING, P(admin_group), 0},
    {"daemon", "event_log", T_PATH, P(event_log), 0},
    {"daemon", "state_dir", T_PATH, P(state_dir), 0},
    {"daemon", "control_socket", T_PATH, P(control_socket), 0},
    {"daemon", "metrics_file", T_FILE, P(metrics_file), 0},
    {"daemon", "rules_dirs", T_LIST, P(rules_dirs), 0},
    {"daemon", "backend", T_BACKEND, P(backend), 0},
    {"daemon", "cgroup_parent", T_STRING, P(cgroup_parent), 0},
    {"daemon", "stop_grace", T_DURATION, P(stop_grace), 0},
    {"daemon", "events_per_user", T_COUNT, P(events_per_user), 0},
    {"daemon", "events_interval", T_DURATION, P(events_interval), 0},
    {"share", "cpu", T_CORES, P(share_cpu), 0},
    {"share", "memory", T_SIZE, P(share_memory), 0},
    {"share", "tasks", T_COUNT, P(share_tasks), 0},
    {"violation", "cpu", T_CORES, P(violation_cpu), 0},
    {"violation", "memory", T_SIZE, P(violation_memory), 0},
    {"violation", "window", T_DURATION, P(window), 0},
    {"violation", "decay", T_DURATION, P(decay), 0},
    {"violation", "memory_pressure", T_COUNT, P(memory_pressure), 0},
    {"classes", "compute_cpu", T_CORES, P(compute_cpu), 0},
    {"classes", "compute_grace", T_DURATION, P(compute_grace), 0},
    {"classes", "exempt_cpu", T_CORES, P(exempt_cpu), 0},
    {"classes", "exempt_memory", T_SIZE, P(exempt_memory), 0},
    {"exempt", "users", T_LIST, P(exempt_users), 0},
    {"exempt", "groups", T_LIST, P(exempt_groups), 0},
    {"level", "name", T_NAME, L(name), sizeof(((struct level *)0)->name)},
    {"level", "cpu", T_CORES, L(cpu), 0},
    {"level", "memory", T_SIZE, L(memory), 0},
    {"level", "stop", T_BOOL, L(stop), 0},
    {"level", "duration", T_DURATION, L(duration), 0},
    {"notify", "channels", T_LIST, P(channels), 0},
    {"notify", "batch_partition", T_STRING, P(batch_partition), 0},
    {"notify", "interactive_partition", T_STRING, P(interactive_partition), 0},
    {"notify", "docs_url", T_STRING, P(docs_url), 0},
    {"notify", "sendmail", T_STRING, P(sendmail), 0},
    {"notify", "email_domain", T_STRING, P(email_domain), 0},
    {"notify", "email_from", T_STRING, P(email_from), 0},
    {"notify", "rate_limit", T_DURATION, P(rate_limit), 0},
    {"notify", "slurm", T_SLURM, P(slurm), 0},
    {"notify", "slurm_refresh", T_DURATION, P(slurm_refresh), 0},
    {"notify", "in_observe", T_BOOL, P(notify_in_observe), 0},
    {"notify", "email_chart", T_BOOL, P(email_chart), 0},
    {"notify", "notices_dirs", T_LIST, P(notices_dirs), 0},
    {"notify", "login_banner", T_STRING, P(login_banner), 0},
    {"trace", "enabled", T_BOOL, P(trace_enabled), 0},
    {"trace", "max_size", T_SIZE, P(trace_max_size), 0},
    {"trace", "max_age", T_DURATION, P(trace_max_age), 0},
    {"cluster", "database", T_STRING, P(cluster_database), 0},
    {"cluster", "node", T_STRING, P(cluster_node), 0},
    {"cluster", "link_user", T_STRING, P(cluster_link_user), 0},
    {NULL, NULL, 0, 0, 0},
};

_Static_assert(sizeof(config_keys) / sizeof(config_keys[0]) == CONFIG_KEY_COUNT + 1,
               "CONFIG_KEY_COUNT must be the number of keys in the table");

void *config_key_field(const struct config_key *k, void *p, void *level)
{
    return (char *)(strcmp(k->section, "level") == 0 ? level : p) + k->offset;
}

const struct config_key *config_key_find(const char *section, const char *name)
{
    for (const struct config_key *k = config_keys; k->section; k++)
        if (strcmp(k->section, section) == 0 && strcmp(k->name, name) == 0)
            return k;
    return NULL;
}
