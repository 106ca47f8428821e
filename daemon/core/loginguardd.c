/* loginguardd: keeps shared login nodes usable.  See loginguardd(8). */
#include "config.h"

#include <getopt.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "config_check.h"
#include "core/daemon.h"

#define DEFAULT_CONFIG SYSCONFDIR "/loginguard/loginguard.conf"

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: loginguardd [OPTION]...\n"
            "Watch login-node processes and act on compute-heavy ones.\n\n"
            "  -c, --config FILE    the main config (default %s);\n"
            "                       drop-ins from conf.d/ and rules from rules.d/ beside it\n"
            "  -f, --foreground     stay in the foreground and print events to the terminal\n"
            "  -o, --observe        observe mode whatever the config says\n"
            "  -r, --release-on-exit  lift every limit when stopping (default: limits\n"
            "                       and state stay, so a restart changes nothing)\n"
            "      --release        lift every user's limits that the backend finds\n"
            "                       (with the daemon stopped: package removal), then exit\n"
            "  -n, --check-config   check the config and rules, print errors, exit 0 or 1\n"
            "      --dump           with --check-config: print the policy in effect as a\n"
            "                       loginguard.conf, with where each value came from\n"
            "  -V, --version        print the version\n"
            "  -h, --help           this text\n\n"
            "Signals: SIGHUP reloads the config (an invalid one is reported and the\n"
            "running policy stays) and reopens the event log; SIGTERM stops.\n",
            DEFAULT_CONFIG);
}

static void on_stop(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static void on_hup(int sig)
{
    (void)sig;
    reload_requested = 1;
}

static void install_handlers(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on_stop;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sa.sa_handler = on_hup;
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    /* Past a file size limit (RLIMIT_FSIZE) a write fails with EFBIG, which
     * the event log and the state files handle as a full disk, instead
     * of ending the daemon. */
    signal(SIGXFSZ, SIG_IGN);
}

static int parse_options(int argc, char **argv, struct options *opt)
{
    static const struct option longopts[] = {
        {"config", required_argument, NULL, 'c'}, {"foreground", no_argument, NULL, 'f'},
        {"observe", no_argument, NULL, 'o'},      {"check-config", no_argument, NULL, 'n'},
        {"release-on-exit", no_argument, NULL, 'r'}, {"dump", no_argument, NULL, 'D'},
        {"release", no_argument, NULL, 'R'},
        {"version", no_argument, NULL, 'V'},      {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    opt->config_path = DEFAULT_CONFIG;
    int c;
    while ((c = getopt_long(argc, argv, "c:fornVh", longopts, NULL)) != -1) {
        switch (c) {
        case 'c':
            opt->config_path = optarg;
            opt->config_given = true;
            break;
        case 'f':
            opt->foreground = true;
            break;
        case 'o':
            opt->force_observe = true;
            break;
        case 'n':
            opt->check_only = true;
            break;
        case 'r':
            opt->release_on_exit = true;
            break;
        case 'R':
            opt->release_only = true;
            break;
        case 'D':
            opt->check_only = opt->dump = true;
            break;
        case 'V':
            printf("loginguardd %s\n", PACKAGE_VERSION);
            exit(0);
        case 'h':
            usage(stdout);
            exit(0);
        default:
            usage(stderr);
            return -1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "loginguardd: unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        return -1;
    }
    return 0;
}

/* --check-config [--dump], as loginguardctl check-config does it. */
static int check_config(const struct options *opt)
{
    struct config_check_args a = {.path = opt->config_path, .must_exist = opt->config_given,
                                  .force_observe = opt->force_observe, .dump = opt->dump};
    return config_check(&a, stdout, stderr);
}

int main(int argc, char **argv)
{
    static struct daemon d = {.state_lock = -1, .directory = {.helper = {.sock = -1}}};
    environment_host(&d.env);
    if (parse_options(argc, argv, &d.opt) < 0)
        return 2;
    if (d.opt.check_only)
        return check_config(&d.opt);

    openlog("loginguardd", LOG_PID | (d.opt.foreground ? 0 : LOG_CONS), LOG_DAEMON);
    if (geteuid() != 0) {
        fprintf(stderr, "loginguardd: must run as root (it reads every user's processes)\n");
        return 1;
    }
    if (daemon_load_policy(&d, &d.policy, true, NULL) < 0)
        return 1;
    if (d.opt.release_only)
        return daemon_release(&d);
    /* A second instance says so on the terminal that started it. */
    if (daemon_lock_state(&d) < 0)
        return 1;
    /* Under systemd (Type=notify) or with --foreground, stay attached. */
    d.daemonized = !d.opt.foreground && !getenv("NOTIFY_SOCKET");
    if (d.daemonized && daemon(0, 0) < 0) {
        perror("loginguardd: daemon");
        return 1;
    }
    install_handlers();
    /* Arrays and buffers of 64 KiB and more (a start-up sweep's, a
     * 10,000-process table's) get their own mappings, given back when
     * freed; glibc's default raises that threshold after each such free,
     * and the heap then keeps the high-water mark. */
    mallopt(M_MMAP_THRESHOLD, 64 * 1024);
    mallopt(M_TRIM_THRESHOLD, 128 * 1024);
    daemon_build_views(&d);
    if (daemon_start(&d) < 0)
        return 1;
    daemon_run(&d);
    daemon_finish(&d);
    return 0;
}
