/* Command lines for what is said about processes: the events, notices
 * and trace records of a tick name processes, and show their command
 * lines.  They are read after the engine has decided, by a reader of
 * their own (argv_reader.h): the sampler's reader judges programs, this
 * one describes them, so that what comes after the engine never asks the
 * sampler anything.  A process whose command line stalled a reader
 * before (proc_sample.argv_withheld) is not asked about; one that stalls
 * this reader is kept in `stalled`, for the daemon to report and to hand
 * to the sampler at the next sample. */
#ifndef LOGINGUARD_ARGV_DESCRIBE_H
#define LOGINGUARD_ARGV_DESCRIBE_H

#include <stddef.h>
#include <stdint.h>

#include "observe/argv_reader.h"
#include "snapshot.h"

/* A process whose command line could not be read in time. */
struct blocked_argv {
    pid_t pid;
    uint64_t start_time;
    uid_t owner;
    char comm[COMM_LEN];
};

struct argv_describer {
    struct argv_reader reader;
    bool started;
    struct snapshot *snap;      /* the one being described, while it waits */
    struct blocked_argv *stalled;
    size_t stalled_count, stalled_capacity;
};

/* The reader's helper on proc_root.  -1 with err. */
int argv_describer_start(struct argv_describer *d, const char *proc_root, char *err,
                         size_t err_len);
void argv_describer_stop(struct argv_describer *d);

/* The command lines of the processes of snap listed in idx, waiting at
 * most wait_usec for them; one not read in time stays NULL. */
void argv_describe(struct argv_describer *d, struct snapshot *snap, const size_t *idx, size_t n,
                   uint64_t wait_usec);

/* Processes whose read stalled since the last call; the array stays the
 * describer's. */
size_t argv_describer_take_stalled(struct argv_describer *d, const struct blocked_argv **out);

#endif
