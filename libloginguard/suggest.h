/* The Slurm lines a notice offers instead of the login node: built from
 * what was observed of the program and from the site's [notify] config. */
#ifndef LOGINGUARD_SUGGEST_H
#define LOGINGUARD_SUGGEST_H

#include <stddef.h>
#include <stdint.h>

struct suggest_input {
    const char *cmdline;   /* raw /proc/PID/cmdline */
    size_t cmdline_len;
    const char *cwd;       /* its working directory (-D), or NULL */
    double cores;          /* observed, averaged */
    uint64_t memory;       /* bytes observed (RSS of the user / the program) */
    uint64_t runtime_usec; /* how long it has run so far */
    const char *batch_partition, *interactive_partition; /* empty or NULL: leave -p out */
    /* The partition's limits the line keeps within (0: none known):
     * Slurm queues a job over them for ever, or refuses it. */
    uint64_t max_time;     /* seconds */
    unsigned max_cpus;
    uint64_t max_memory;   /* bytes */
};

/* "sbatch -p batch -c 4 --mem=6G -t 02:00:00 -D /dir --wrap '...'", ready to paste
 * into sh, bash or zsh.  Without a command line, the line ends before
 * --wrap. */
char *suggest_sbatch(const struct suggest_input *in);
/* "srun -p interactive -c 4 --mem=6G -t 02:00:00 --pty <the command>": the
 * same program, interactive, on a compute node.  Without a command line,
 * "--pty $SHELL" gives a shell there.  (srun makes its own allocation, so
 * this works the same everywhere, where a bare salloc starts a shell on the
 * login node or on the compute node depending on the site's Slurm.) */
char *suggest_salloc(const struct suggest_input *in);

/* The sbatch line as the argv that runs it, with --test-only after
 * "sbatch": what the daemon has Slurm check before a notice offers it.
 * NULL without a command line.  Free with suggest_argv_free. */
char **suggest_sbatch_test_argv(const struct suggest_input *in);
void suggest_argv_free(char **argv);

/* The pieces, for tests and for the notice's numbers. */
unsigned suggest_cores(double observed);
char *suggest_memory(uint64_t observed_bytes);  /* "6G" */
char *suggest_time(uint64_t runtime_usec);      /* "02:00:00", "3-00:00:00" */

#endif
