/* Program classes from rules.d/NAME.rules: JSON lines, one rule a line.
 * A rule matches on the real executable path, comm and/or an argv regex.
 * Pure: the daemon matches a rule's parts once a program (programs.h,
 * rules_judge.h); rules_classify, a whole process at once, is the tests'. */
#ifndef LOGINGUARD_RULES_H
#define LOGINGUARD_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "errors.h"
#include "regex_linear.h"

/* Ordered by severity: when several rules match, the highest wins. */
enum proc_class { CLASS_NONE = 0, CLASS_EXEMPT, CLASS_COMPUTE, CLASS_FORBIDDEN };

struct rule {
    char *name;
    enum proc_class class;
    char *exe;        /* fnmatch glob on /proc/PID/exe, or NULL */
    bool exe_is_file; /* exe names one file (no glob): its identity at load */
    dev_t exe_dev;
    ino_t exe_ino;
    char *comm;       /* fnmatch glob on comm, or NULL */
    char *argv_text;  /* the regex as written, or NULL */
    struct lg_regex *argv; /* compiled (regex_linear.h) when argv_text != NULL */
    double cpu;       /* compute: cores above which it counts; < 0 = default */
    int64_t grace;    /* compute: usec; < 0 = default */
    char *origin;     /* "file:line", for events and check-config */
};

/* The parts a rule matches on (struct verdict, events, why). */
enum rule_part { RULE_PART_EXE = 1, RULE_PART_COMM = 2, RULE_PART_ARGV = 4 };

struct rule_set {
    struct rule *rules;
    size_t count;
};

/* What a classifier sees of a process.  argv is the command line with
 * arguments joined by single spaces (hostile bytes left as they are). */
struct proc_identity {
    const char *exe;
    const char *comm;
    const char *cmdline;
};

/* Parse every NAME.rules in the stack of directories (see list_dir_files),
 * in name order, appending to set.  Returns the number of errors added. */
int rules_load_dirs(struct rule_set *set, char *const *dirs, size_t dir_count,
                    struct errors *errs);
/* Parse one file (used by rules_load_dirs and the tests). */
int rules_load_file(struct rule_set *set, const char *path, struct errors *errs);
void rules_free(struct rule_set *set);

/* The most severe matching rule, or NULL (class CLASS_NONE). */
const struct rule *rules_classify(const struct rule_set *set, const struct proc_identity *id);

/* A rule's parts apart: its exe, argv and comm patterns (NULL is
 * unknown and matches no pattern; a rule without the part matches).  A
 * rule matches when all three do. */
bool rule_matches_exe(const struct rule *r, const char *exe);
bool rule_matches_argv(const struct rule *r, const char *cmdline);
bool rule_matches_comm(const struct rule *r, const char *comm);
/* Whether the rule's exe names the very file (dev, ino), as it was when
 * the rules were loaded: for a process whose path cannot be believed. */
bool rule_names_file(const struct rule *r, dev_t dev, ino_t ino);

const char *class_name(enum proc_class c);

#endif
