/* The usage trace on disk: each sample's snapshot (trace_codec.h) appended
 * to a segment file in state_dir/trace/, for loginguardctl simulate.
 *
 * A segment holds an hour at most (and about an eighth of [trace]
 * max_size, 1 MiB at least), is made afresh at start and at every reload (SIGHUP), and is
 * never written again once left, so that a crash can cut only the last
 * line of the last segment: each sample's lines go out in one write(2)
 * right after the sample.  The oldest segments are deleted when all of
 * them together pass max_size, or when they are older than max_age.  A
 * user's new processes may take a 64th of a segment's size with their
 * command lines, and four times that without (trace_codec.h): one user
 * starting processes without end pushes out their own detail before
 * everyone's history.
 *
 * The directory holds every user's command lines: it is made 0700 and
 * its files 0600, and neither it nor a file in it is opened through a
 * symbolic link. */
#ifndef LOGINGUARD_TRACE_H
#define LOGINGUARD_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy.h"
#include "snapshot.h"
#include "strbuf.h"
#include "trace_codec.h"

#define TRACE_SEGMENT_USEC (3600ULL * 1000000)
#define TRACE_DIR_NAME "trace"

struct trace_writer {
    bool enabled;
    char *dir;                 /* for messages */
    int dirfd;                 /* -1: not open */
    int fd;                    /* the segment being written, -1: none */
    char name[64];
    uint64_t segment_start;    /* realtime usec */
    uint64_t segment_bytes;
    uint64_t total_bytes;      /* every segment's, as last counted */
    uint64_t max_size, max_age, segment_max;
    struct trace_encoder enc;
    struct strbuf buf;
    uint64_t bytes_written;    /* ever, for the metrics and the bench */
    bool failing;              /* the last write failed (said once, in an event) */
};

void trace_writer_init(struct trace_writer *t);
/* (Re)open: the current segment is left and the next sample begins a new
 * one under p's [trace] bounds and state_dir.  0, or -1 with err (the
 * trace is then off until the next reload). */
int trace_writer_open(struct trace_writer *t, const struct policy *p, char *err, size_t err_len);
/* Whether the next sample writes the process's proc line (and so wants
 * its command line in the snapshot). */
bool trace_writer_wants_argv(const struct trace_writer *t, pid_t pid, uint64_t start_time);
/* One sample.  0, or -1 with err (the segment is left: the next sample
 * begins a new one). */
int trace_writer_sample(struct trace_writer *t, const struct snapshot *snap, const char *host,
                        const char *mode, uint64_t sample_interval, char *err, size_t err_len);
/* Delete the oldest segments past the bounds (now: realtime usec). */
void trace_writer_prune(struct trace_writer *t, uint64_t now);
void trace_writer_close(struct trace_writer *t);

#endif
