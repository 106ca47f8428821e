/* What `loginguardd --check-config [--dump]` and `loginguardctl
 * check-config [--dump]` print, one code for both: the config the daemon
 * would load (the main file, its drop-ins, the rules and the notice
 * templates) checked with the daemon's own loader. */
#ifndef LOGINGUARD_CONFIG_CHECK_H
#define LOGINGUARD_CONFIG_CHECK_H

#include <stdbool.h>
#include <jansson.h>
#include <stdio.h>

/* How path was given: a missing file is an error only when it was named
 * (without one the daemon runs on the built-in defaults). */
struct config_check_args {
    const char *path;
    bool must_exist;
    bool force_observe;  /* the daemon's --observe: mode observe whatever the file says */
    bool dump;           /* the policy in effect, as a loginguard.conf with origins */
};

/* Every error to err, one "file:line: what; fix" a line, then a line
 * saying that nothing was changed; else one OK line (or the dump) to out.
 * Returns 0 when the config loads, 1 when it has errors (or the dump
 * could not be written). */
int config_check(const struct config_check_args *a, FILE *out, FILE *err);

/* The same check as one JSON object, for scripts: {"file", "ok",
 * "errors": [...], and when ok "mode", "levels", "rules"}.  (dump is not
 * looked at.) */
json_t *config_check_json(const struct config_check_args *a);

#endif
