#include "config.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "notice_build.h"
#include "notify/email_chart.h"
#include "notify/notify.h"
#include "notify/notify_desktop.h"
#include "notify/notify_email.h"
#include "notify/notify_tty.h"
#include "record/events.h"
#include "record/persist.h"
#include "units.h"
#include "util.h"

/* A desktop or mail child that takes longer is killed. */
#define CHILD_TIMEOUT_USEC (2 * USEC_PER_SEC)

static const char *const outcome_names[] = {"sent", "skipped", "failed"};

/* check: Slurm's word on the notice's lines (slurm_check.h), or NULL. */
static void notice_event_checked(const struct notifier *nt, uid_t uid, const char *user,
                                 enum notice_kind kind, const char *channel,
                                 const char *outcome, const char *message, json_t *check)
{
    metrics_count_notice(nt->metrics, kind, channel, outcome);
    json_t *e = event_action("notice", uid, user, mode_name(nt->policy->mode), nt->events->host,
                             env_realtime(nt->env));
    json_object_set_new(e, "kind", json_string(notice_kind_name(kind)));
    json_object_set_new(e, "channel", json_string(channel));
    json_object_set_new(e, "outcome", json_string(outcome));
    if (message && message[0])
        json_object_set_new(e, "message", json_from_bytes(message, strlen(message)));
    if (check)
        json_object_set(e, "slurm_check", check);
    event_log_write(nt->events, e);
}

static void notice_event(const struct notifier *nt, uid_t uid, const char *user,
                         enum notice_kind kind, const char *channel, const char *outcome,
                         const char *message)
{
    notice_event_checked(nt, uid, user, kind, channel, outcome, message, NULL);
}

static enum notify_outcome send_tty(const struct notifier *nt, uid_t uid,
                                    const struct proc_table *procs, const struct notice *n,
                                    char *msg, size_t len)
{
    pid_t *pids;
    size_t count = proc_table_pids(procs, &pids);
    char *text = xasprintf("\n*** loginguard: %s ***\n%s\n", n->subject, n->body);
    int skipped = 0;
    int written = notify_tty(nt->env, uid, directory_name_of(nt->directory, uid), pids, count,
                             text, &skipped);
    snprintf(msg, len, "%d terminal%s written, %d refused", written, written == 1 ? "" : "s",
             skipped);
    free(text);
    free(pids);
    return written > 0 ? NOTIFY_SENT : NOTIFY_SKIPPED;
}

static struct child *job_child(struct notice_job *j)
{
    return j->email ? &j->send.email.child : &j->send.desktop.child;
}

static const struct child *watched_child(const struct notice_job *j)
{
    return j->email ? &j->send.email.child : &j->send.desktop.child;
}

static bool job_under_way(const struct notifier *nt, uid_t uid, enum notice_kind kind)
{
    for (size_t i = 0; i < nt->jobs->count; i++)
        if (nt->jobs->items[i].uid == uid && nt->jobs->items[i].kind == kind)
            return true;
    for (size_t i = 0; i < nt->jobs->check_count; i++)
        if (nt->jobs->checks[i].uid == uid && nt->jobs->checks[i].kind == kind)
            return true;
    return false;
}

/* A mail with the user's last hour as a chart, drawn by its child. */
static enum notify_outcome start_email_chart(const struct notifier *nt, struct notice_job *j,
                                             uid_t uid, const char *user, const char *to,
                                             const struct notice *n, char *msg, size_t len)
{
    struct email_chart_data *d = xmalloc(sizeof(*d));
    email_chart_build(d, nt->history, uid, user, env_realtime(nt->env),
                      nt->policy->violation_cpu);
    enum notify_outcome o = notify_email_start_chart(&j->send.email, nt->policy->sendmail,
                                                     nt->policy->email_from, to, n->subject,
                                                     n->body, &d->chart, CHILD_TIMEOUT_USEC,
                                                     msg, len);
    free(d); /* the child has its copy */
    return o;
}

