#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "shellquote.h"
#include "slurm_partitions.h"
#include "strbuf.h"
#include "suggest.h"
#include "units.h"
#include "util.h"

/* Past this the command is elided (see shell_quote_argv): a notice is
 * read on a terminal, and no one pastes 100 kB. */
#define COMMAND_MAX 4096

#define GIB (UINT64_C(1) << 30)
#define HOUR_USEC (UINT64_C(3600) * USEC_PER_SEC)
#define DAY_USEC (24 * HOUR_USEC)
/* Longer than most partitions allow; a longer request would only wait. */
#define TIME_CAP (7 * DAY_USEC)

/* What was used, rounded up, at least 1.  Averaged samples of a busy
 * program wobble a little above a whole number (2 busy threads read as
 * 2.03), so 0.1 core above one is not worth another core. */
unsigned suggest_cores(double observed)
{
    if (!(observed > 1.0)) /* also NaN */
        return 1;
    if (observed > 4096)
        return 4096;
    return (unsigned)ceil(observed - 0.1);
}

/* Half again what was seen, for the peak the samples missed, rounded up
 * to a whole GiB (Slurm's G), at least 1G. */
char *suggest_memory(uint64_t observed_bytes)
{
    uint64_t want = observed_bytes + observed_bytes / 2;
    uint64_t gib = want / GIB + (want % GIB != 0);
    return xasprintf("%" PRIu64 "G", gib ? gib : 1);
}

/* Twice the run so far (it is not finished), rounded up to the hour, at
 * least 1 hour, at most 7 days; Slurm's HH:MM:SS or D-HH:MM:SS. */
static uint64_t hours_wanted(uint64_t runtime_usec)
{
    uint64_t want = runtime_usec > TIME_CAP / 2 ? TIME_CAP : runtime_usec * 2;
    uint64_t hours = want / HOUR_USEC + (want % HOUR_USEC != 0);
    return hours ? hours : 1;
}

char *suggest_time(uint64_t runtime_usec)
{
    char t[32];
    slurm_time_format(hours_wanted(runtime_usec) * 3600, t, sizeof(t));
    return xstrdup(t);
}

/* What the line asks for, within the partition's limits. */
struct resources {
    unsigned cores;
    char *memory, *time;
};

static struct resources resources_of(const struct suggest_input *in)
{
    struct resources r = {.cores = suggest_cores(in->cores)};
    if (in->max_cpus && r.cores > in->max_cpus)
        r.cores = in->max_cpus;
    uint64_t want = in->memory + in->memory / 2;
    if (in->max_memory && want > in->max_memory)
        r.memory = xasprintf("%" PRIu64 "M", in->max_memory >> 20);
    else
        r.memory = suggest_memory(in->memory);
    uint64_t seconds = hours_wanted(in->runtime_usec) * 3600;
    if (in->max_time && seconds > in->max_time)
        seconds = in->max_time;
    char t[32];
    slurm_time_format(seconds, t, sizeof(t));
    r.time = xstrdup(t);
    return r;
}

static void resources_free(struct resources *r)
{
    free(r->memory);
    free(r->time);
}

/* "<tool> [-p P] -c N --mem=M -t T" */
static void add_resources(struct strbuf *b, const char *tool, const char *partition,
                          const struct suggest_input *in)
{
    strbuf_adds(b, tool);
    if (partition && *partition) {
        char *p = shell_quote_word(partition, strlen(partition));
        strbuf_addf(b, " -p %s", p);
        free(p);
    }
    struct resources r = resources_of(in);
    strbuf_addf(b, " -c %u --mem=%s -t %s", r.cores, r.memory, r.time);
    resources_free(&r);
    /* Where the program ran: the job runs there too, wherever the line
     * is pasted. */
    if (in->cwd && *in->cwd) {
        char *d = shell_quote_word(in->cwd, strlen(in->cwd));
        strbuf_addf(b, " -D %s", d);
        free(d);
    }
}

static char *command(const struct suggest_input *in)
{
    if (!in->cmdline || in->cmdline_len == 0)
        return NULL;
    return shell_quote_argv(in->cmdline, in->cmdline_len, COMMAND_MAX, NULL);
}

char *suggest_sbatch(const struct suggest_input *in)
{
    struct strbuf b = {0};
    add_resources(&b, "sbatch", in->batch_partition, in);
    char *cmd = command(in);
    if (cmd) {
        /* sbatch runs the --wrap text with /bin/sh; the user's shell first
         * takes one level of quotes off. */
        char *wrap = shell_quote_word(cmd, strlen(cmd));
        strbuf_addf(&b, " --wrap %s", wrap);
        free(wrap);
        free(cmd);
    }
    return strbuf_take(&b);
}

char **suggest_sbatch_test_argv(const struct suggest_input *in)
{
    char *cmd = command(in);
    if (!cmd)
        return NULL;
    struct resources r = resources_of(in);
    char **argv = xcalloc(14, sizeof(*argv));
    size_t n = 0;
    argv[n++] = xstrdup("sbatch");
    argv[n++] = xstrdup("--test-only");
    if (in->batch_partition && *in->batch_partition) {
        argv[n++] = xstrdup("-p");
        argv[n++] = xstrdup(in->batch_partition);
    }
    argv[n++] = xasprintf("-c%u", r.cores);
    argv[n++] = xasprintf("--mem=%s", r.memory);
    argv[n++] = xasprintf("-t%s", r.time);
    if (in->cwd && *in->cwd) {
        argv[n++] = xstrdup("-D");
        argv[n++] = xstrdup(in->cwd);
    }
    argv[n++] = xstrdup("--wrap");
    argv[n++] = cmd; /* what sbatch gives /bin/sh, as the pasted line's */
    resources_free(&r);
    return argv;
}

void suggest_argv_free(char **argv)
{
    for (size_t i = 0; argv && argv[i]; i++)
        free(argv[i]);
    free(argv);
}

char *suggest_salloc(const struct suggest_input *in)
{
    struct strbuf b = {0};
    add_resources(&b, "srun", in->interactive_partition, in);
    char *cmd = command(in);
    strbuf_addf(&b, " --pty %s", cmd ? cmd : "$SHELL");
    free(cmd);
    return strbuf_take(&b);
}
