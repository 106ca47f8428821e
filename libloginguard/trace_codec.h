/* The usage trace's lines: what the engine saw at each sample, written by
 * the daemon (daemon/record/trace.c) and read back by loginguardctl simulate to
 * replay it through the same engine.  Pure: text in, snapshots out, and
 * the other way round.
 *
 * A trace is a sequence of segments (files), each one JSON object a line
 * and self-contained, so that a reader may start at any segment and a
 * segment whose end a crash cut off spoils nothing before it:
 *
 *   {"t":"trace","version":1,"host":H,"start":USEC,"mode":M,"sample_interval":USEC}
 *        first line of a segment
 *   {"t":"user","uid":U,"name":S,"exempt_group":B[,"directory_pending":true]}
 *        a user's name, once a segment (again when it changes)
 *   {"t":"proc","id":N,"pid":P,"start":TICKS,"uid":U,"ppid":P,"session":S,"comm":S,
 *    "exe":S|null,"exe_trusted":B,"argv":S|null,"argv_total":N,"argv_sha256":S,
 *    "class":S,"rule":S|null}
 *        what a process runs, once a segment (again with a new id when it
 *        execs, renames itself or is classified anew); id is the segment's
 *   {"t":"sample","now":USEC,"interval":USEC,"pressure":PCT,
 *    "users":[[UID,CPU,MEM,TASKS,FLAGS],...],"gone":[UID,...],
 *    "procs":[[ID,CPU,RSS],...],"left":[ID,...]}
 *        one sample, as changes from the segment's previous one: users and
 *        processes new or whose figures changed, and those no longer in
 *        the snapshot.  CPU in 1/1000 core, MEM and RSS in MiB, FLAGS bit
 *        0 "detailed" (every process of the user is in the snapshot).
 *
 * Strings are the bytes as they were when they are UTF-8 (JSON escapes
 * controls, NUL included), else {"hex":"..."}: what a user put in a
 * command line comes back byte for byte, so the rules see in the replay
 * what they saw in the daemon. */
#ifndef LOGINGUARD_TRACE_CODEC_H
#define LOGINGUARD_TRACE_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rules.h"
#include "snapshot.h"
#include "strbuf.h"

#define TRACE_VERSION 1
/* A reader skips a line longer than this (the daemon's longest is a
 * sample of every process it holds: about 30 bytes each). */
#define TRACE_LINE_MAX (32u << 20)
/* Ids of a segment: past this many the reader stops taking new ones. */
#define TRACE_MAX_IDS (1u << 24)

#define TRACE_USER_DETAILED 1u

/* ------------------------------------------------------------------ */
/* Writing */

struct trace_enc_proc {
    pid_t pid;
    uint64_t start_time;
    uint64_t sig;         /* what the proc line said, hashed */
    uint32_t id;
    int64_t cpu;          /* as last written */
    uint64_t rss;
    bool argv_missing;    /* written without its command line: again once read */
    bool omitted;         /* its user's budget was spent: not in this segment */
};

/* What a user's processes have cost a segment: proc lines and changes. */
struct trace_enc_spent {
    uid_t uid;
    uint64_t bytes;
};

struct trace_enc_user {
    uid_t uid;
    uint64_t sig;         /* name and exempt_group, hashed */
    int64_t cpu;
    uint64_t memory, tasks;
    unsigned flags;
};

struct trace_encoder {
    struct trace_enc_proc *procs;   /* in the last sample, by (pid, start_time) */
    size_t proc_count, proc_capacity;
    struct trace_enc_user *users;   /* in the last sample, by uid */
    size_t user_count, user_capacity;
    uint32_t next_id;
    /* Bytes a user's processes may take in a segment (proc lines, and
     * the changes of their usage each sample) with their command lines;
     * past it new ones are written without, past four times it none is
     * written at all (their usage still counts in their user's totals).
     * 0: no bound.  One user starting processes without end
     * costs the trace what it allows, not everyone's history. */
    uint64_t user_budget;
    struct trace_enc_spent *spent;  /* by uid, this segment's */
    size_t spent_count, spent_capacity;
    size_t *order;                  /* scratch */
    size_t order_capacity;
};

/* A new segment: the tables are emptied and its first line appended. */
void trace_encode_start(struct trace_encoder *e, struct strbuf *out, const char *host,
                        uint64_t start, const char *mode, uint64_t sample_interval);
/* The lines for one sample (user and proc lines first, then the sample). */
void trace_encode_sample(struct trace_encoder *e, const struct snapshot *snap,
                         struct strbuf *out);
/* Whether the segment has the process's proc line already, with its
 * command line (else the next sample writes it, with the command line if
 * the snapshot has it). */
bool trace_encoder_knows(const struct trace_encoder *e, pid_t pid, uint64_t start_time);
void trace_encoder_free(struct trace_encoder *e);

/* ------------------------------------------------------------------ */
/* Reading */

/* A process as its proc line said, and what replays made of it. */
struct trace_proc {
    uint32_t id;
    bool present;          /* in the last sample */
    bool left;             /* said to have left: freed at once */
    struct proc_sample ps; /* cpu and rss: the last sample's; exe, argv owned here */
    char *rule_name;       /* as recorded: ps.rule points here */
    int64_t cpu;
    uint64_t rss;
    /* Left to the replay: its verdict under each policy, once judged. */
    bool judged[2];
    enum proc_class class[2];
    const struct rule *rule[2];
    unsigned parts[2];
};

struct trace_user {
    uid_t uid;
    char name[64];
    bool exempt_group;
    bool directory_pending;
    bool present;
    int64_t cpu;
    uint64_t memory, tasks;
    unsigned flags;
};

struct trace_decoder {
    struct trace_user *users;  /* by uid */
    size_t user_count, user_capacity;
    struct trace_proc **procs; /* by id (ids only grow in a segment) */
    size_t proc_count, proc_capacity;
    bool in_segment;           /* a header line was read */
    char host[256];
    char mode[16];
    uint64_t segment_start;
    uint64_t samples, skipped; /* lines taken as samples, lines not understood */
    /* The last sample's processes, parallel to the snapshot's procs. */
    struct trace_proc **snap_procs;
    size_t snap_capacity;
};

/* One line (without its '\n').  Returns 1 when it is a sample, made into
 * snap (emptied first; its exe and argv point into the decoder: empty it
 * with trace_snapshot_reset, never snapshot_clear), 0 for another line,
 * -1 for a line not understood (counted in skipped, nothing changed). */
int trace_decode_line(struct trace_decoder *d, const char *line, size_t len,
                      struct snapshot *snap);
/* The snapshot emptied without freeing what the decoder owns. */
void trace_snapshot_reset(struct snapshot *snap);
void trace_snapshot_free(struct snapshot *snap);
void trace_decoder_free(struct trace_decoder *d);

/* A sample line's time (its "now"), read without decoding the line; 0
 * when the line is not a sample. */
uint64_t trace_line_time(const char *line, size_t len);

#endif