/* Start a desktop or mail child: NOTIFY_PENDING, its job kept for
 * notify_check; or the outcome at once. */
static enum notify_outcome start_job(const struct notifier *nt, bool email, uid_t uid,
                                     const char *user, enum notice_kind kind,
                                     const struct notice *n, char *msg, size_t len)
{
    struct notice_jobs *jobs = nt->jobs;
    if (jobs->count == NOTICE_JOBS_MAX) {
        snprintf(msg, len, "%d desktop and mail notices are being sent already; this one was "
                 "not", NOTICE_JOBS_MAX);
        return NOTIFY_FAILED;
    }
    struct notice_job *j = &jobs->items[jobs->count];
    enum notify_outcome o;
    if (email) {
        char *to = email_address(user, nt->policy->email_domain);
        if (nt->policy->email_chart)
            o = start_email_chart(nt, j, uid, user, to, n, msg, len);
        else
            o = notify_email_start(&j->send.email, nt->policy->sendmail, nt->policy->email_from,
                                   to, n->subject, n->body, CHILD_TIMEOUT_USEC, msg, len);
        free(to);
    } else {
        char runtime_dir[4096];
        snprintf(runtime_dir, sizeof(runtime_dir), "%s/user/%u", nt->env->run, (unsigned)uid);
        bool urgent = kind == NOTICE_STOPPED || kind == NOTICE_FORBIDDEN;
        o = notify_desktop_start(&j->send.desktop, uid, user, runtime_dir, n->subject, n->body, urgent,
                                 CHILD_TIMEOUT_USEC, msg, len);
    }
    if (o == NOTIFY_PENDING) {
        j->email = email;
        j->uid = uid;
        j->kind = kind;
        j->user = xstrdup(user ? user : "");
        jobs->count++;
    }
    return o;
}

/* Send on one channel; msg says more about the outcome. */
static enum notify_outcome send_on(const struct notifier *nt, const char *channel, uid_t uid,
                                   const struct proc_table *procs, const char *user,
                                   enum notice_kind kind, const struct notice *n, char *msg,
                                   size_t len)
{
    msg[0] = '\0';
    if (strcmp(channel, "tty") == 0)
        return send_tty(nt, uid, procs, n, msg, len);
    if (strcmp(channel, "desktop") == 0 || strcmp(channel, "email") == 0)
        return start_job(nt, strcmp(channel, "email") == 0, uid, user, kind, n, msg, len);
    /* login: kept for the PAM module to show at the next login. */
    return persist_keep_login_notice(&nt->io, uid, kind, n, msg, len);
}

/* In observe mode the notice says that nothing was done. */
static void mark_observed(const struct notifier *nt, struct notice *n)
{
    char *subject = xasprintf("[observe mode] %s", n->subject);
    char *body = xasprintf("loginguard runs in observe mode on %s: nothing was done to your "
                           "processes. This is what enforce mode will do.\n\n%s",
                           nt->events->host, n->body);
    free(n->subject);
    free(n->body);
    n->subject = subject;
    n->body = body;
}

static uint64_t runtime_of(const struct notifier *nt, const struct proc_sample *ps)
{
    uint64_t started = ps->start_time * USEC_PER_SEC / (uint64_t)sysconf(_SC_CLK_TCK);
    uint64_t now = env_boottime(nt->env);
    return now > started ? now - started : 0;
}

/* Where the program runs, for the sbatch line's -D: /proc/PID/cwd while
 * PID is still the user's ("" otherwise, or for a directory since
 * removed). */
