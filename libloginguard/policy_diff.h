/* What a reload changes: the settings whose values differ between two
 * policies and the rule files whose rules do, for the reply to
 * `loginguardctl reload` and the config_reloaded event.  Pure: it
 * compares two loaded policies and reads nothing. */
#ifndef LOGINGUARD_POLICY_DIFF_H
#define LOGINGUARD_POLICY_DIFF_H

#include <stddef.h>

#include "errors.h"
#include "policy.h"

struct policy_changes {
    char **settings;        /* "[violation] cpu"; a whole level added or gone: "[level 3]" */
    size_t setting_count;
    char **rule_files;      /* files with rules added, removed or changed */
    size_t rule_file_count;
};

void policy_diff(const struct policy *old, const struct policy *fresh, struct policy_changes *out);
/* One line for people: "enforce mode (was observe), 150 rules (was 149),
 * 3 levels; changed: [violation] cpu; rules changed in FILE", or "...;
 * nothing changed".  The caller frees it. */
char *policy_changes_text(const struct policy *old, const struct policy *fresh,
                          const struct policy_changes *c);
void policy_changes_free(struct policy_changes *c);
/* What a reload came to: the config's errors (the running policy stayed),
 * or what changed. */
struct reload_outcome {
    struct errors errors;
    struct policy_changes changes;
    char *summary;          /* policy_changes_text, after a reload that took */
};
void reload_outcome_free(struct reload_outcome *o);

#endif
