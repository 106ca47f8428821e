/* lg-pam: PAM steps run through libpamtest, for the PAM module's tests
 * (under pam_wrapper, with a service file of the test's own).
 *
 *   lg-pam [--silent] [--cycles N] SERVICE USER STEP...
 *       STEP is account, open or close; the steps run in order on one PAM
 *       handle (pam_start .. pam_end), N times with --cycles (a new handle
 *       each time, as a long-running sshd makes one per connection).
 *       --silent passes PAM_SILENT to every step.
 *
 * Prints, for each step:
 *   STEP RC MS NAME       RC the numeric PAM return, MS the wall time of
 *                         the call in milliseconds, NAME its symbol
 *                         (PAM_SUCCESS, ...)
 *   info "TEXT"           each PAM_TEXT_INFO the step showed, in order
 *   error "TEXT"          each PAM_ERROR_MSG (in order among the infos)
 *   cgroup LINE           after an open: each line of /proc/self/cgroup,
 *                         where the session's process now is
 * TEXT has \n, \", \\ and every other control byte (\xHH) escaped, so a
 * message holds one line whatever a daemon put in it.
 * With --cycles, also "fds_before N" first and "fds_after N" last: the
 * descriptors the process holds before the first cycle and after the
 * last (a module that leaks one per session shows N more).
 *
 * Exit status 0 whatever the steps returned (the caller judges them), 1
 * when the driver itself failed (pam_start, memory, /proc), 2 for bad
 * usage. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libpamtest.h>
#include <security/pam_appl.h>

/* What the conversation was told during one step, in order. */
struct message {
    int style;
    char *text;
};

struct transcript {
    struct message *msgs;
    size_t n, cap;
    bool failed;  /* out of memory: the driver's failure, not the module's */
};

static int usage(void)
{
    fprintf(stderr, "usage: lg-pam [--silent] [--cycles N] SERVICE USER account|open|close...\n");
    return 2;
}

static const char *rc_name(int rc)
{
    static const char *const names[] = {
        "PAM_SUCCESS", "PAM_OPEN_ERR", "PAM_SYMBOL_ERR", "PAM_SERVICE_ERR", "PAM_SYSTEM_ERR",
        "PAM_BUF_ERR", "PAM_PERM_DENIED", "PAM_AUTH_ERR", "PAM_CRED_INSUFFICIENT",
        "PAM_AUTHINFO_UNAVAIL", "PAM_USER_UNKNOWN", "PAM_MAXTRIES", "PAM_NEW_AUTHTOK_REQD",
        "PAM_ACCT_EXPIRED", "PAM_SESSION_ERR", "PAM_CRED_UNAVAIL", "PAM_CRED_EXPIRED",
        "PAM_CRED_ERR", "PAM_NO_MODULE_DATA", "PAM_CONV_ERR", "PAM_AUTHTOK_ERR",
        "PAM_AUTHTOK_RECOVERY_ERR", "PAM_AUTHTOK_LOCK_BUSY", "PAM_AUTHTOK_DISABLE_AGING",
        "PAM_TRY_AGAIN", "PAM_IGNORE", "PAM_ABORT", "PAM_AUTHTOK_EXPIRED",
        "PAM_MODULE_UNKNOWN", "PAM_BAD_ITEM", "PAM_CONV_AGAIN", "PAM_INCOMPLETE",
    };
    if (rc >= 0 && (size_t)rc < sizeof(names) / sizeof(names[0]))
        return names[rc];
    return "PAM_UNKNOWN_RC";
}

/* One line whatever the text holds: a hostile message cannot forge a
 * line of this output (a fake "info" or step line). */
static void print_escaped(const char *tag, const char *text)
{
    printf("%s \"", tag);
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        if (*p == '\n')
            fputs("\\n", stdout);
        else if (*p == '"' || *p == '\\')
            printf("\\%c", *p);
        else if (*p < 0x20 || *p == 0x7f)
            printf("\\x%02x", *p);
        else
            putchar(*p);
    }
    fputs("\"\n", stdout);
}

/* The conversation: records what the module shows; answers no prompt
 * (the module is not supposed to ask anything). */
static int conv(int num_msg, const struct pam_message **msg, struct pam_response **resp,
                void *data)
{
    struct transcript *t = data;
    struct pam_response *replies = calloc((size_t)num_msg, sizeof(*replies));
    if (replies == NULL) {
        t->failed = true;
        return PAM_BUF_ERR;
    }
    for (int i = 0; i < num_msg; i++) {
        int style = msg[i]->msg_style;
        if (style != PAM_TEXT_INFO && style != PAM_ERROR_MSG) {
            /* A prompt: an empty answer, and a trace of it for the test. */
            fprintf(stderr, "lg-pam: the module prompted (style %d): %s\n", style,
                    msg[i]->msg ? msg[i]->msg : "(null)");
            continue;
        }
        if (t->n == t->cap) {
            size_t cap = t->cap ? 2 * t->cap : 8;
            struct message *grown = realloc(t->msgs, cap * sizeof(*grown));
            if (grown == NULL) {
                t->failed = true;
                free(replies);
                return PAM_BUF_ERR;
            }
            t->msgs = grown;
            t->cap = cap;
        }
        char *text = strdup(msg[i]->msg ? msg[i]->msg : "");
        if (text == NULL) {
            t->failed = true;
            free(replies);
            return PAM_BUF_ERR;
        }
        t->msgs[t->n++] = (struct message){style, text};
    }
    *resp = replies;
    return PAM_SUCCESS;
}

