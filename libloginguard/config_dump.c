#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config_dump.h"
#include "files.h"
#include "strbuf.h"
#include "units.h"
#include "util.h"

static void add_list(struct strbuf *b, const struct name_list *l)
{
    for (size_t i = 0; i < l->count; i++) {
        strbuf_adds(b, i ? ", " : "");
        strbuf_adds(b, l->names[i]);
    }
}

/* The value as the parser reads it back: exact units, yes/no, names. */
static char *value_text(const struct config_key *k, const void *field)
{
    struct strbuf b = {0};
    char num[UNITS_EXACT_LEN];
    switch (k->type) {
    case T_DURATION:
        format_duration_exact(*(const uint64_t *)field, num, sizeof(num));
        strbuf_adds(&b, num);
        break;
    case T_SIZE:
        format_size_exact(*(const uint64_t *)field, num, sizeof(num));
        strbuf_adds(&b, num);
        break;
    case T_CORES:
        format_cores_exact(*(const double *)field, num, sizeof(num));
        strbuf_adds(&b, num);
        break;
    case T_COUNT:
        strbuf_addf(&b, "%llu", (unsigned long long)*(const uint64_t *)field);
        break;
    case T_UID:
        strbuf_addf(&b, "%lu", (unsigned long)*(const uid_t *)field);
        break;
    case T_BOOL:
        strbuf_adds(&b, *(const bool *)field ? "yes" : "no");
        break;
    case T_STRING:
    case T_PATH:
    case T_FILE:
        strbuf_adds(&b, *(char *const *)field ? *(char *const *)field : "");
        break;
    case T_NAME:
        strbuf_adds(&b, (const char *)field);
        break;
    case T_LIST:
        add_list(&b, (const struct name_list *)field);
        break;
    case T_MODE:
        strbuf_adds(&b, mode_name(*(const enum mode *)field));
        break;
    case T_BACKEND:
        strbuf_adds(&b, backend_name(*(const enum backend *)field));
        break;
    case T_SLURM:
        strbuf_adds(&b, slurm_use_name(*(const enum slurm_use *)field));
        break;
    }
    return strbuf_take(&b);
}

static void print_key(FILE *out, const struct config_key *k, const struct policy *p,
                      const struct level *l)
{
    char *value = value_text(k, config_key_field(k, (void *)p, (void *)l));
    fprintf(out, "%s =%s%s\n", k->name, value[0] ? " " : "", value);
    free(value);
}

static bool is_level_key(const struct config_key *k)
{
    return strcmp(k->section, "level") == 0;
}

static void print_levels(FILE *out, const struct policy *p)
{
    for (size_t n = 0; n < p->level_count; n++) {
        fprintf(out, "%s[level %zu]\n", n ? "\n" : "", n + 1);
        for (const struct config_key *k = config_keys; k->section; k++)
            if (is_level_key(k))
                print_key(out, k, p, &p->levels[n]);
    }
}

/* Sections in the order of the key table, [level N] for each level. */
void config_dump_settings(FILE *out, const struct policy *p)
{
    const char *section = NULL;
    for (const struct config_key *k = config_keys; k->section; k++) {
        bool first = !section || strcmp(section, k->section) != 0;
        section = k->section;
        if (first && is_level_key(k)) {
            fputs("\n", out);
            print_levels(out, p);
        } else if (first) {
            fprintf(out, "\n[%s]\n", section);
        }
        if (!is_level_key(k))
            print_key(out, k, p, NULL);
    }
}

static void print_header(FILE *out, const struct config_origins *o)
{
    fputs("# The policy loginguardd runs with (loginguardd --check-config --dump): the\n"
          "# built-in defaults, then", out);
    if (o->file_count == 0)
        fputs(" no config file (none was found).\n", out);
    else
        fputs(" these files in this order:\n", out);
    for (size_t i = 0; i < o->file_count; i++)
        fprintf(out, "#   %s\n", o->files[i]);
    fputs("# It is itself a loginguard.conf, which reads back to the same policy.\n"
          "# Where each value came from, and the rules and notice templates in\n"
          "# effect, follow the settings.\n", out);
}

static void print_origin(FILE *out, const char *section, const char *key,
                         const struct config_origin *o)
{
    fprintf(out, "# [%s] %s: ", section, key);
    if (o->file)
        fprintf(out, "%s:%u%s%s%s\n", o->file, o->line, o->note ? " (" : "",
                o->note ? o->note : "", o->note ? ")" : "");
    else
        fprintf(out, "%s\n", o->note ? o->note : "built-in default");
}

