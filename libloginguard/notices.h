/* What a notice to a user says: one template per kind, shipped in
 * rules/notices/ and replaceable by the site; rendered with the numbers of
 * one decision.  The file format and the placeholders are documented in
 * loginguard-notices(5). */
#ifndef LOGINGUARD_NOTICES_H
#define LOGINGUARD_NOTICES_H

#include <stdbool.h>
#include <stddef.h>

#include "errors.h"

enum notice_kind {
    NOTICE_WARNED,
    NOTICE_THROTTLED,
    NOTICE_STOPPED,
    NOTICE_RELEASED,
    NOTICE_FORBIDDEN,
    /* Shown at login by pam_loginguard, never sent: where the user stands
     * while their level's limits last, and why a login is refused. */
    NOTICE_STANDING,
    NOTICE_LOGIN_REFUSED,
    NOTICE_KIND_COUNT
};

/* "warned", ...: the template file's base name without ".txt". */
const char *notice_kind_name(enum notice_kind k);

/* The placeholders a template may use, NULL-terminated. */
extern const char *const notice_placeholders[];

/* One piece of a template line: literal text, or a placeholder. */
struct notice_piece {
    char *text;      /* literal text (braces already unescaped), or NULL */
    int placeholder; /* index into notice_placeholders when text is NULL */
};

struct notice_line {
    struct notice_piece *pieces;
    size_t count;
};

struct notice_template {
    char *path;                 /* the file it came from */
    struct notice_line subject;
    struct notice_line *body;
    size_t body_count;
};

struct notice_templates {
    struct notice_template kinds[NOTICE_KIND_COUNT];
};

/* Load every kind's "<kind>.txt" from a stack of directories, the site's
 * first (a site file replaces the shipped one of the same name).  Every
 * error goes to errs as "file:line: what; how to fix"; a missing kind and
 * an unknown file name are errors too.  Returns 0, or -1 with *t empty. */
int notice_templates_load(struct notice_templates *t, char *const *dirs, size_t dir_count,
                          struct errors *errs);
/* One template file, for tests and check-config. */
int notice_template_parse(struct notice_template *tpl, const char *path, struct errors *errs);
void notice_template_free(struct notice_template *tpl);
void notice_templates_free(struct notice_templates *t);

/* A placeholder's value.  Values from users (comm, command line) are
 * hostile: rendering shows every control byte, invalid UTF-8 byte, C1
 * control and bidirectional control as \xNN (utf8_escape), unless safe is set (the
 * quoted sbatch/srun lines, which shell_quote_argv already made printable;
 * their newlines are kept in the body).  The subject is always escaped. */
struct notice_field {
    const char *name;
    const char *value;
    bool safe;
};

struct notice {
    char *subject;
    char *body; /* lines end in \n */
};

/* A body line that has placeholders, all of them empty or not given, is
 * left out (a "More: {docs_url}" line without a docs_url).  Returns 0, or
 * -1 for a kind that was not loaded. */
int notice_render(const struct notice_templates *t, enum notice_kind k,
                  const struct notice_field *fields, size_t field_count, struct notice *out);
void notice_free(struct notice *n);

#endif
