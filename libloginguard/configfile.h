/* Reading loginguard.conf and its drop-ins into a struct policy. */
#ifndef LOGINGUARD_CONFIGFILE_H
#define LOGINGUARD_CONFIGFILE_H

#include <stdbool.h>
#include <stddef.h>

#include "config_keys.h"
#include "errors.h"
#include "policy.h"

/* Load the policy: built-in defaults, then `path` (if it exists, or an
 * error if `must_exist`), then DIR/conf.d/NAME.conf in name order, then the
 * rules from rules_dir (default DIR/rules.d), where DIR is path's
 * directory.  Returns 0, or -1 with every problem in errs; on -1 `out`
 * is freed and must not be used. */
int config_load(const char *path, bool must_exist, struct policy *out, struct errors *errs);

/* Where a value in effect came from, for --check-config --dump. */
struct config_origin {
    char *file;        /* NULL: no file set it */
    unsigned line;
    const char *note;  /* how it was set without a line of its own, or NULL
                        * (with file NULL too: the built-in default) */
};

struct config_origins {
    struct config_origin keys[CONFIG_KEY_COUNT];  /* by index in config_keys */
    struct config_origin levels[MAX_LEVELS][CONFIG_KEY_COUNT];
    char **files;                                 /* the config files read, in order */
    size_t file_count;
};

/* config_load that also fills `origins` (freed with config_origins_free
 * whatever it returns). */
int config_load_traced(const char *path, bool must_exist, struct policy *out,
                       struct config_origins *origins, struct errors *errs);
void config_origins_free(struct config_origins *o);

/* The text of one main config file (len bytes, named `name` in errors)
 * into p, which holds the defaults or what came before: no drop-ins, no
 * rules, no templates, nothing read from disk.  For tests and the fuzzer.
 * Returns 0, or -1 with every problem in errs (p stays allocated: the
 * caller frees it). */
int config_parse_text(const char *name, const char *text, size_t len, struct policy *p,
                      struct errors *errs);

/* Cross-checks that need the whole policy (ladder numbering, windows). */
int config_validate(struct policy *p, const char *path, struct errors *errs);

#endif
