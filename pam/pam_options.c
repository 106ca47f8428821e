/* pam_loginguard's arguments: socket=, timeout=, fail=, deny_level=,
 * debug.  See pam_loginguard(8). */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "pam_options.h"

#define DEFAULT_SOCKET RUNSTATEDIR "/loginguard/control.sock"

/* Decimal digits with at most one fraction, then "ms", "s" or nothing
 * (seconds).  Written out rather than strtod, whose decimal point
 * follows the locale of the program that loaded the module. */
int pam_lg_parse_timeout(const char *text)
{
    long whole = 0, frac = 0, frac_scale = 1;
    const char *p = text;
    if (*p < '0' || *p > '9')
        return -1;
    for (; *p >= '0' && *p <= '9'; p++) {
        whole = whole * 10 + (*p - '0');
        if (whole > PAM_LG_TIMEOUT_MAX_MS)
            return -1;
    }
    if (*p == '.') {
        p++;
        if (*p < '0' || *p > '9')
            return -1;
        for (; *p >= '0' && *p <= '9'; p++) {
            if (frac_scale < 1000) {
                frac = frac * 10 + (*p - '0');
                frac_scale *= 10;
            }
        }
    }
    long ms;
    if (strcmp(p, "ms") == 0)
        ms = whole + frac / frac_scale;
    else if (strcmp(p, "s") == 0 || *p == '\0')
        ms = whole * 1000 + frac * 1000 / frac_scale;
    else
        return -1;
    return ms < PAM_LG_TIMEOUT_MIN_MS || ms > PAM_LG_TIMEOUT_MAX_MS ? -1 : (int)ms;
}

static int parse_level(const char *text)
{
    int level = 0;
    if (!*text)
        return -1;
    for (const char *p = text; *p; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        level = level * 10 + (*p - '0');
        if (level > PAM_LG_DENY_LEVEL_MAX)
            return -1;
    }
    return level;
}

__attribute__((format(printf, 3, 4))) static int complain_about(pam_lg_complain *complain,
                                                                 void *ctx, const char *fmt, ...)
{
    char message[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof(message), fmt, ap);
    va_end(ap);
    complain(ctx, message);
    return 1;
}

static int parse_one(struct pam_lg_options *o, const char *arg, pam_lg_complain *complain,
                     void *ctx)
{
    if (strncmp(arg, "socket=", 7) == 0) {
        if (arg[7] != '/')
            return complain_about(complain, ctx,
                                  "option '%.100s' is not an absolute path; using " DEFAULT_SOCKET,
                                  arg);
        o->socket = arg + 7;
    } else if (strncmp(arg, "timeout=", 8) == 0) {
        int ms = pam_lg_parse_timeout(arg + 8);
        if (ms < 0)
            return complain_about(complain, ctx,
                                  "option '%.100s' is not a duration from 10ms to 30s "
                                  "(such as 1s or 500ms); using 1s",
                                  arg);
        o->timeout_ms = ms;
    } else if (strcmp(arg, "fail=open") == 0 || strcmp(arg, "fail=closed") == 0) {
        o->fail_closed = arg[5] == 'c';
    } else if (strncmp(arg, "fail=", 5) == 0) {
        return complain_about(complain, ctx,
                              "option '%.100s' must be fail=open or fail=closed; using fail=open",
                              arg);
    } else if (strncmp(arg, "deny_level=", 11) == 0) {
        int level = parse_level(arg + 11);
        if (level < 0)
            return complain_about(complain, ctx,
                                  "option '%.100s' is not a level from 0 to 64; "
                                  "refusing nobody",
                                  arg);
        o->deny_level = level;
    } else if (strcmp(arg, "debug") == 0) {
        o->debug = true;
    } else {
        return complain_about(complain, ctx, "unknown option '%.100s' ignored", arg);
    }
    return 0;
}

int pam_lg_parse_options(struct pam_lg_options *o, int argc, const char **argv,
                         pam_lg_complain *complain, void *ctx)
{
    *o = (struct pam_lg_options){.socket = DEFAULT_SOCKET,
                                 .timeout_ms = PAM_LG_TIMEOUT_DEFAULT_MS};
    int complaints = 0;
    for (int i = 0; i < argc; i++)
        complaints += parse_one(o, argv[i], complain, ctx);
    return complaints;
}
