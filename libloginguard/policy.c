#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "units.h"
#include "util.h"

/* Built-in defaults.  They must stay equal to rules/loginguard.conf; the
 * unit test test_config checks that the shipped file parses to the same. */
void policy_init_defaults(struct policy *p)
{
    memset(p, 0, sizeof(*p));
    p->mode = MODE_OBSERVE;
    p->sample_interval = 2 * USEC_PER_SEC;
    p->scan_interval = 30 * USEC_PER_SEC;
    p->proc_connector = true;
    p->min_uid = 1000;
    p->admin_group = xstrdup("wheel");
    p->event_log = xstrdup(LOCALSTATEDIR "/log/loginguard/events.jsonl");
    p->state_dir = xstrdup(LOCALSTATEDIR "/lib/loginguard");
    p->control_socket = xstrdup(RUNSTATEDIR "/loginguard/control.sock");
    /* rules_dirs stays empty here: config_load puts the directory next to
     * the config file first, then the shipped one. */
    p->backend = BACKEND_AUTO;
    p->cgroup_parent = xstrdup("loginguard");
    p->stop_grace = 10 * USEC_PER_SEC;
    p->events_per_user = 200;
    p->events_interval = 10 * 60 * USEC_PER_SEC;

    p->share_cpu = 4;
    p->share_memory = 16ULL << 30;
    p->share_tasks = 1024;

    p->violation_cpu = 2;
    p->violation_memory = 8ULL << 30;
    p->window = 5 * 60 * USEC_PER_SEC;
    p->decay = 60 * 60 * USEC_PER_SEC;
    p->memory_pressure = 20;

    p->compute_cpu = 0.5;
    p->compute_grace = 60 * USEC_PER_SEC;
    p->exempt_cpu = 1;
    p->exempt_memory = 2ULL << 30;

    static const struct level ladder[] = {
        {"warned", 0, 0, false, 15 * 60 * USEC_PER_SEC},
        {"throttled", 1, 4ULL << 30, false, 30 * 60 * USEC_PER_SEC},
        {"restricted", 0.5, 2ULL << 30, true, 60 * 60 * USEC_PER_SEC},
    };
    memcpy(p->levels, ladder, sizeof(ladder));
    p->level_count = sizeof(ladder) / sizeof(ladder[0]);

    p->channels.names[p->channels.count++] = xstrdup("tty");
    p->channels.names[p->channels.count++] = xstrdup("login");
    p->batch_partition = NULL; /* from Slurm, or -p left out */
    p->interactive_partition = NULL;
    p->sendmail = xstrdup("/usr/sbin/sendmail -i -t");
    p->email_from = xstrdup("root");
    p->trace_enabled = true;
    p->trace_max_size = 4ULL << 30;
    p->trace_max_age = 14 * 24 * 60 * 60 * USEC_PER_SEC;
    p->rate_limit = 60 * 60 * USEC_PER_SEC;
    p->slurm = SLURM_AUTO;
    p->slurm_refresh = 5 * 60 * USEC_PER_SEC;
    /* notices_dirs stays empty here, like rules_dirs. */
}

static void name_list_free(struct name_list *l)
{
    for (size_t i = 0; i < l->count; i++)
        free(l->names[i]);
    l->count = 0;
}

void policy_free(struct policy *p)
{
    free(p->admin_group);
    free(p->event_log);
    free(p->state_dir);
    free(p->control_socket);
    free(p->metrics_file);
    name_list_free(&p->rules_dirs);
    free(p->cgroup_parent);
    free(p->cluster_database);
    free(p->cluster_node);
    free(p->cluster_link_user);
    name_list_free(&p->exempt_users);
    name_list_free(&p->exempt_groups);
    name_list_free(&p->channels);
    free(p->batch_partition);
    free(p->interactive_partition);
    free(p->docs_url);
    free(p->login_banner);
    free(p->sendmail);
    free(p->email_domain);
    free(p->email_from);
    name_list_free(&p->notices_dirs);
    notice_templates_free(&p->notices);
    rules_free(&p->rules);
    memset(p, 0, sizeof(*p));
}

const char *mode_name(enum mode m)
{
    return m == MODE_ENFORCE ? "enforce" : "observe";
}

const char *backend_name(enum backend b)
{
    switch (b) {
    case BACKEND_SYSTEMD:
        return "systemd";
    case BACKEND_CGROUPFS:
        return "cgroupfs";
    default:
        return "auto";
    }
}

const char *slurm_use_name(enum slurm_use s)
{
    switch (s) {
    case SLURM_YES:
        return "yes";
    case SLURM_NO:
        return "no";
    default:
        return "auto";
    }
}

bool name_list_contains(const struct name_list *list, const char *name)
{
    for (size_t i = 0; i < list->count; i++)
        if (strcmp(list->names[i], name) == 0)
            return true;
    return false;
}
