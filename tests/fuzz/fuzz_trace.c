/* The usage trace as loginguardctl simulate reads it: whatever bytes are
 * in a segment (a damaged file, a line a crash cut), line by line through
 * the decoder.  Every sample it makes is within the bounds the engine and
 * the rules count on (comm ended, command lines at most ARGV_KEEP, a
 * non-zero interval); written again by the daemon's encoder and read
 * back, it is the same sample. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "strbuf.h"
#include "trace_codec.h"

static void check_sample(const struct snapshot *s)
{
    FUZZ_CHECK(s->interval > 0);
    for (size_t i = 0; i < s->user_count; i++) {
        FUZZ_CHECK(memchr(s->users[i].name, '\0', sizeof(s->users[i].name)) != NULL);
        FUZZ_CHECK(s->users[i].cpu >= 0);
        if (i)
            FUZZ_CHECK(s->users[i - 1].uid < s->users[i].uid);
    }
    for (size_t i = 0; i < s->proc_count; i++) {
        const struct proc_sample *p = &s->procs[i];
        FUZZ_CHECK(memchr(p->comm, '\0', sizeof(p->comm)) != NULL);
        FUZZ_CHECK(p->argv_len <= ARGV_KEEP);
        FUZZ_CHECK(!p->argv || p->argv[p->argv_len] == '\0');
        FUZZ_CHECK(p->argv_total >= p->argv_len);
        FUZZ_CHECK(p->cpu >= 0);
    }
}

/* s written as a segment of its own and read back. */
static void check_round_trip(const struct snapshot *s)
{
    struct trace_encoder e = {0};
    struct strbuf out = {0};
    trace_encode_start(&e, &out, "host", s->now, "observe", s->interval);
    trace_encode_sample(&e, s, &out);
    struct trace_decoder d = {0};
    struct snapshot back = {0};
    int samples = 0;
    for (char *p = out.s, *nl; (nl = strchr(p, '\n')); p = nl + 1) {
        int rc = trace_decode_line(&d, p, (size_t)(nl - p), &back);
        FUZZ_CHECK(rc >= 0);
        samples += rc == 1;
    }
    FUZZ_CHECK(samples == 1);
    FUZZ_CHECK(back.now == s->now && back.interval == s->interval);
    FUZZ_CHECK(back.user_count == s->user_count && back.proc_count <= s->proc_count);
    for (size_t i = 0; i < s->user_count; i++) {
        FUZZ_CHECK(back.users[i].uid == s->users[i].uid);
        FUZZ_CHECK(back.users[i].cpu == s->users[i].cpu);
        FUZZ_CHECK(back.users[i].memory == s->users[i].memory);
        FUZZ_CHECK(strcmp(back.users[i].name, s->users[i].name) == 0);
    }
    /* Processes come back by identity (a damaged trace may name one twice:
     * it is written once). */
    for (size_t i = 0; i < back.proc_count; i++) {
        const struct proc_sample *b = &back.procs[i], *a = NULL;
        size_t same = 0;
        for (size_t k = 0; k < s->proc_count; k++)
            if (s->procs[k].pid == b->pid && s->procs[k].start_time == b->start_time) {
                a = &s->procs[k];
                same++;
            }
        FUZZ_CHECK(a != NULL);
        if (same > 1)
            continue;
        FUZZ_CHECK(strcmp(a->comm, b->comm) == 0);
        FUZZ_CHECK(!a->exe == !b->exe && (!a->exe || strcmp(a->exe, b->exe) == 0));
        FUZZ_CHECK(a->argv_len == b->argv_len);
        FUZZ_CHECK(!a->argv == !b->argv &&
                   (!a->argv || memcmp(a->argv, b->argv, a->argv_len) == 0));
        FUZZ_CHECK(a->cpu == b->cpu && a->rss == b->rss);
    }
    trace_decoder_free(&d);
    trace_snapshot_free(&back);
    trace_encoder_free(&e);
    strbuf_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct trace_decoder d = {0};
    struct snapshot snap = {0};
    const char *p = (const char *)data, *end = p + size;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        if (trace_decode_line(&d, p, len, &snap) == 1) {
            check_sample(&snap);
            check_round_trip(&snap);
        }
        p += len + 1;
    }
    trace_decoder_free(&d);
    trace_snapshot_free(&snap);
    return 0;
}
