#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "observe/argv_describe.h"
#include "util.h"

int argv_describer_start(struct argv_describer *d, const char *proc_root, char *err,
                         size_t err_len)
{
    memset(d, 0, sizeof(*d));
    if (argv_reader_start(&d->reader, proc_root, err, err_len) < 0)
        return -1;
    d->started = true;
    return 0;
}

void argv_describer_stop(struct argv_describer *d)
{
    if (d->started)
        argv_reader_stop(&d->reader);
    free(d->stalled);
    memset(d, 0, sizeof(*d));
}

static struct proc_sample *find(struct snapshot *snap, pid_t pid, uint64_t start_time)
{
    for (size_t i = 0; i < snap->proc_count; i++)
        if (snap->procs[i].pid == pid && snap->procs[i].start_time == start_time)
            return &snap->procs[i];
    return NULL;
}

static void note_stalled(struct argv_describer *d, const struct proc_sample *ps)
{
    d->stalled = grow_array(d->stalled, d->stalled_count, &d->stalled_capacity,
                            sizeof(*d->stalled));
    struct blocked_argv *b = &d->stalled[d->stalled_count++];
    b->pid = ps->pid;
    b->start_time = ps->start_time;
    b->owner = ps->uid;
    memcpy(b->comm, ps->comm, sizeof(b->comm));
}

/* An answer: late ones (asked at an earlier tick) fill what they match. */
static void take(const struct argv_answer *a, void *arg)
{
    struct argv_describer *d = arg;
    struct proc_sample *ps = find(d->snap, a->pid, a->start_time);
    if (!ps || a->kind != ARGV_CMDLINE || ps->argv)
        return;
    if (a->status == ARGV_BLOCKED && !ps->argv_withheld) {
        ps->argv_withheld = true;
        note_stalled(d, ps);
    }
    if (a->status != ARGV_OK)
        return;
    ps->argv_len = a->len < ARGV_KEEP ? a->len : ARGV_KEEP;
    ps->argv = xmalloc(ps->argv_len + 1);
    memcpy(ps->argv, a->argv, ps->argv_len);
    ps->argv[ps->argv_len] = '\0';
    ps->argv_total = a->total;
    copy_string(ps->argv_sha256, sizeof(ps->argv_sha256), a->sha256);
}

void argv_describe(struct argv_describer *d, struct snapshot *snap, const size_t *idx, size_t n,
                   uint64_t wait_usec)
{
    if (!d->started)
        return;
    size_t asked = 0;
    for (size_t i = 0; i < n; i++) {
        const struct proc_sample *ps = &snap->procs[idx[i]];
        if (ps->argv || ps->argv_withheld)
            continue;
        if (argv_reader_request(&d->reader, ps->pid, ps->start_time, ps->uid) == 0)
            asked++;
    }
    if (!asked)
        return;
    d->snap = snap;
    argv_reader_poll(&d->reader, wait_usec, take, d);
    d->snap = NULL;
}

size_t argv_describer_take_stalled(struct argv_describer *d, const struct blocked_argv **out)
{
    size_t n = d->stalled_count;
    *out = d->stalled;
    d->stalled_count = 0;
    return n;
}
