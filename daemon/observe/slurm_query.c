#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "observe/slurm_query.h"
#include "util.h"

#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* name in a directory of the daemon's PATH, into out ("" when absent).
 * Returns false, with why, for one found that must not run as root. */
static bool find_binary(const char *name, char *out, size_t len, char *why, size_t why_len)
{
    const char *path = getenv("PATH");
    out[0] = '\0';
    for (const char *dir = path && *path ? path : DEFAULT_PATH; *dir;) {
        size_t n = strcspn(dir, ":");
        char candidate[PATH_MAX];
        struct stat st;
        if (n && (size_t)snprintf(candidate, sizeof(candidate), "%.*s/%s", (int)n, dir, name) <
                     sizeof(candidate) &&
            stat(candidate, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111)) {
            if (st.st_uid != 0 || (st.st_mode & 022)) {
                snprintf(why, why_len, "%.200s is not root's, or others may write it: not run",
                         candidate);
                return false;
            }
            snprintf(out, len, "%s", candidate);
            return true;
        }
        dir += n + (dir[n] == ':');
    }
    return true;
}

void slurm_query_configure(struct slurm_query *q, const struct policy *p,
                           const struct environment *env)
{
    q->enabled = false;
    q->why_off[0] = '\0';
    q->next_at = env_boottime(env);
    if (p->slurm == SLURM_NO) {
        snprintf(q->why_off, sizeof(q->why_off), "[notify] slurm = no");
        q->scontrol[0] = q->sbatch[0] = '\0';
        return;
    }
    if (!find_binary("scontrol", q->scontrol, sizeof(q->scontrol), q->why_off,
                     sizeof(q->why_off)) ||
        !find_binary("sbatch", q->sbatch, sizeof(q->sbatch), q->why_off, sizeof(q->why_off)))
        return;
    if (!q->scontrol[0])
        snprintf(q->why_off, sizeof(q->why_off), "no scontrol on the daemon's PATH%s",
                 p->slurm == SLURM_YES ? " ([notify] slurm = yes)" : "");
    q->enabled = q->scontrol[0] != '\0';
}

/* In the child: scontrol, its errors on the same pipe as its answer. */
static int run_scontrol(void *arg)
{
    const char *path = arg;
    char *argv[] = {"scontrol", "show", "partition", "--oneliner", NULL};
    if (dup2(STDOUT_FILENO, STDERR_FILENO) < 0)
        return 127;
    execv(path, argv);
    fprintf(stdout, "cannot run %s: %s\n", path, strerror(errno));
    return 127;
}

void slurm_query_tick(struct slurm_query *q, const struct policy *p, uint64_t now)
{
    if (!q->enabled || q->running || now < q->next_at)
        return;
    uint64_t every = p->slurm_refresh > SLURM_REFRESH_MIN_USEC ? p->slurm_refresh
                                                                 : SLURM_REFRESH_MIN_USEC;
    q->next_at = now + every;
    q->queries++;
    if (child_start_reading(&q->child, run_scontrol, q->scontrol, SLURM_QUERY_TIMEOUT_USEC,
                            SLURM_TEXT_MAX) < 0) {
        q->failures++;
        snprintf(q->error, sizeof(q->error), "could not start scontrol: %s", strerror(errno));
        return;
    }
    q->running = true;
    q->started_at = now;
}

size_t slurm_query_pollfds(const struct slurm_query *q, struct pollfd *out)
{
    return q->running ? child_pollfds(&q->child, out) : 0;
}

uint64_t slurm_query_deadline(const struct slurm_query *q)
{
    if (q->running)
        return child_deadline(&q->child);
    return q->enabled ? q->next_at : 0;
}

