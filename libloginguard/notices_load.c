#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "files.h"
#include "notices.h"
#include "strbuf.h"
#include "util.h"

static const char *const kind_names[NOTICE_KIND_COUNT] = {
    "warned", "throttled", "stopped", "released", "forbidden", "standing", "login_refused",
};

const char *const notice_placeholders[] = {
    "user", "host", "program", "command", "pid", "cores", "memory", "duration", "action",
    "level", "until", "limit_cpu", "limit_memory", "sbatch", "salloc", "docs_url", "rule",
    NULL,
};

const char *notice_kind_name(enum notice_kind k)
{
    return k < NOTICE_KIND_COUNT ? kind_names[k] : "unknown";
}

static char *known_placeholders(void)
{
    struct strbuf b = {0};
    for (const char *const *p = notice_placeholders; *p; p++)
        strbuf_addf(&b, "%s{%s}", p == notice_placeholders ? "" : ", ", *p);
    return strbuf_take(&b);
}

static int placeholder_index(const char *name, size_t len)
{
    for (int i = 0; notice_placeholders[i]; i++)
        if (strlen(notice_placeholders[i]) == len && memcmp(notice_placeholders[i], name, len) == 0)
            return i;
    return -1;
}

static void add_piece(struct notice_line *line, char *text, int placeholder)
{
    line->pieces = xreallocarray(line->pieces, line->count + 1, sizeof(*line->pieces));
    line->pieces[line->count++] = (struct notice_piece){text, placeholder};
}

static void flush_literal(struct notice_line *line, struct strbuf *lit)
{
    if (lit->len > 0)
        add_piece(line, strbuf_take(lit), -1);
}

static void free_line(struct notice_line *line)
{
    for (size_t i = 0; i < line->count; i++)
        free(line->pieces[i].text);
    free(line->pieces);
    line->pieces = NULL;
    line->count = 0;
}

/* The placeholder "{name}" at s; its length, or 0 after adding an error. */
static size_t parse_placeholder(const char *s, struct notice_line *line, const char *path,
                                unsigned lineno, struct errors *errs)
{
    const char *close = strchr(s, '}');
    if (!close) {
        errors_add(errs, path, lineno,
                   "unclosed '{'; write {name} for a placeholder or '{{' for a literal brace");
        return 0;
    }
    size_t len = (size_t)(close - s - 1);
    int index = placeholder_index(s + 1, len);
    if (index < 0) {
        char *known = known_placeholders();
        errors_add(errs, path, lineno, "unknown placeholder {%.*s}; use one of %s", (int)len,
                   s + 1, known);
        free(known);
        return 0;
    }
    add_piece(line, NULL, index);
    return len + 2;
}

static int parse_line(const char *s, struct notice_line *line, const char *path, unsigned lineno,
                      struct errors *errs)
{
    struct strbuf lit = {0};
    while (*s) {
        if ((s[0] == '{' && s[1] == '{') || (s[0] == '}' && s[1] == '}')) {
            strbuf_addc(&lit, s[0]);
            s += 2;
        } else if (s[0] == '}') {
            errors_add(errs, path, lineno, "a lone '}'; write '}}' for a literal brace");
            goto fail;
        } else if (s[0] == '{') {
            flush_literal(line, &lit);
            size_t n = parse_placeholder(s, line, path, lineno, errs);
            if (n == 0)
                goto fail;
            s += n;
        } else {
            strbuf_addc(&lit, *s++);
        }
    }
    flush_literal(line, &lit);
    return 0;
fail:
    strbuf_free(&lit);
    free_line(line);
    return -1;
}

static bool blank(const char *s)
{
    return s[strspn(s, " \t")] == '\0';
}

enum part { HEADER, AFTER_SUBJECT, BODY };

/* One line of the file, by where in the file it is. */
static int parse_file_line(struct notice_template *tpl, enum part *part, const char *s,
                           unsigned lineno, struct errors *errs)
{
    const char *path = tpl->path;
    switch (*part) {
    case HEADER:
        if (s[0] == '#' || blank(s))
            return 0;
        if (strncmp(s, "Subject:", 8) != 0 || blank(s + 8)) {
            errors_add(errs, path, lineno,
                       "expected 'Subject: ...' (only '#' comments and blank lines may come "
                       "before it)");
            return -1;
        }
        *part = AFTER_SUBJECT;
        return parse_line(s + 8 + strspn(s + 8, " \t"), &tpl->subject, path, lineno, errs);
    case AFTER_SUBJECT:
        if (!blank(s)) {
            errors_add(errs, path, lineno,
                       "expected a blank line after the Subject line; the body starts after it");
            return -1;
        }
        *part = BODY;
        return 0;
    case BODY:
        tpl->body = xreallocarray(tpl->body, tpl->body_count + 1, sizeof(*tpl->body));
        tpl->body[tpl->body_count] = (struct notice_line){0};
        if (parse_line(s, &tpl->body[tpl->body_count], path, lineno, errs) < 0)
            return -1;
        tpl->body_count++;
        return 0;
    }
    return -1;
}

