/* Reading a trace directory (state_dir/trace, see trace_codec.h): its
 * segments in order of time, each line decoded, each sample handed on. */
#ifndef LOGINGUARD_TRACE_FILES_H
#define LOGINGUARD_TRACE_FILES_H

#include <stdint.h>

#include "snapshot.h"
#include "trace_codec.h"

struct trace_read_stats {
    uint64_t files;       /* segments read */
    uint64_t samples;     /* samples handed on (within the range) */
    uint64_t skipped;     /* lines not understood */
    uint64_t cut;         /* last lines without their end (a crash while writing) */
    uint64_t oversized;   /* lines longer than TRACE_LINE_MAX */
    uint64_t first, last; /* times of the first and last sample handed on */
};

/* Called with each sample of the range; d->snap_procs[i] is the trace's
 * record of snap->procs[i]. */
typedef void trace_sample_fn(struct trace_decoder *d, struct snapshot *snap, void *arg);

/* The samples of dir with since <= now < until (0: no bound), oldest
 * first.  0, or -1 with err (dir cannot be read; a segment that cannot be
 * opened is an error too, as the replay would silently lack it). */
int trace_read_dir(const char *dir, uint64_t since, uint64_t until, trace_sample_fn *fn,
                   void *arg, struct trace_read_stats *stats, char *err, size_t err_len);

#endif
