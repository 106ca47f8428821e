#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "control/why.h"
#include "control_proto.h"
#include "observe/procfs.h"
#include "record/event_tail.h"
#include "why_explain.h"

static const struct rule *rule_named(const struct policy *p, const char *name)
{
    for (size_t i = 0; name && i < p->rules.count; i++)
        if (strcmp(p->rules.rules[i].name, name) == 0)
            return &p->rules.rules[i];
    return NULL;
}

/* Why the owner's temporary exemption was given: the reason of the
 * latest exempt_added event about them, if the log's end still has it. */
static char *exempt_reason(const struct control_view *v, uid_t owner)
{
    json_t *found = event_tail(v->events->path, owner, "exempt_added", 1);
    const char *r = json_string_value(json_object_get(json_array_get(found, 0), "reason"));
    char *copy = r ? strdup(r) : NULL;
    json_decref(found);
    return copy;
}

/* The process a thread belongs to (its thread group's leader), or pid
 * itself: top -H and ps -L show thread ids, and /proc/TID answers for
 * them though it does not list them. */
static pid_t thread_group(const struct control_view *v, pid_t pid)
{
    char name[40], buf[1024];
    snprintf(name, sizeof(name), "%d/status", (int)pid);
    int fd = openat(v->sampler->proc_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    ssize_t n = fd >= 0 ? procfs_pread(fd, buf, sizeof(buf) - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return pid;
    buf[n] = '\0';
    const char *t = strstr(buf, "\nTgid:");
    long tgid = t ? strtol(t + 6, NULL, 10) : 0;
    return tgid > 0 && tgid <= CONTROL_PID_MAX ? (pid_t)tgid : pid;
}

json_t *why_reply(struct control_view *v, const struct control_conn *c, pid_t pid, bool *refused)
{
    struct proc_stat st = {0};
    pid = thread_group(v, pid);
    struct why_facts f = {.policy = v->policy, .now = v->snap->now, .pid = pid};
    f.found = procfs_read_process(v->sampler->proc_fd, pid, &f.uid, &st);
    *refused = false;
    if (f.found) {
        f.start_time = st.start_time;
        f.comm = st.comm;
        f.owner = subuid_owner(&v->sampler->subuids, f.uid);
        if (c->peer.admin != 1 && f.owner != c->peer.uid && f.uid != c->peer.uid) {
            *refused = true;
            return NULL;
        }
    }
    struct proc_sample ps;
    bool sampled = f.found && sampler_proc(v->sampler, pid, f.start_time, &ps);
    char *reason = NULL;
    if (f.found) {
        const struct user_info *info = directory_user(v->directory, f.owner);
        f.user_name = info->name;
        f.in_exempt_group = info->exempt_group;
        f.directory_pending = !info->answered;
        f.proc = sampled ? &ps : NULL;
        f.rule = sampled ? rule_named(v->policy, ps.rule) : NULL;
        f.user = snapshot_find_user(v->snap, f.owner);
        f.state = engine_user(v->engine, f.owner, false);
        f.watch = engine_watch(v->engine, pid, f.start_time);
        if (f.in_exempt_group)
            f.exempt_group = info->exempt_group_name;
        if (f.state && f.state->exempt_until > f.now)
            f.exempt_reason = reason = exempt_reason(v, f.owner);
    }
    struct why_answer a;
    why_explain(&f, &a);
    json_t *r = control_reply_ok();
    json_object_set_new(r, "why", why_json(&f, &a));
    if (sampled)
        free(ps.exe);
    free(reason);
    return r;
}