static void transcript_flush(struct transcript *t)
{
    for (size_t i = 0; i < t->n; i++) {
        print_escaped(t->msgs[i].style == PAM_TEXT_INFO ? "info" : "error", t->msgs[i].text);
        free(t->msgs[i].text);
    }
    t->n = 0;
}

static bool print_cgroups(void)
{
    FILE *f = fopen("/proc/self/cgroup", "re");
    if (f == NULL) {
        perror("lg-pam: /proc/self/cgroup");
        return false;
    }
    char line[4096];
    while (fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = '\0';
        printf("cgroup %s\n", line);
    }
    fclose(f);
    return true;
}

/* Descriptors open in this process, the directory's own not counted. */
static long count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL) {
        perror("lg-pam: /proc/self/fd");
        return -1;
    }
    long n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n - 1;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static bool parse_step(const char *word, enum pamtest_ops *op)
{
    if (strcmp(word, "account") == 0)
        *op = PAMTEST_ACCOUNT;
    else if (strcmp(word, "open") == 0)
        *op = PAMTEST_OPEN_SESSION;
    else if (strcmp(word, "close") == 0)
        *op = PAMTEST_CLOSE_SESSION;
    else
        return false;
    return true;
}

/* One handle through every step.  libpamtest keeps the handle
 * (PAMTEST_KEEPHANDLE, first so that a step returning something else
 * than "expected" does not end it), so each step is its own call, timed
 * on its own, and the handle ends with pam_end as an application's does. */
static bool run_cycle(const char *service, const char *user, char **steps, int nsteps,
                      int flags, struct transcript *t)
{
    struct pam_testcase start[] = {pam_test(PAMTEST_KEEPHANDLE, PAM_SUCCESS)};
    enum pamtest_err perr = _pamtest_conv(service, user, conv, t, start, 1, NULL);
    pam_handle_t *ph = start[0].case_out.ph;
    if (perr != PAMTEST_ERR_OK || ph == NULL) {
        fprintf(stderr, "lg-pam: pam_start(%s, %s): %s\n", service, user,
                pamtest_strerror(perr));
        return false;
    }
    int last = PAM_SUCCESS;
    bool ok = true;
    for (int i = 0; i < nsteps && ok; i++) {
        enum pamtest_ops op;
        parse_step(steps[i], &op);
        struct pam_testcase tc[] = {
            pam_test(PAMTEST_KEEPHANDLE, PAM_SUCCESS),
            pam_test_flags(op, PAM_SUCCESS, flags),
        };
        double t0 = now_ms();
        perr = _pamtest_conv(service, user, conv, t, tc, 2, ph);
        double ms = now_ms() - t0;
        if (perr != PAMTEST_ERR_OK && perr != PAMTEST_ERR_CASE) {
            fprintf(stderr, "lg-pam: %s: %s\n", steps[i], pamtest_strerror(perr));
            ok = false;
            break;
        }
        last = tc[1].op_rv;
        printf("%s %d %.1f %s\n", steps[i], last, ms, rc_name(last));
        transcript_flush(t);
        if (op == PAMTEST_OPEN_SESSION && !print_cgroups())
            ok = false;
        if (t->failed)
            ok = false;
    }
    int rc = pam_end(ph, last);
    if (rc != PAM_SUCCESS) {
        fprintf(stderr, "lg-pam: pam_end: %d\n", rc);
        ok = false;
    }
    fflush(stdout);
    return ok;
}

int main(int argc, char **argv)
{
    int flags = 0;
    long cycles = 1;
    bool count = false;
    int i = 1;
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
        if (strcmp(argv[i], "--silent") == 0) {
            flags |= PAM_SILENT;
        } else if (strcmp(argv[i], "--cycles") == 0 && i + 1 < argc) {
            char *end;
            errno = 0;
            cycles = strtol(argv[++i], &end, 10);
            if (errno || *end || end == argv[i] || cycles < 1)
                return usage();
            count = true;
        } else {
            return usage();
        }
    }
    if (argc - i < 3)
        return usage();
    const char *service = argv[i], *user = argv[i + 1];
    char **steps = argv + i + 2;
    int nsteps = argc - i - 2;
    for (int s = 0; s < nsteps; s++) {
        enum pamtest_ops op;
        if (!parse_step(steps[s], &op))
            return usage();
    }

    struct transcript t = {0};
    long before = count ? count_fds() : 0;
    if (before < 0)
        return 1;
    if (count)
        printf("fds_before %ld\n", before);
    bool ok = true;
    for (long c = 0; c < cycles && ok; c++)
        ok = run_cycle(service, user, steps, nsteps, flags, &t);
    transcript_flush(&t);
    free(t.msgs);
    if (ok && count) {
        long after = count_fds();
        if (after < 0)
            return 1;
        printf("fds_after %ld\n", after);
    }
    return ok ? 0 : 1;
}