/* Why the answer is not one: into q->error.  True when it is. */
static bool answer_good(struct slurm_query *q, enum child_result result, int status,
                        struct slurm_partitions *out)
{
    char err[300];
    const char *text = q->child.output ? q->child.output : "";
    if (result == CHILD_TIMED_OUT) {
        snprintf(q->error, sizeof(q->error), "scontrol did not answer within %llu s",
                 (unsigned long long)(SLURM_QUERY_TIMEOUT_USEC / USEC_PER_SEC));
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        char how[64];
        child_describe_status(status, how, sizeof(how));
        snprintf(q->error, sizeof(q->error), "scontrol %s: %.*s", how,
                 (int)strcspn(text, "\n"), text);
    } else if (q->child.output_cut) {
        snprintf(q->error, sizeof(q->error), "scontrol's answer is over %u bytes",
                 SLURM_TEXT_MAX);
    } else if (slurm_partitions_parse(text, q->child.output_len, out, err, sizeof(err)) < 0) {
        snprintf(q->error, sizeof(q->error), "scontrol's answer: %s", err);
    } else {
        return true;
    }
    return false;
}

bool slurm_query_check(struct slurm_query *q, const struct environment *env)
{
    enum child_result result;
    int status = 0;
    if (!q->running || !child_check(&q->child, &result, &status))
        return false;
    q->running = false;
    struct slurm_partitions fresh = {0};
    bool good = answer_good(q, result, status, &fresh);
    free(q->child.output);
    q->child.output = NULL;
    if (!good) {
        q->failures++;
        q->error_at = env_realtime(env);
        return false;
    }
    slurm_partitions_free(&q->partitions);
    q->partitions = fresh;
    q->answered_at = env_realtime(env);
    q->last_usec = env_boottime(env) - q->started_at;
    q->error[0] = '\0';
    return true;
}

const struct slurm_partitions *slurm_query_partitions(const struct slurm_query *q)
{
    return q && q->enabled && q->answered_at ? &q->partitions : NULL;
}

static json_t *names_json(const struct slurm_names *n)
{
    if (n->all)
        return json_string("ALL");
    json_t *a = json_array();
    for (size_t i = 0; i < n->count; i++)
        json_array_append_new(a, json_string(n->names[i]));
    return a;
}

static json_t *partition_json(const struct slurm_partition *p)
{
    char max_time[32];
    slurm_time_format(p->max_time, max_time, sizeof(max_time));
    return json_pack("{s:s, s:b, s:b, s:s, s:I, s:I, s:o, s:o}", "name", p->name, "up", p->up,
                     "default", p->is_default, "max_time", p->max_time ? max_time : "UNLIMITED",
                     "max_cpus_per_node", (json_int_t)p->max_cpus_per_node,
                     "max_mem_per_node", (json_int_t)p->max_mem_per_node, "allow_groups",
                     names_json(&p->allow_groups), "allow_accounts",
                     names_json(&p->allow_accounts));
}

json_t *slurm_query_status(const struct slurm_query *q, const struct environment *env)
{
    json_t *s = json_pack("{s:b}", "enabled", q->enabled);
    if (q->why_off[0])
        json_object_set_new(s, "off", json_string(q->why_off));
    if (!q->enabled)
        return s;
    json_object_set_new(s, "scontrol", json_string(q->scontrol));
    uint64_t now = env_realtime(env);
    if (q->answered_at) {
        json_t *parts = json_array();
        for (size_t i = 0; i < q->partitions.count; i++)
            json_array_append_new(parts, partition_json(&q->partitions.items[i]));
        json_object_set_new(s, "partitions", parts);
        json_object_set_new(s, "age_seconds", json_integer(now > q->answered_at
                                                               ? (now - q->answered_at) / USEC_PER_SEC
                                                               : 0));
        json_object_set_new(s, "query_ms", json_integer((json_int_t)(q->last_usec / 1000)));
    }
    if (q->error[0]) {
        json_object_set_new(s, "error", json_string(q->error));
        json_object_set_new(s, "error_age_seconds",
                            json_integer(now > q->error_at ? (now - q->error_at) / USEC_PER_SEC
                                                           : 0));
    }
    json_object_set_new(s, "queries", json_integer((json_int_t)q->queries));
    json_object_set_new(s, "failures", json_integer((json_int_t)q->failures));
    return s;
}

void slurm_query_stop(struct slurm_query *q)
{
    if (q->running) {
        q->child.deadline = 0; /* now: killed, and waited for */
        int status;
        child_wait(&q->child, &status);
        free(q->child.output);
        q->child.output = NULL;
        q->running = false;
    }
    slurm_partitions_free(&q->partitions);
}
