/* The kernel's news between samples: the proc connector's events and
 * taskstats' exit records, read and handed to the sampler.  Called by
 * the loop as they come and by the tick before each sample. */
#include "config.h"

#include "core/daemon.h"
#include "core/daemon_parts.h"

static void note_event(const struct pc_event *ev, void *arg)
{
    struct daemon *d = arg;
    d->drained++;
    sampler_note_event(&d->sampler, ev);
}

static void note_exit(const struct ts_exit *e, void *arg)
{
    struct daemon *d = arg;
    d->drained++;
    sampler_note_exit(&d->sampler, e);
}

/* Between samples the kernel's news (the connector's events, taskstats'
 * exits) is read as it comes while it comes a little at a time, so that
 * an exec is judged within milliseconds, yet at most every DRAIN_GAP.
 * A read that found a busy node's worth (DRAIN_BUSY or more) is followed
 * by a pause of DRAIN_PERIOD: a node that forks thousands of times a
 * second wakes the daemon ten times a second, and the sockets' buffers
 * hold the rest. */
#define DRAIN_GAP (5 * 1000)
#define DRAIN_PERIOD (100 * 1000)
#define DRAIN_BUSY 64

bool daemon_listening(const struct daemon *d)
{
    return d->connector.fd >= 0 || d->exits.fd >= 0;
}

void daemon_drain_news(struct daemon *d)
{
    d->drained = 0;
    if (d->exits.fd >= 0)
        taskstats_drain(&d->exits, note_exit, d);
    if (d->connector.fd >= 0 && proc_connector_drain(&d->connector, note_event, d) > 0)
        sampler_note_lost(&d->sampler); /* a full sweep at the next sample */
    d->next_drain = env_boottime(&d->env) + (d->drained >= DRAIN_BUSY ? DRAIN_PERIOD : DRAIN_GAP);
}
