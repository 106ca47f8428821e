#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/become_user.h"
#include "json_text.h"
#include "notify/slurm_check.h"
#include "strbuf.h"
#include "util.h"

/* What sbatch says is kept to this; a refusal is a line or two. */
#define SAID_MAX 1024
#define GROUPS_MAX 1024

static char **names_copy(const struct slurm_names *n)
{
    if (!n)
        return NULL;
    char **out = xcalloc(n->count + 1, sizeof(*out));
    for (size_t i = 0; i < n->count; i++)
        out[i] = xstrdup(n->names[i]);
    return out;
}

void slurm_line_make(struct slurm_line *l, const struct suggest_input *in,
                     const struct slurm_target *t, bool batch)
{
    l->text = batch ? suggest_sbatch(in) : suggest_salloc(in);
    l->partition = xstrdup(t->partition);
    l->argv = batch ? suggest_sbatch_test_argv(in) : NULL;
    l->groups = names_copy(t->groups);
}

static void line_free(struct slurm_line *l)
{
    free(l->text);
    free(l->partition);
    suggest_argv_free(l->argv);
    suggest_argv_free(l->groups);
}

/* ---- in the child, as the user ---- */

struct check_run {
    const struct slurm_check *c;
    const char *sbatch, *slurm_conf;
    pid_t parent;
};

/* Is the user in one of groups (NULL: anyone may)? */
static bool in_groups(char *const *groups)
{
    if (!groups)
        return true;
    gid_t mine[GROUPS_MAX];
    int n = getgroups(GROUPS_MAX, mine);
    for (size_t i = 0; groups[i]; i++) {
        struct group gr, *found = NULL;
        char buf[4096];
        if (getgrnam_r(groups[i], &gr, buf, sizeof(buf), &found) != 0 || !found)
            continue;
        for (int k = 0; k < n; k++)
            if (mine[k] == found->gr_gid)
                return true;
    }
    return false;
}