/* Blank lines at the end of a file are not part of the notice. */
static void trim_body(struct notice_template *tpl)
{
    while (tpl->body_count > 0) {
        struct notice_line *last = &tpl->body[tpl->body_count - 1];
        if (last->count > 1 || (last->count == 1 && !(last->pieces[0].text &&
                                                      blank(last->pieces[0].text))))
            break;
        free_line(last);
        tpl->body_count--;
    }
}

int notice_template_parse(struct notice_template *tpl, const char *path, struct errors *errs)
{
    memset(tpl, 0, sizeof(*tpl));
    tpl->path = xstrdup(path);
    FILE *f = open_config_file(path, errs);
    if (!f)
        goto fail;
    size_t before = errs->count, cap = 0;
    char *line = NULL;
    unsigned lineno = 0;
    enum part part = HEADER;
    while (getline(&line, &cap, f) >= 0) {
        line[strcspn(line, "\r\n")] = '\0';
        /* Past a broken header the rest would only add noise. */
        if (parse_file_line(tpl, &part, line, ++lineno, errs) < 0 && part != BODY)
            break;
    }
    free(line);
    fclose(f);
    trim_body(tpl);
    if (part == HEADER && errs->count == before)
        errors_add(errs, path, 0, "no 'Subject: ...' line; a template is a Subject line, a "
                                  "blank line and the body");
    else if (tpl->body_count == 0 && errs->count == before)
        errors_add(errs, path, lineno, "the body is empty; write what happened and what to do");
    if (errs->count == before)
        return 0;
fail:
    notice_template_free(tpl);
    return -1;
}

void notice_template_free(struct notice_template *tpl)
{
    free(tpl->path);
    free_line(&tpl->subject);
    for (size_t i = 0; i < tpl->body_count; i++)
        free_line(&tpl->body[i]);
    free(tpl->body);
    memset(tpl, 0, sizeof(*tpl));
}

void notice_templates_free(struct notice_templates *t)
{
    for (size_t k = 0; k < NOTICE_KIND_COUNT; k++)
        notice_template_free(&t->kinds[k]);
}

static int kind_of_file(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    for (int k = 0; k < NOTICE_KIND_COUNT; k++)
        if (strncmp(base, kind_names[k], strlen(kind_names[k])) == 0 &&
            strcmp(base + strlen(kind_names[k]), ".txt") == 0)
            return k;
    return -1;
}

static void load_file(struct notice_templates *t, const char *path, bool *seen,
                      struct errors *errs)
{
    int k = kind_of_file(path);
    if (k >= 0)
        seen[k] = true;
    if (k < 0) {
        struct strbuf names = {0};
        for (int i = 0; i < NOTICE_KIND_COUNT; i++)
            strbuf_addf(&names, "%s%s.txt", i == 0 ? "" : i + 1 < NOTICE_KIND_COUNT ? ", " : " and ",
                        kind_names[i]);
        errors_add(errs, path, 0, "not a notice kind; templates are named %s", names.s);
        strbuf_free(&names);
    } else
        notice_template_parse(&t->kinds[k], path, errs);
}

int notice_templates_load(struct notice_templates *t, char *const *dirs, size_t dir_count,
                          struct errors *errs)
{
    memset(t, 0, sizeof(*t));
    size_t before = errs->count;
    bool seen[NOTICE_KIND_COUNT] = {false};
    struct file_list files = {0};
    list_dir_files(dirs, dir_count, ".txt", &files, errs);
    for (size_t i = 0; i < files.count; i++)
        load_file(t, files.paths[i], seen, errs);
    file_list_free(&files);
    for (int k = 0; k < NOTICE_KIND_COUNT; k++)
        if (!seen[k])
            errors_add(errs, dir_count ? dirs[dir_count - 1] : "(no directory)", 0,
                       "no %s.txt: every notice needs a template (a site's own goes in %s)",
                       kind_names[k], dir_count ? dirs[0] : "the site directory");
    if (errs->count == before)
        return 0;
    notice_templates_free(t);
    return -1;
}
