#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "files.h"
#include "rules.h"
#include "units.h"
#include "util.h"

static const char *const class_names[] = {"none", "exempt", "compute", "forbidden"};

const char *class_name(enum proc_class c)
{
    return class_names[c];
}

static int class_from_name(const char *name, enum proc_class *c)
{
    for (int i = CLASS_EXEMPT; i <= CLASS_FORBIDDEN; i++) {
        if (strcmp(name, class_names[i]) == 0) {
            *c = (enum proc_class)i;
            return 0;
        }
    }
    return -1;
}

static void rule_free(struct rule *r)
{
    free(r->name);
    free(r->exe);
    free(r->comm);
    lg_regex_free(r->argv);
    free(r->argv_text);
    free(r->origin);
}

void rules_free(struct rule_set *set)
{
    for (size_t i = 0; i < set->count; i++)
        rule_free(&set->rules[i]);
    free(set->rules);
    set->rules = NULL;
    set->count = 0;
}

static bool valid_rule_name(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++) {
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_' ||
              *s == '.' || *s == '-'))
            return false;
    }
    return true;
}

static const struct rule *find_rule(const struct rule_set *set, const char *name)
{
    for (size_t i = 0; i < set->count; i++)
        if (strcmp(set->rules[i].name, name) == 0)
            return &set->rules[i];
    return NULL;
}

/* Read an optional string member; complain if present with another type. */
static int optional_string(json_t *obj, const char *key, const char **out,
                           const char *file, unsigned line, struct errors *errs)
{
    json_t *v = json_object_get(obj, key);
    *out = NULL;
    if (!v)
        return 0;
    if (!json_is_string(v) || json_string_length(v) == 0) {
        errors_add(errs, file, line, "\"%s\" must be a non-empty string", key);
        return -1;
    }
    *out = json_string_value(v);
    return 0;
}

static int check_keys(json_t *obj, const char *file, unsigned line, struct errors *errs)
{
    static const char *known[] = {"name", "class", "exe", "comm", "argv", "cpu", "grace", NULL};
    const char *key;
    json_t *value;
    int bad = 0;
    json_object_foreach(obj, key, value) {
        (void)value;
        int i;
        for (i = 0; known[i]; i++)
            if (strcmp(key, known[i]) == 0)
                break;
        if (!known[i]) {
            errors_add(errs, file, line,
                       "unknown key \"%s\"; a rule has name, class, exe, comm, argv, cpu, grace",
                       key);
            bad = -1;
        }
    }
    return bad;
}

static int parse_compute_limits(json_t *obj, struct rule *r, const char *file,
                                unsigned line, struct errors *errs)
{
    json_t *cpu = json_object_get(obj, "cpu");
    json_t *grace = json_object_get(obj, "grace");
    r->cpu = -1;
    r->grace = -1;
    if ((cpu || grace) && r->class != CLASS_COMPUTE) {
        errors_add(errs, file, line, "\"cpu\" and \"grace\" apply only to class \"compute\"");
        return -1;
    }
    if (cpu) {
        if (!json_is_number(cpu) || json_number_value(cpu) < 0) {
            errors_add(errs, file, line, "\"cpu\" must be a number of cores, like 0.5");
            return -1;
        }
        r->cpu = json_number_value(cpu);
    }
    if (grace) {
        char why[256];
        uint64_t usec;
        if (!json_is_string(grace) ||
            parse_duration(json_string_value(grace), json_string_value(grace), &usec, why, sizeof(why)) < 0) {
            errors_add(errs, file, line, "\"grace\": %s",
                       json_is_string(grace) ? why : "must be a duration string like \"60s\"");
            return -1;
        }
        r->grace = (int64_t)usec;
    }
    return 0;
}

