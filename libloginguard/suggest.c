#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "shellquote.h"
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
char *suggest_time(uint64_t runtime_usec)
{
    uint64_t want = runtime_usec > TIME_CAP / 2 ? TIME_CAP : runtime_usec * 2;
    uint64_t hours = want / HOUR_USEC + (want % HOUR_USEC != 0);
    if (hours == 0)
        hours = 1;
    if (hours >= 24)
        return xasprintf("%" PRIu64 "-%02u:00:00", hours / 24, (unsigned)(hours % 24));
    return xasprintf("%02u:00:00", (unsigned)hours);
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
    char *mem = suggest_memory(in->memory), *t = suggest_time(in->runtime_usec);
    strbuf_addf(b, " -c %u --mem=%s -t %s", suggest_cores(in->cores), mem, t);
    free(mem);
    free(t);
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

char *suggest_salloc(const struct suggest_input *in)
{
    struct strbuf b = {0};
    add_resources(&b, "srun", in->interactive_partition, in);
    char *cmd = command(in);
    strbuf_addf(&b, " --pty %s", cmd ? cmd : "$SHELL");
    free(cmd);
    return strbuf_take(&b);
}