/* Run sbatch --test-only; its exit status, what it said in said. */
static int run_sbatch(const char *path, char **argv, char *said, size_t len)
{
    int out[2];
    said[0] = '\0';
    if (pipe2(out, O_CLOEXEC) < 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (dup2(out[1], STDOUT_FILENO) >= 0 && dup2(out[1], STDERR_FILENO) >= 0)
            execv(path, argv);
        _exit(127);
    }
    close(out[1]);
    size_t got = 0;
    char buf[512];
    ssize_t r;
    while ((r = read(out[0], buf, sizeof(buf))) > 0 || (r < 0 && errno == EINTR))
        for (ssize_t i = 0; i < r && got + 1 < len; i++)
            /* One line of plain text: its lines joined, controls gone. */
            said[got++] = buf[i] == '\n' ? ';' : (unsigned char)buf[i] < 0x20 ? ' ' : buf[i];
    said[got] = '\0';
    while (got && (said[got - 1] == ';' || said[got - 1] == ' '))
        said[--got] = '\0';
    close(out[0]);
    int status;
    while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    return pid < 0 ? -1 : WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static int check_main(void *arg)
{
    const struct check_run *r = arg;
    const struct slurm_check *c = r->c;
    struct passwd pw, *found = NULL;
    char pwbuf[4096];
    if (getpwuid_r(c->uid, &pw, pwbuf, sizeof(pwbuf), &found) != 0 || !found) {
        dprintf(STDOUT_FILENO, "failed uid %u has no passwd entry\n", (unsigned)c->uid);
        return 2;
    }
    char *conf = r->slurm_conf ? xstrdup(r->slurm_conf) : NULL;
    if (!become_user(found->pw_name, c->uid, found->pw_gid, r->parent) || chdir("/") != 0 ||
        clearenv() != 0 || setenv("HOME", found->pw_dir, 1) != 0 ||
        setenv("USER", found->pw_name, 1) != 0 || setenv("LOGNAME", found->pw_name, 1) != 0 ||
        setenv("PATH", "/usr/sbin:/usr/bin:/sbin:/bin", 1) != 0 ||
        (conf && setenv("SLURM_CONF", conf, 1) != 0)) {
        dprintf(STDOUT_FILENO, "failed could not become %s\n", found->pw_name);
        return 2;
    }
    for (size_t i = 0; i < c->batch_count; i++) {
        char said[SAID_MAX];
        if (!in_groups(c->batch[i].groups)) {
            dprintf(STDOUT_FILENO, "group %zu\n", i);
            continue;
        }
        if (c->groups_only) {
            dprintf(STDOUT_FILENO, "allowed %zu\n", i);
            break;
        }
        int rc = run_sbatch(r->sbatch, c->batch[i].argv, said, sizeof(said));
        if (rc == 0) {
            dprintf(STDOUT_FILENO, "ok %zu\n", i);
            break;
        }
        dprintf(STDOUT_FILENO, "refused %zu %s\n", i, said[0] ? said : "(no reason given)");
    }
    for (size_t j = 0; j < c->interactive_count; j++)
        if (in_groups(c->interactive[j].groups)) {
            dprintf(STDOUT_FILENO, "interactive %zu\n", j);
            break;
        }
    return 0;
}

int slurm_check_start(struct slurm_check *c, const char *sbatch, uint64_t now)
{
    struct check_run r = {c, sbatch, getenv("SLURM_CONF"), getpid()};
    c->started = now;
    return child_start_reading(&c->child, check_main, &r, SLURM_CHECK_TIMEOUT_USEC,
                               SLURM_CHECK_OUTPUT_MAX);
}

/* ---- in the daemon: the answer ---- */

/* The index after word in line ("ok 2" -> 2), or -1. */
static long index_after(const char *line, const char *word, size_t count, const char **rest)
{
    size_t n = strlen(word);
    if (strncmp(line, word, n) != 0 || line[n] != ' ')
        return -1;
    char *end;
    long i = strtol(line + n + 1, &end, 10);
    if (end == line + n + 1 || i < 0 || (size_t)i >= count)
        return -1;
    *rest = *end == ' ' ? end + 1 : end;
    return i;
}

void slurm_check_verdict(const struct slurm_check *c, enum child_result result, int status,
                         uint64_t now, struct slurm_verdict *v)
{
    long ok = -1, allowed = -1, inter = -1;
    struct strbuf said = {0};
    char *text = xstrdup(c->child.output ? c->child.output : "");
    for (char *save = NULL, *line = strtok_r(text, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        const char *rest = "";
        long i;
        if ((i = index_after(line, "ok", c->batch_count, &rest)) >= 0 && ok < 0)
            ok = i;
        else if ((i = index_after(line, "allowed", c->batch_count, &rest)) >= 0 && allowed < 0)
            allowed = i;
        else if ((i = index_after(line, "interactive", c->interactive_count, &rest)) >= 0)
            inter = i;
        else if ((i = index_after(line, "refused", c->batch_count, &rest)) >= 0)
            strbuf_addf(&said, "%s%s: %s", said.len ? "; " : "", c->batch[i].partition, rest);
        else if ((i = index_after(line, "group", c->batch_count, &rest)) >= 0)
            strbuf_addf(&said, "%s%s: not allowed for your groups", said.len ? "; " : "",
                        c->batch[i].partition);
    }
    bool ran = result == CHILD_EXITED && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    const char *outcome = ok >= 0             ? "accepted"
                          : allowed >= 0      ? "unchecked"
                          : result == CHILD_TIMED_OUT ? "timed_out"
                          : ran               ? "refused"
                                              : "failed";
    if (allowed >= 0)
        ok = allowed; /* the user's groups may use it; Slurm was not asked */
    memset(v, 0, sizeof(*v));
    if (ok >= 0 || !ran) { /* accepted, or not checked: offered as built */
        v->sbatch = c->batch[ok >= 0 ? ok : 0].text;
        v->srun = c->interactive[inter >= 0 ? inter : 0].text;
    } else {
        v->srun = inter >= 0 ? c->interactive[inter].text : NULL;
        v->said = strbuf_take(&said);
    }
    v->event = json_pack("{s:s, s:I}", "outcome", outcome, "ms",
                         (json_int_t)((now - c->started) / 1000));
    if (ok >= 0)
        json_object_set_new(v->event, "partition", json_string(c->batch[ok].partition));
    if (c->groups_only)
        json_object_set_new(v->event, "why", json_from_bytes(c->groups_only,
                                                             strlen(c->groups_only)));
    const char *words = v->said ? v->said : said.s;
    if (words && words[0])
        json_object_set_new(v->event, "said", json_from_bytes(words, strlen(words)));
    if (!ran && ok < 0 && result != CHILD_TIMED_OUT)
        json_object_set_new(v->event, "error", text[0] ? json_from_bytes(text, strlen(text))
                                                       : json_string("no answer"));
    strbuf_free(&said);
    free(text);
}

void slurm_check_free(struct slurm_check *c)
{
    free(c->child.output);
    free(c->user);
    free(c->groups_only);
    notice_values_free(&c->values);
    proc_table_free(&c->procs);
    for (size_t i = 0; i < c->batch_count; i++)
        line_free(&c->batch[i]);
    for (size_t j = 0; j < c->interactive_count; j++)
        line_free(&c->interactive[j]);
    memset(c, 0, sizeof(*c));
}