static void process_cwd(const struct environment *env, pid_t pid, uid_t uid, char *buf,
                        size_t len)
{
    char path[PATH_MAX];
    struct stat st;
    buf[0] = '\0';
    snprintf(path, sizeof(path), "%s/%d", env->proc, (int)pid);
    int dir = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dir < 0)
        return;
    ssize_t n = -1;
    if (fstat(dir, &st) == 0 && st.st_uid == uid)
        n = readlinkat(dir, "cwd", buf, len - 1);
    close(dir);
    buf[n > 0 && (size_t)n < len - 1 ? n : 0] = '\0';
    size_t got = strlen(buf);
    if (buf[0] != '/' || (got >= 10 && strcmp(buf + got - 10, " (deleted)") == 0))
        buf[0] = '\0';
}

static struct notice_facts facts_of(const struct notifier *nt, const struct decision *x,
                                    const struct snapshot *snap, enum notice_kind kind,
                                    const char *user, const struct slurm_advice *adv,
                                    char *cwd, size_t cwd_len)
{
    const struct proc_sample *ps = notice_process_for(x, snap, kind);
    cwd[0] = '\0';
    if (ps && ps->argv_len)
        process_cwd(nt->env, ps->pid, x->uid, cwd, cwd_len);
    return (struct notice_facts){
        .cwd = cwd,
        .policy = nt->policy,
        .decision = x,
        .kind = kind,
        .proc = ps,
        .user = user,
        .host = nt->events->host,
        .runtime_usec = ps ? runtime_of(nt, ps) : 0,
        .batch = &adv->batch[0],
        .interactive = &adv->interactive[0],
    };
}

/* A notice reached uid: the next of its kind waits for the rate limit. */
static void note_reached(const struct notifier *nt, uid_t uid, enum notice_kind kind)
{
    uint64_t now = env_realtime(nt->env);
    notice_rate_note(nt->rate, uid, kind, now);
    notice_rate_prune(nt->rate, now, nt->policy->rate_limit);
    persist_save_notice_rate(&nt->io, nt->rate);
}

/* Render the notice from its values and send it on every channel. */
static void send_values(const struct notifier *nt, uid_t uid, const char *user,
                        enum notice_kind kind, const struct notice_values *v,
                        const struct proc_table *procs, json_t *check)
{
    const struct policy *p = nt->policy;
    struct notice n;
    if (notice_render(&p->notices, kind, v->fields, v->count, &n) != 0) {
        notice_event_checked(nt, uid, user, kind, "all", "failed", "no template for this kind",
                             check);
        return;
    }
    if (!nt->enforcing)
        mark_observed(nt, &n);
    bool reached = false;
    for (size_t i = 0; i < p->channels.count; i++) {
        char msg[512];
        enum notify_outcome o = send_on(nt, p->channels.names[i], uid, procs, user, kind, &n,
                                        msg, sizeof(msg));
        if (o != NOTIFY_PENDING) /* else its event comes when its child ends */
            notice_event_checked(nt, uid, user, kind, p->channels.names[i], outcome_names[o],
                                 msg, check);
        reached = reached || o == NOTIFY_SENT;
    }
    notice_free(&n);
    /* Only a notice that reached the user holds the next one back. */
    if (reached)
        note_reached(nt, uid, kind);
}

/* Lines to check, with Slurm's sbatch at hand and room for one more
 * check: start it, the notice kept in it (values taken).  False: send
 * the notice now. */
