/* The daemon's main loop: it waits for the next sample, the kernel's
 * news, the command-line reader, the user directory, the control socket,
 * the cluster's link and the notice children, and hands each its turn. */
#include "config.h"

#include <poll.h>
#include <signal.h>

#include "cluster/cluster_daemon.h"
#include "core/daemon.h"
#include "core/daemon_parts.h"
#include "notify/notify.h"
#include "util.h"

/* A forbidden program was exec'd: it is judged (and, enforcing,
 * stopped) in a sample now, not up to an interval later.  Or a job
 * started outside its user's cgroup (cron): moved there now. */
static void sample_early(struct daemon *d)
{
    uint64_t now = env_boottime(&d->env);
    uint64_t room = (EARLY_SAMPLE_BURST - 1) * (uint64_t)EARLY_SAMPLE_GAP;
    uint64_t soonest = d->early_due > now + room ? d->early_due - room : now;
    if (soonest < d->next_sample)
        d->next_sample = soonest;
    d->early_asked = true;
}

static void earliest(uint64_t *next, uint64_t t)
{
    if (t && t < *next)
        *next = t;
}

static int wait_timeout_ms(struct daemon *d, bool drain_waits)
{
    uint64_t now = env_boottime(&d->env);
    uint64_t next = d->next_sample < d->next_sweep ? d->next_sample : d->next_sweep;
    earliest(&next, d->next_stop);
    /* A command line reader that stalls is replaced at its deadline, and
     * a notice child that hangs is killed at its own. */
    earliest(&next, argv_reader_deadline(&d->sampler.argv));
    earliest(&next, directory_deadline(&d->directory));
    earliest(&next, notify_deadline(&d->notice_jobs));
    earliest(&next, slurm_query_deadline(&d->slurm));
    earliest(&next, control_server_deadline(&d->control));
    earliest(&next, cluster_daemon_deadline(&d->cluster_view));
    if (drain_waits)
        earliest(&next, d->next_drain);
    return next > now ? (int)((next - now + 999) / 1000) : 0;
}

/* Every descriptor the loop waits on: the kernel's sockets (while
 * watched), the command line reader, the user directory, the cluster's
 * link, the control socket and its connections, Slurm's query, the
 * notice children. */
enum {
    PFD_CONNECTOR, PFD_EXITS, PFD_ARGV, PFD_DIRECTORY, PFD_CLUSTER, PFD_CONTROL,
    PFD_SLURM = PFD_CONTROL + CONTROL_POLLFDS,
    PFD_JOBS = PFD_SLURM + CHILD_POLLFDS,
    PFD_MAX = PFD_JOBS + CHILD_POLLFDS * (NOTICE_JOBS_MAX + SLURM_CHECKS_MAX)
};

static size_t fill_pollfds(struct daemon *d, bool watch, struct pollfd *pfd)
{
    pfd[PFD_CONNECTOR] = (struct pollfd){.fd = watch ? d->connector.fd : -1, .events = POLLIN};
    pfd[PFD_EXITS] = (struct pollfd){.fd = watch ? d->exits.fd : -1, .events = POLLIN};
    pfd[PFD_ARGV] = (struct pollfd){.fd = argv_reader_fd(&d->sampler.argv), .events = POLLIN};
    pfd[PFD_DIRECTORY] = (struct pollfd){.fd = directory_fd(&d->directory), .events = POLLIN};
    cluster_daemon_pollfd(&d->cluster_view, &pfd[PFD_CLUSTER]);
    control_server_pollfds(&d->control, pfd + PFD_CONTROL);
    size_t slurm = slurm_query_pollfds(&d->slurm, pfd + PFD_SLURM);
    for (size_t i = slurm; i < CHILD_POLLFDS; i++)
        pfd[PFD_SLURM + i] = (struct pollfd){.fd = -1};
    return PFD_JOBS + notify_pollfds(&d->notice_jobs, pfd + PFD_JOBS);
}

void daemon_run(struct daemon *d)
{
    sigset_t blocked, waiting;
    sigemptyset(&blocked);
    sigaddset(&blocked, SIGTERM);
    sigaddset(&blocked, SIGINT);
    sigaddset(&blocked, SIGHUP);
    sigprocmask(SIG_BLOCK, &blocked, &waiting);
    sigdelset(&waiting, SIGTERM);
    sigdelset(&waiting, SIGINT);
    sigdelset(&waiting, SIGHUP);

    while (!stop_requested) {
        if (reload_requested) {
            reload_requested = 0;
            daemon_reload(d, NULL, NULL);
        }
        daemon_tick(d);
        /* The kernel's sockets are watched only once DRAIN_PERIOD has
         * passed since they were last read: until then, a timeout does. */
        bool watch = daemon_listening(d) && env_boottime(&d->env) >= d->next_drain;
        bool drain_waits = daemon_listening(d) && !watch;
        int ms = wait_timeout_ms(d, drain_waits);
        struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
        struct pollfd pfd[PFD_MAX];
        size_t n = fill_pollfds(d, watch, pfd);
        /* Signals are delivered only inside ppoll: no lost wake-up. */
        /* POLLERR too: an overflow (ENOBUFS) is reported that way. */
        int ready = ppoll(pfd, n, &ts, &waiting);
        if (ready > 0 && (pfd[PFD_CONNECTOR].revents || pfd[PFD_EXITS].revents)) {
            daemon_drain_news(d);
            /* Both asked: each empties its list. */
            bool forbidden = sampler_forbidden_exec(&d->sampler);
            if (sampler_arrived_outside(&d->sampler, d->enforcing) || forbidden)
                sample_early(d);
        } else if (drain_waits && env_boottime(&d->env) >= d->next_drain)
            d->next_drain = 0; /* watch the sockets again */
        uint64_t now = env_boottime(&d->env), reader = argv_reader_deadline(&d->sampler.argv);
        if ((ready > 0 && pfd[PFD_ARGV].revents) || (reader && now >= reader))
            sampler_take_argv(&d->sampler);
        uint64_t asked = directory_deadline(&d->directory);
        if (((ready > 0 && pfd[PFD_DIRECTORY].revents) || (asked && now >= asked)) &&
            directory_poll(&d->directory)) {
            control_server_retry(&d->control); /* requests that waited for it */
            /* Users it named for the first time are judged, and their
             * processes moved, now rather than at the next sample. */
            if (directory_news(&d->directory))
                sample_early(d);
        }
        if (ready > 0)
            control_server_handle(&d->control, pfd + PFD_CONTROL, now);
        control_server_expire(&d->control, now);
        /* What the link said, what waits for it, and the link itself. */
        cluster_daemon_handle(&d->cluster_view, &pfd[PFD_CLUSTER]);
        /* Cheap (a waitpid a child): whenever the loop wakes. */
        struct notifier nt = daemon_notifier(d);
        notify_check(&nt);
        slurm_query_check(&d->slurm, &d->env);
        slurm_query_tick(&d->slurm, &d->policy, env_boottime(&d->env));
    }
    sigprocmask(SIG_UNBLOCK, &blocked, NULL);
}
