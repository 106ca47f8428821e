/* Between the trace's writer (trace_encode.c) and reader
 * (trace_decode.c): the units of its figures and its strings as JSON
 * (trace_codec.c).  Not for other files. */
#ifndef LOGINGUARD_TRACE_CODEC_PARTS_H
#define LOGINGUARD_TRACE_CODEC_PARTS_H

#include <jansson.h>
#include <stddef.h>

#define SAMPLE_PREFIX "{\"t\":\"sample\",\"now\":"
/* Cores in thousandths, bytes in MiB: finer than any threshold is set,
 * coarse enough that an idle user's figures stay the same from one
 * sample to the next and cost nothing. */
#define CPU_SCALE 1000.0
#define MEM_UNIT (1u << 20)
#define CPU_MAX_SCALED ((int64_t)1 << 40) /* a billion cores: nothing real */
#define EXE_MAX 4096 /* bytes of an executable's path (the daemon keeps 512) */

/* The bytes of s (len of them) as JSON: a string when they are UTF-8,
 * else {"hex":"..."}; null for a NULL s. */
json_t *trace_json_bytes(const char *s, size_t len);

/* The bytes of j (a string, or {"hex":...}) into a new NUL-terminated
 * buffer, at most max of them; NULL for null; -1 for anything else. */
int trace_bytes_from_json(const json_t *j, size_t max, char **out, size_t *len);

#endif