static bool start_check(const struct notifier *nt, const struct notice_facts *f,
                        const struct slurm_advice *adv, struct notice_values *v,
                        const struct proc_table *procs, uid_t uid, const char *user,
                        enum notice_kind kind)
{
    struct notice_jobs *jobs = nt->jobs;
    struct suggest_input in;
    if (!nt->slurm || !nt->slurm->enabled || !nt->slurm->sbatch[0] ||
        jobs->check_count == SLURM_CHECKS_MAX || !notice_suggest_input(f, NULL, &in))
        return false;
    struct slurm_check *c = &jobs->checks[jobs->check_count];
    memset(c, 0, sizeof(*c));
    for (size_t i = 0; i < adv->batch_count; i++) {
        notice_suggest_input(f, &adv->batch[i], &in);
        slurm_line_make(&c->batch[c->batch_count++], &in, &adv->batch[i], true);
    }
    for (size_t i = 0; i < adv->interactive_count; i++) {
        notice_suggest_input(f, &adv->interactive[i], &in);
        slurm_line_make(&c->interactive[c->interactive_count++], &in, &adv->interactive[i],
                        false);
    }
    c->uid = uid;
    c->kind = kind;
    c->user = xstrdup(user ? user : "");
    /* The last query failed (slurmctld down, say): sbatch would only wait
     * for it until the deadline, and the notice with it. */
    if (nt->slurm->error[0])
        c->groups_only = xstrdup(nt->slurm->error);
    if (slurm_check_start(c, nt->slurm->sbatch, env_boottime(nt->env)) < 0) {
        slurm_check_free(c);
        return false;
    }
    c->values = *v;
    v->count = 0;
    c->procs.count = c->procs.capacity = procs->count;
    c->procs.procs = procs->count ? xmalloc(procs->count * sizeof(*procs->procs)) : NULL;
    if (procs->count)
        memcpy(c->procs.procs, procs->procs, procs->count * sizeof(*procs->procs));
    jobs->check_count++;
    return true;
}

/* A line offered without a check while Slurm is in use says why. */
static json_t *unchecked_why(const struct notifier *nt, const struct notice_facts *f)
{
    struct suggest_input in;
    if (!nt->slurm || !nt->slurm->enabled || !notice_suggest_input(f, NULL, &in))
        return NULL;
    const char *why = !nt->slurm->sbatch[0] ? "no sbatch on the daemon's PATH"
                      : nt->jobs->check_count == SLURM_CHECKS_MAX ? "too many checks under way"
                                                                  : "the check's child could not start";
    return json_pack("{s:s, s:o}", "outcome", "unchecked", "why",
                     json_from_bytes(why, strlen(why)));
}

/* Slurm has answered (or the check's time is up): the notice goes out
 * with the lines Slurm accepted, or with what it said instead. */
static void finish_check(const struct notifier *nt, struct slurm_check *c,
                         enum child_result result, int status)
{
    struct slurm_verdict verdict;
    slurm_check_verdict(c, result, status, env_boottime(nt->env), &verdict);
    const char *said = verdict.said ? verdict.said : "";
    if (verdict.sbatch)
        notice_values_set(&c->values, "sbatch", xstrdup(verdict.sbatch), true);
    else
        notice_values_set(&c->values, "sbatch",
                          xasprintf("(none: Slurm refused every line loginguard could offer "
                                    "here: %s)", said), false);
    if (verdict.srun)
        notice_values_set(&c->values, "salloc", xstrdup(verdict.srun), true);
    else
        notice_values_set(&c->values, "salloc", xstrdup("(none: see above)"), false);
    send_values(nt, c->uid, c->user, c->kind, &c->values, &c->procs, verdict.event);
    json_decref(verdict.event);
    free(verdict.said);
    slurm_check_free(c);
}

void notify_decision(const struct notifier *nt, const struct decision *x,
                     const struct snapshot *snap, const struct proc_table *procs)
{
    const struct policy *p = nt->policy;
    enum notice_kind kind;
    if (!p->channels.count || !notice_kind_for(p, x, &kind))
        return;
    /* Not enforcing (observe mode, or a backend that failed to open):
     * nothing was done, and a notice would only say so if asked to. */
    if (!nt->enforcing && !p->notify_in_observe)
        return;
    const char *user = directory_name_of(nt->directory, x->uid);
    if (job_under_way(nt, x->uid, kind)) {
        notice_event(nt, x->uid, user, kind, "all", "rate_limited",
                     "a notice of this kind to this user is still being sent");
        return;
    }
    if (!notice_rate_due(nt->rate, x->uid, kind, env_realtime(nt->env), p->rate_limit)) {
        notice_event(nt, x->uid, user, kind, "all", "rate_limited", NULL);
        return;
    }
    struct slurm_advice adv;
    slurm_advice_make(p, slurm_query_partitions(nt->slurm), &adv);
    char cwd[PATH_MAX];
    struct notice_facts f = facts_of(nt, x, snap, kind, user, &adv, cwd, sizeof(cwd));
    struct notice_values v;
    notice_values_build(&v, &f);
    if (start_check(nt, &f, &adv, &v, procs, x->uid, user, kind))
        return; /* sent when Slurm has answered (finish_check) */
    json_t *unchecked = unchecked_why(nt, &f);
    send_values(nt, x->uid, user, kind, &v, procs, unchecked);
    json_decref(unchecked);
    notice_values_free(&v);
}

