#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_dump.h"
#include "policy_diff.h"
#include "strbuf.h"
#include "util.h"

/* One setting as the dump writes it: "[section] key" and its value. */
struct setting {
    char *name;
    char *value;
};

struct settings {
    struct setting *items;
    size_t count;
    char *text;  /* the dump, cut into the names and values above */
};

/* The settings through the dump's own writer: every key in its exact
 * units, so that two values differ exactly when the policies do. */
static void read_settings(const struct policy *p, struct settings *s)
{
    size_t len = 0;
    s->items = NULL;
    s->count = 0;
    s->text = NULL;
    FILE *f = open_memstream(&s->text, &len);
    if (f) {
        config_dump_settings(f, p);
        fclose(f);
    }
    if (!s->text)
        s->text = xstrdup(""); /* no memory for the stream: nothing compared */
    const char *section = "";
    char *save = NULL;
    for (char *line = strtok_r(s->text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *eq = strstr(line, " =");
        if (line[0] == '[') {
            section = line;
            continue;
        }
        if (!eq)
            continue;
        *eq = '\0';
        s->items = xreallocarray(s->items, s->count + 1, sizeof(*s->items));
        s->items[s->count++] = (struct setting){xasprintf("%s %s", section, line),
                                                eq[2] == ' ' ? eq + 3 : eq + 2};
    }
}

static void free_settings(struct settings *s)
{
    for (size_t i = 0; i < s->count; i++)
        free(s->items[i].name);
    free(s->items);
    free(s->text);
}

static const struct setting *find_setting(const struct settings *s, const char *name)
{
    for (size_t i = 0; i < s->count; i++)
        if (strcmp(s->items[i].name, name) == 0)
            return &s->items[i];
    return NULL;
}

/* Whether the section of a setting ("[level 3] cpu") is in s at all. */
static bool has_section(const struct settings *s, const char *name)
{
    size_t len = (size_t)(strchr(name, ']') - name) + 1;
    for (size_t i = 0; i < s->count; i++)
        if (strncmp(s->items[i].name, name, len) == 0)
            return true;
    return false;
}

static void add(char ***list, size_t *count, const char *item)
{
    for (size_t i = 0; i < *count; i++)
        if (strcmp((*list)[i], item) == 0)
            return;
    *list = xreallocarray(*list, *count + 1, sizeof(**list));
    (*list)[(*count)++] = xstrdup(item);
}

/* A setting of `from` that `to` lacks or holds another value of; a
 * section that `to` lacks altogether counts once, as the section. */
static void compare_settings(const struct settings *from, const struct settings *to,
                             struct policy_changes *out)
{
    for (size_t i = 0; i < from->count; i++) {
        const struct setting *s = &from->items[i];
        const struct setting *other = find_setting(to, s->name);
        if (other && strcmp(other->value, s->value) == 0)
            continue;
        if (!other && !has_section(to, s->name)) {
            char *section = xstrdup(s->name);
            strchr(section, ']')[1] = '\0';
            add(&out->settings, &out->setting_count, section);
            free(section);
        } else {
            add(&out->settings, &out->setting_count, s->name);
        }
    }
}

/* The file of a rule's origin, "file:line". */
static size_t origin_file_len(const struct rule *r)
{
    const char *colon = strrchr(r->origin, ':');
    return colon ? (size_t)(colon - r->origin) : strlen(r->origin);
}

static bool from_file(const struct rule *r, const char *file, size_t len)
{
    return origin_file_len(r) == len && strncmp(r->origin, file, len) == 0;
}

static bool same_text(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* What a rule does; where in its file it stands (its line) does not
 * count. */
static bool same_rule(const struct rule *a, const struct rule *b)
{
    return same_text(a->name, b->name) && a->class == b->class && same_text(a->exe, b->exe) &&
           same_text(a->comm, b->comm) && same_text(a->argv_text, b->argv_text) &&
           a->cpu == b->cpu && a->grace == b->grace;
}

/* Whether the rules that came from file are the same, in the same order,
 * in both sets. */
static bool same_file_rules(const struct rule_set *a, const struct rule_set *b, const char *file,
                            size_t len)
{
    size_t i = 0, j = 0;
    for (;;) {
        while (i < a->count && !from_file(&a->rules[i], file, len))
            i++;
        while (j < b->count && !from_file(&b->rules[j], file, len))
            j++;
        if (i == a->count || j == b->count)
            return i == a->count && j == b->count;
        if (!same_rule(&a->rules[i++], &b->rules[j++]))
            return false;
    }
}

static void compare_rules(const struct rule_set *from, const struct rule_set *to,
                          struct policy_changes *out)
{
    for (size_t i = 0; i < from->count; i++) {
        const struct rule *r = &from->rules[i];
        size_t len = origin_file_len(r);
        if (same_file_rules(from, to, r->origin, len))
            continue;
        char *file = xasprintf("%.*s", (int)len, r->origin);
        add(&out->rule_files, &out->rule_file_count, file);
        free(file);
    }
}

void policy_diff(const struct policy *old, const struct policy *fresh, struct policy_changes *out)
{
    memset(out, 0, sizeof(*out));
    struct settings a, b;
    read_settings(old, &a);
    read_settings(fresh, &b);
    compare_settings(&b, &a, out);
    compare_settings(&a, &b, out);
    free_settings(&a);
    free_settings(&b);
    compare_rules(&fresh->rules, &old->rules, out);
    compare_rules(&old->rules, &fresh->rules, out);
}

/* At most this many names of a list in the line; the reply has them all. */
#define TEXT_LIST_MAX 8

static void add_list(struct strbuf *b, char *const *items, size_t count)
{
    for (size_t i = 0; i < count && i < TEXT_LIST_MAX; i++)
        strbuf_addf(b, "%s%s", i ? ", " : "", items[i]);
    if (count > TEXT_LIST_MAX)
        strbuf_addf(b, " and %zu more", count - TEXT_LIST_MAX);
}

char *policy_changes_text(const struct policy *old, const struct policy *fresh,
                          const struct policy_changes *c)
{
    struct strbuf b = {0};
    strbuf_addf(&b, "%s mode", mode_name(fresh->mode));
    if (old->mode != fresh->mode)
        strbuf_addf(&b, " (was %s)", mode_name(old->mode));
    strbuf_addf(&b, ", %zu rules", fresh->rules.count);
    if (old->rules.count != fresh->rules.count)
        strbuf_addf(&b, " (was %zu)", old->rules.count);
    strbuf_addf(&b, ", %zu levels", fresh->level_count);
    if (old->level_count != fresh->level_count)
        strbuf_addf(&b, " (was %zu)", old->level_count);
    if (c->setting_count) {
        strbuf_adds(&b, "; changed: ");
        add_list(&b, c->settings, c->setting_count);
    }
    if (c->rule_file_count) {
        strbuf_adds(&b, "; rules changed in ");
        add_list(&b, c->rule_files, c->rule_file_count);
    }
    if (!c->setting_count && !c->rule_file_count)
        strbuf_adds(&b, "; nothing changed");
    return strbuf_take(&b);
}

static void free_list(char **list, size_t count)
{
    for (size_t i = 0; i < count; i++)
        free(list[i]);
    free(list);
}

void policy_changes_free(struct policy_changes *c)
{
    free_list(c->settings, c->setting_count);
    free_list(c->rule_files, c->rule_file_count);
    memset(c, 0, sizeof(*c));
}

void reload_outcome_free(struct reload_outcome *o)
{
    errors_free(&o->errors);
    policy_changes_free(&o->changes);
    free(o->summary);
    o->summary = NULL;
}