static void print_level_origins(FILE *out, const struct policy *p,
                                const struct config_origins *o)
{
    for (size_t n = 0; n < p->level_count; n++) {
        char section[32];
        snprintf(section, sizeof(section), "level %zu", n + 1);
        for (const struct config_key *k = config_keys; k->section; k++)
            if (is_level_key(k))
                print_origin(out, section, k->name, &o->levels[n][k - config_keys]);
    }
}

static void print_origins(FILE *out, const struct policy *p, const struct config_origins *o)
{
    fputs("\n# Where each value came from (file:line, or the built-in default):\n", out);
    for (const struct config_key *k = config_keys; k->section; k++) {
        if (!is_level_key(k))
            print_origin(out, k->section, k->name, &o->keys[k - config_keys]);
        else if (!is_level_key(k - 1)) /* the table starts with [daemon] */
            print_level_origins(out, p, o);
    }
}

/* The file of the same name that path (found in one of dirs) hides in a
 * later directory of the stack, or NULL. */
static char *hidden_file(char *const *dirs, size_t count, const char *path)
{
    for (size_t i = 0; i < count; i++) {
        size_t len = strlen(dirs[i]);
        if (strncmp(path, dirs[i], len) != 0 || path[len] != '/' || strchr(path + len + 1, '/'))
            continue;
        for (size_t j = i + 1; j < count; j++) {
            char *other = xasprintf("%s/%s", dirs[j], path + len + 1);
            struct stat sb;
            if (stat(other, &sb) == 0 && S_ISREG(sb.st_mode))
                return other;
            free(other);
        }
        return NULL;
    }
    return NULL;
}

static void print_replaced(FILE *out, const struct name_list *dirs, const char *path)
{
    char *hidden = hidden_file(dirs->names, dirs->count, path);
    if (hidden)
        fprintf(out, "; a site file, replacing %s", hidden);
    free(hidden);
}

/* The rules of one class that came from file ("file:line" origins), or
 * from every file when file is NULL. */
static size_t count_rules(const struct rule_set *set, const char *file, enum proc_class c)
{
    size_t n = 0, len = file ? strlen(file) : 0;
    for (size_t i = 0; i < set->count; i++) {
        const char *origin = set->rules[i].origin;
        if (set->rules[i].class == c &&
            (!file || (strncmp(origin, file, len) == 0 && origin[len] == ':')))
            n++;
    }
    return n;
}

static void print_rule_counts(FILE *out, const struct rule_set *set, const char *file)
{
    size_t total = 0;
    for (enum proc_class c = CLASS_EXEMPT; c <= CLASS_FORBIDDEN; c++) {
        size_t n = count_rules(set, file, c);
        if (n)
            fprintf(out, "%s%zu %s", total ? ", " : "", n, class_name(c));
        total += n;
    }
    if (total == 0)
        fputs("no rules", out);
}

static void print_rules(FILE *out, const struct policy *p)
{
    struct errors errs = {0};
    struct file_list files = {0};
    /* The listing the loader made: the same directories, read again. */
    list_dir_files(p->rules_dirs.names, p->rules_dirs.count, ".rules", &files, &errs);
    fprintf(out, "\n# Rules in effect: %zu (", p->rules.count);
    print_rule_counts(out, &p->rules, NULL);
    fprintf(out, "), from %zu file%s in this order:\n", files.count,
            files.count == 1 ? "" : "s");
    for (size_t i = 0; i < files.count; i++) {
        fprintf(out, "#   %s: ", files.paths[i]);
        print_rule_counts(out, &p->rules, files.paths[i]);
        print_replaced(out, &p->rules_dirs, files.paths[i]);
        fputs("\n", out);
    }
    file_list_free(&files);
    errors_free(&errs);
}

static void print_notices(FILE *out, const struct policy *p)
{
    if (!p->notices.kinds[0].path) {
        fputs("\n# Notice templates: none (no directory of notices_dirs exists), so no\n"
              "# notice is sent.\n", out);
        return;
    }
    fputs("\n# Notice templates in effect:\n", out);
    for (int k = 0; k < NOTICE_KIND_COUNT; k++) {
        const char *path = p->notices.kinds[k].path;
        fprintf(out, "#   %s: %s", notice_kind_name((enum notice_kind)k), path ? path : "none");
        if (path)
            print_replaced(out, &p->notices_dirs, path);
        fputs("\n", out);
    }
}

void config_dump(FILE *out, const struct policy *p, const struct config_origins *o)
{
    print_header(out, o);
    config_dump_settings(out, p);
    print_origins(out, p, o);
    print_rules(out, p);
    print_notices(out, p);
}
