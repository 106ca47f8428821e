/* What a process runs, as the rules judge it: its executable and its
 * command line.  Processes that run the same share one entry (a node's
 * 500 login shells are one), which holds, for every rule, whether the
 * rule's exe and argv parts match.  The comm part is checked per process
 * when it is classified: a rename (prctl(PR_SET_NAME), a write to
 * /proc/self/comm) changes only comm, so it costs a few globs on 15
 * bytes, never a regular expression over a command line.
 *
 * The command line itself is not kept: its length and digest tell
 * entries apart, so a process costs the daemon the same few bytes
 * whatever its argv holds.  The rules see the first ARGV_KEEP bytes of
 * it (joined by spaces); a computation whose telling option comes later
 * than that is still judged by its usage. */
#ifndef LOGINGUARD_PROGRAMS_H
#define LOGINGUARD_PROGRAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rules.h"

/* At most this much of an executable's path is kept for events and
 * notices (a user can make a path 4 KiB long). */
#define EXE_SHOWN 512

struct program {
    struct program *next;   /* hash chain */
    uint8_t key[32];        /* SHA-256 of everything below that tells entries apart */
    char *exe;              /* at most EXE_SHOWN bytes of the path; NULL when unreadable */
    bool exe_trusted;       /* the path means what it says (the daemon's namespace) */
    bool argv_known;        /* false: the command line is not read (yet, or it could not be) */
    size_t argv_total;      /* bytes in the whole command line */
    char argv_sha256[65];   /* hex digest of the whole command line; "" unknown */
    unsigned refs;
    uint64_t matches[];     /* bit i: rule i's exe and argv parts match */
};

struct program_table {
    struct program **buckets;
    size_t bucket_count, count;
};

/* What a process was seen to run.  exe is the path /proc/PID/exe gave
 * (NULL when unreadable); exe_trusted whether the process is in the
 * daemon's mount namespace, where that path means what it says.  In
 * another one (a user's private namespace can put any program at
 * /usr/sbin/sshd) a rule's exe matches only where it names, as a plain
 * path, the very file the process runs: exe_dev and exe_ino, when
 * exe_file_known.  argv is the first argv_len bytes of the command line,
 * NUL-separated (NULL when unknown). */
struct program_facts {
    const char *exe;
    bool exe_trusted;
    bool exe_file_known;
    dev_t exe_dev;
    ino_t exe_ino;
    const char *argv;
    size_t argv_len;
    size_t argv_total;
    const char *argv_sha256;   /* hex; NULL or "" when unknown */
};

/* The entry for f, made and judged against rules if new; a reference the
 * caller gives back with programs_put. */
const struct program *programs_get(struct program_table *t, const struct rule_set *rules,
                                   const struct program_facts *f);
void programs_put(struct program_table *t, const struct program *prog);

/* The most severe rule matching prog run under the name comm, or NULL.
 * rules must be the set prog was judged against. */
const struct rule *programs_classify(const struct rule_set *rules, const struct program *prog,
                                     const char *comm);

/* Hex SHA-256 of len bytes into out[65]. */
void sha256_hex(const void *data, size_t len, char out[65]);

/* Every entry must have been put back. */
void programs_free(struct program_table *t);

#endif