/* Parse one rule line into r.  Returns 0 or -1 after adding errors. */
static int parse_rule(const struct rule_set *set, const char *text, struct rule *r,
                      const char *file, unsigned line, struct errors *errs)
{
    json_error_t jerr;
    json_t *obj = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
    if (!obj) {
        errors_add(errs, file, line, "not valid JSON at character %d: %s", jerr.position, jerr.text);
        return -1;
    }
    int rc = -1;
    if (!json_is_object(obj)) {
        errors_add(errs, file, line, "a rule must be a JSON object {...}");
        goto out;
    }
    if (check_keys(obj, file, line, errs) < 0)
        goto out;

    const char *name, *class, *exe, *comm, *argv;
    if (optional_string(obj, "name", &name, file, line, errs) < 0 ||
        optional_string(obj, "class", &class, file, line, errs) < 0 ||
        optional_string(obj, "exe", &exe, file, line, errs) < 0 ||
        optional_string(obj, "comm", &comm, file, line, errs) < 0 ||
        optional_string(obj, "argv", &argv, file, line, errs) < 0)
        goto out;
    if (!name || !valid_rule_name(name)) {
        errors_add(errs, file, line, "\"name\" is required: lowercase letters, digits, '.', '_', '-'");
        goto out;
    }
    const struct rule *dup = find_rule(set, name);
    if (dup) {
        errors_add(errs, file, line, "rule \"%s\" is already defined at %s; rename one", name,
                   dup->origin);
        goto out;
    }
    if (!class || class_from_name(class, &r->class) < 0) {
        errors_add(errs, file, line, "\"class\" must be \"exempt\", \"compute\" or \"forbidden\"");
        goto out;
    }
    if (!exe && !comm && !argv) {
        errors_add(errs, file, line, "rule \"%s\" matches nothing: give \"exe\", \"comm\" or \"argv\"",
                   name);
        goto out;
    }
    /* comm and argv are chosen by the user; only the real path is trusted. */
    if (r->class == CLASS_EXEMPT && (!exe || exe[0] != '/')) {
        errors_add(errs, file, line,
                   "exempt rule \"%s\" needs \"exe\" with an absolute path: a name or argv alone "
                   "would let a renamed program slip through",
                   name);
        goto out;
    }
    if (comm && strlen(comm) > 15 && !strpbrk(comm, "*?[")) {
        errors_add(errs, file, line,
                   "\"comm\": \"%s\" is longer than the kernel's 15-byte process name and never "
                   "matches; use its first 15 bytes or \"exe\"",
                   comm);
        goto out;
    }
    if (argv) {
        char msg[256];
        r->argv = lg_regex_compile(argv, msg, sizeof(msg));
        if (!r->argv) {
            errors_add(errs, file, line, "rule \"%s\": \"argv\": bad regular expression: %s",
                       name, msg);
            goto out;
        }
        r->argv_text = xstrdup(argv);
    }
    if (parse_compute_limits(obj, r, file, line, errs) < 0)
        goto out;
    r->name = xstrdup(name);
    r->exe = exe ? xstrdup(exe) : NULL;
    /* The file a plain path names now, for processes in another mount
     * namespace, whose paths cannot be believed (see programs.h). */
    struct stat st;
    if (exe && !strpbrk(exe, "*?[") && stat(exe, &st) == 0) {
        r->exe_is_file = true;
        r->exe_dev = st.st_dev;
        r->exe_ino = st.st_ino;
    }
    r->comm = comm ? xstrdup(comm) : NULL;
    r->origin = xasprintf("%s:%u", file, line);
    rc = 0;
out:
    if (rc < 0)
        rule_free(r);
    json_decref(obj);
    return rc;
}

static bool is_blank_or_comment(const char *line)
{
    line += strspn(line, " \t\r");
    return *line == '\0' || *line == '\n' || *line == '#';
}

int rules_load_file(struct rule_set *set, const char *path, struct errors *errs)
{
    size_t before = errs->count;
    FILE *f = open_config_file(path, errs);
    if (!f)
        return (int)(errs->count - before);
    char *buf = NULL;
    size_t cap = 0;
    unsigned line = 0;
    while (getline(&buf, &cap, f) != -1) {
        line++;
        if (is_blank_or_comment(buf))
            continue;
        buf[strcspn(buf, "\r\n")] = '\0';
        struct rule r = {0};
        if (parse_rule(set, buf, &r, path, line, errs) == 0) {
            set->rules = xreallocarray(set->rules, set->count + 1, sizeof(*set->rules));
            set->rules[set->count++] = r;
        }
    }
    free(buf);
    fclose(f);
    return (int)(errs->count - before);
}

int rules_load_dirs(struct rule_set *set, char *const *dirs, size_t dir_count,
                    struct errors *errs)
{
    size_t before = errs->count;
    struct file_list files = {0};
    list_dir_files(dirs, dir_count, ".rules", &files, errs);
    for (size_t i = 0; i < files.count; i++)
        rules_load_file(set, files.paths[i], errs);
    file_list_free(&files);
    return (int)(errs->count - before);
}

bool rule_matches_exe(const struct rule *r, const char *exe)
{
    return !r->exe || (exe && fnmatch(r->exe, exe, 0) == 0);
}

bool rule_matches_argv(const struct rule *r, const char *cmdline)
{
    return !r->argv_text || (cmdline && lg_regex_search(r->argv, cmdline, strlen(cmdline)));
}

bool rule_names_file(const struct rule *r, dev_t dev, ino_t ino)
{
    return r->exe_is_file && r->exe_dev == dev && r->exe_ino == ino;
}

bool rule_matches_comm(const struct rule *r, const char *comm)
{
    return !r->comm || (comm && fnmatch(r->comm, comm, 0) == 0);
}

static bool rule_matches(const struct rule *r, const struct proc_identity *id)
{
    return rule_matches_exe(r, id->exe) && rule_matches_comm(r, id->comm) &&
           rule_matches_argv(r, id->cmdline);
}

const struct rule *rules_classify(const struct rule_set *set, const struct proc_identity *id)
{
    const struct rule *best = NULL;
    for (size_t i = 0; i < set->count; i++) {
        const struct rule *r = &set->rules[i];
        if ((!best || r->class > best->class) && rule_matches(r, id))
            best = r;
    }
    return best;
}
