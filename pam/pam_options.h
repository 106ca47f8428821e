/* The arguments of a pam_loginguard line in /etc/pam.d, parsed apart
 * from PAM so that the unit tests can feed them hostile text. */
#ifndef LOGINGUARD_PAM_OPTIONS_H
#define LOGINGUARD_PAM_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#define PAM_LG_TIMEOUT_DEFAULT_MS 1000
#define PAM_LG_TIMEOUT_MIN_MS 10
#define PAM_LG_TIMEOUT_MAX_MS 30000
#define PAM_LG_DENY_LEVEL_MAX 64

struct pam_lg_options {
    const char *socket;   /* points into argv or at the built-in default */
    int timeout_ms;       /* the whole exchange, connect included */
    bool fail_closed;     /* refuse when the daemon cannot answer */
    int deny_level;       /* account: 0 never refuses */
    bool debug;           /* one syslog line per exchange */
};

/* Called once for each argument that cannot be used, with a sentence
 * that names it and says what is used instead. */
typedef void pam_lg_complain(void *ctx, const char *message);

/* Fills o from argv; an unknown or bad argument is reported through
 * complain and the default is kept, so that a typo in /etc/pam.d never
 * locks anybody out.  Returns the number of complaints. */
int pam_lg_parse_options(struct pam_lg_options *o, int argc, const char **argv,
                         pam_lg_complain *complain, void *ctx);

/* "1s", "500ms", "0.25s", "2" (seconds) as milliseconds; -1 if it is
 * none of these or outside PAM_LG_TIMEOUT_MIN_MS..PAM_LG_TIMEOUT_MAX_MS. */
int pam_lg_parse_timeout(const char *text);

#endif