size_t notify_pollfds(const struct notice_jobs *jobs, struct pollfd *out)
{
    size_t n = 0;
    for (size_t i = 0; i < jobs->count; i++)
        n += child_pollfds(watched_child(&jobs->items[i]), out + n);
    for (size_t i = 0; i < jobs->check_count; i++)
        n += child_pollfds(&jobs->checks[i].child, out + n);
    return n;
}

uint64_t notify_deadline(const struct notice_jobs *jobs)
{
    uint64_t first = 0;
    for (size_t i = 0; i < jobs->count + jobs->check_count; i++) {
        uint64_t t = child_deadline(i < jobs->count ? watched_child(&jobs->items[i])
                                                    : &jobs->checks[i - jobs->count].child);
        if (t && (!first || t < first))
            first = t;
    }
    return first;
}

/* The job's child has ended: its event, and the rate limit if it got
 * through.  Frees the job. */
static void finish_job(const struct notifier *nt, struct notice_job *j,
                       enum child_result result, int status)
{
    char msg[512] = "";
    enum notify_outcome o =
        j->email ? notify_email_finish(&j->send.email, result, status, msg, sizeof(msg))
                 : notify_desktop_finish(&j->send.desktop, result, status, msg, sizeof(msg));
    notice_event(nt, j->uid, j->user, j->kind, j->email ? "email" : "desktop", outcome_names[o],
                 msg);
    if (o == NOTIFY_SENT)
        note_reached(nt, j->uid, j->kind);
    free(j->user);
}

void notify_check(const struct notifier *nt)
{
    struct notice_jobs *jobs = nt->jobs;
    /* First the checks: a notice they finish may start a mail's child. */
    for (size_t i = 0; i < jobs->check_count;) {
        enum child_result result;
        int status = 0;
        if (!child_check(&jobs->checks[i].child, &result, &status)) {
            i++;
            continue;
        }
        struct slurm_check done = jobs->checks[i];
        jobs->checks[i] = jobs->checks[--jobs->check_count];
        finish_check(nt, &done, result, status);
    }
    for (size_t i = 0; i < jobs->count;) {
        enum child_result result;
        int status = 0;
        if (!child_check(job_child(&jobs->items[i]), &result, &status)) {
            i++;
            continue;
        }
        finish_job(nt, &jobs->items[i], result, status);
        jobs->items[i] = jobs->items[--jobs->count];
    }
}

void notify_stop(const struct notifier *nt)
{
    struct notice_jobs *jobs = nt->jobs;
    while (jobs->check_count) {
        struct slurm_check done = jobs->checks[--jobs->check_count];
        done.child.deadline = 0; /* now: killed, and waited for; its lines go unchecked */
        int status = 0;
        enum child_result result = child_wait(&done.child, &status);
        finish_check(nt, &done, result, status);
    }
    for (size_t i = 0; i < jobs->count; i++) {
        struct child *c = job_child(&jobs->items[i]);
        c->deadline = 0; /* now: killed, and waited for */
        int status = 0;
        enum child_result result = child_wait(c, &status);
        finish_job(nt, &jobs->items[i], result, status);
    }
    jobs->count = 0;
}
