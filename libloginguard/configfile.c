#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <libgen.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cluster_config.h"
#include "config_keys.h"
#include "configfile.h"
#include "files.h"
#include "units.h"
#include "util.h"

static const char *const sections[] = {"daemon", "share", "violation", "classes",
                                       "exempt", "level N", "notify", "trace", "cluster", NULL};

/* Where the parser is in a file. */
struct cursor {
    const char *path;
    unsigned line;
    char section[32];  /* "" before the first [section] */
    int level;         /* 1-based when section is "level" */
    struct errors *errs;
};

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    char *end = s + strlen(s);
    while (end > s && isspace((unsigned char)end[-1]))
        *--end = '\0';
    return s;
}

static int set_list(struct name_list *list, const char *value, struct cursor *c)
{
    struct name_list fresh = {0};
    char *copy = xstrdup(value);
    char *save = NULL;
    for (char *tok = strtok_r(copy, ", \t", &save); tok; tok = strtok_r(NULL, ", \t", &save)) {
        if (fresh.count == MAX_NAMES) {
            errors_add(c->errs, c->path, c->line, "more than %d names in one list", MAX_NAMES);
            break;
        }
        fresh.names[fresh.count++] = xstrdup(tok);
    }
    free(copy);
    for (size_t i = 0; i < list->count; i++)
        free(list->names[i]);
    *list = fresh;
    return 0;
}

static int set_enum(const char *value, const char *const *names, int *out, const char *key,
                    struct cursor *c)
{
    for (int i = 0; names[i]; i++) {
        if (strcmp(value, names[i]) == 0) {
            *out = i;
            return 0;
        }
    }
    char choices[128] = "";
    for (int i = 0; names[i]; i++) {
        strncat(choices, i ? " | " : "", sizeof(choices) - strlen(choices) - 1);
        strncat(choices, names[i], sizeof(choices) - strlen(choices) - 1);
    }
    errors_add(c->errs, c->path, c->line, "'%s = %s': %s must be %s", key, value, key, choices);
    return -1;
}

static int set_value(void *base, const struct config_key *k, const char *value, struct cursor *c)
{
    static const char *const modes[] = {"observe", "enforce", NULL};
    static const char *const backends[] = {"auto", "systemd", "cgroupfs", NULL};
    static const char *const slurm_uses[] = {"auto", "yes", "no", NULL};
    char why[512] = "";
    char *shown = xasprintf("%s = %s", k->name, value);
    char *field = (char *)base + k->offset;
    int rc = 0, e;
    uint64_t u;

    switch (k->type) {
    case T_DURATION:
        rc = parse_duration(value, shown, (uint64_t *)field, why, sizeof(why));
        break;
    case T_SIZE:
        rc = parse_size(value, shown, (uint64_t *)field, why, sizeof(why));
        break;
    case T_CORES:
        rc = parse_cores(value, shown, (double *)field, why, sizeof(why));
        break;
    case T_COUNT:
        rc = parse_count(value, shown, (uint64_t *)field, why, sizeof(why));
        break;
    case T_UID:
        rc = parse_count(value, shown, &u, why, sizeof(why));
        if (rc == 0 && u >= (uid_t)-1) {
            snprintf(why, sizeof(why), "'%s' is not a valid uid", shown);
            rc = -1;
        }
        if (rc == 0)
            *(uid_t *)field = (uid_t)u;
        break;
    case T_BOOL:
        rc = parse_bool(value, shown, (bool *)field, why, sizeof(why));
        break;
    case T_FILE:
    case T_PATH:
        if (k->type == T_FILE && value[0] && value[0] != '/') {
            snprintf(why, sizeof(why), "'%s': the path must be absolute, or empty for none",
                     shown);
            rc = -1;
            break;
        }
        if (k->type == T_PATH && value[0] != '/' && strcmp(value, "-") != 0) {
            snprintf(why, sizeof(why), "'%s': the path must be absolute", shown);
            rc = -1;
            break;
        }
        /* fall through */
    case T_STRING:
        set_string((char **)field, value[0] ? value : NULL);
        break;
    case T_NAME:
        if (strlen(value) == 0 || strlen(value) >= k->size) {
            snprintf(why, sizeof(why), "'%s': a name has 1 to %zu characters", shown,
                     k->size - 1);
            rc = -1;
        } else {
            copy_string(field, k->size, value);
        }
        break;
    case T_LIST:
        set_list((struct name_list *)field, value, c);
        break;
    case T_MODE:
        if (set_enum(value, modes, &e, k->name, c) == 0)
            *(enum mode *)field = (enum mode)e;
        break;
    case T_BACKEND:
        if (set_enum(value, backends, &e, k->name, c) == 0)
            *(enum backend *)field = (enum backend)e;
        break;
    case T_SLURM:
        if (set_enum(value, slurm_uses, &e, k->name, c) == 0)
            *(enum slurm_use *)field = (enum slurm_use)e;
        break;
    }
    if (rc < 0)
        errors_add(c->errs, c->path, c->line, "%s", why);
    free(shown);
    return rc;
}

/* A ladder written in the main file replaces the built-in one; drop-ins
 * change single keys of the ladder in force, or add levels on top. */
struct parse_state {
    bool main_file;
    bool ladder_replaced;
    struct config_origins *origins; /* NULL: not traced */
};

static void set_origin(struct config_origin *o, const char *file, unsigned line,
                       const char *note)
{
    free(o->file);
    o->file = file ? xstrdup(file) : NULL;
    o->line = line;
    o->note = note;
}

static void note_origin(struct parse_state *st, const struct cursor *c,
                        const struct config_key *k, const char *note)
{
    if (!st->origins)
        return;
    size_t i = (size_t)(k - config_keys);
    bool level = strcmp(k->section, "level") == 0;
    set_origin(level ? &st->origins->levels[c->level - 1][i] : &st->origins->keys[i], c->path,
               c->line, note);
}

/* A level that a [level N] header makes holds defaults of its own. */
static void note_new_level(struct parse_state *st, const struct cursor *c)
{
    for (const struct config_key *k = config_keys; k->section; k++)
        if (strcmp(k->section, "level") == 0)
            note_origin(st, c, k, "a new level's default");
}

static void forget_ladder_origins(struct parse_state *st)
{
    for (size_t l = 0; st->origins && l < MAX_LEVELS; l++)
        for (size_t i = 0; i < CONFIG_KEY_COUNT; i++)
            set_origin(&st->origins->levels[l][i], NULL, 0, NULL);
}

static int enter_section(const char *name, struct cursor *c, struct policy *p,
                         struct parse_state *st)
{
    int n;
    char tail;
    if (sscanf(name, "level %d%c", &n, &tail) == 1) {
        if (n < 1 || n > MAX_LEVELS) {
            errors_add(c->errs, c->path, c->line, "[%s]: levels are numbered 1 to %d", name,
                       MAX_LEVELS);
            return -1;
        }
        if (st->main_file && !st->ladder_replaced) {
            st->ladder_replaced = true;
            memset(p->levels, 0, sizeof(p->levels));
            p->level_count = 0;
            forget_ladder_origins(st);
        }
        copy_string(c->section, sizeof(c->section), "level");
        c->level = n;
        struct level *l = &p->levels[n - 1];
        if (l->name[0] == '\0') {
            snprintf(l->name, sizeof(l->name), "level %d", n);
            l->duration = 15 * 60 * USEC_PER_SEC;
            note_new_level(st, c);
        }
        if ((size_t)n > p->level_count)
            p->level_count = (size_t)n;
        return 0;
    }
    for (int i = 0; sections[i]; i++) {
        if (strcmp(name, sections[i]) == 0 && strcmp(name, "level N") != 0) {
            copy_string(c->section, sizeof(c->section), name);
            return 0;
        }
    }
    errors_add(c->errs, c->path, c->line,
               "unknown section [%s]; sections are [daemon], [share], [violation], "
               "[classes], [exempt], [level N], [notify], [trace] and [cluster]",
               name);
    return -1;
}

static void unknown_key(const char *name, struct cursor *c)
{
    char known[512] = "";
    for (const struct config_key *k = config_keys; k->section; k++) {
        if (strcmp(k->section, c->section) != 0)
            continue;
        strncat(known, known[0] ? ", " : "", sizeof(known) - strlen(known) - 1);
        strncat(known, k->name, sizeof(known) - strlen(known) - 1);
    }
    const struct config_key *elsewhere = NULL;
    for (const struct config_key *k = config_keys; k->section; k++)
        if (strcmp(k->name, name) == 0)
            elsewhere = k;
    if (elsewhere)
        errors_add(c->errs, c->path, c->line, "'%s' belongs in [%s], not [%s]", name,
                   strcmp(elsewhere->section, "level") == 0 ? "level N" : elsewhere->section,
                   c->section);
    else
        errors_add(c->errs, c->path, c->line, "unknown key '%s' in [%s]; known keys: %s", name,
                   c->section, known);
}

/* [cluster] values wrong in themselves, said at their line. */
static void check_cluster_key(const struct config_key *k, const struct policy *p,
                              struct cursor *c)
{
    char why[512];
    if (strcmp(k->section, "cluster") != 0)
        return;
    if (strcmp(k->name, "database") == 0 && p->cluster_database &&
        cluster_database_check(p->cluster_database, why, sizeof(why)) < 0)
        errors_add(c->errs, c->path, c->line, "%s", why);
    if (strcmp(k->name, "node") == 0 && p->cluster_node &&
        cluster_node_check(p->cluster_node, why, sizeof(why)) < 0)
        errors_add(c->errs, c->path, c->line, "%s", why);
}

static void parse_line(char *line, struct cursor *c, struct policy *p, struct parse_state *st)
{
    char *s = trim(line);
    if (*s == '\0' || *s == '#' || *s == ';')
        return;
    if (*s == '[') {
        char *close = strchr(s, ']');
        if (!close || close[1] != '\0') {
            errors_add(c->errs, c->path, c->line, "a section header looks like [name]");
            c->section[0] = '\0';
            return;
        }
        *close = '\0';
        if (enter_section(trim(s + 1), c, p, st) < 0)
            copy_string(c->section, sizeof(c->section), "?");
        return;
    }
    char *eq = strchr(s, '=');
    if (!eq) {
        errors_add(c->errs, c->path, c->line, "expected 'key = value', got '%s'", s);
        return;
    }
    *eq = '\0';
    char *name = trim(s), *value = trim(eq + 1);
    if (c->section[0] == '\0') {
        errors_add(c->errs, c->path, c->line, "'%s' comes before any [section]", name);
        return;
    }
    if (strcmp(c->section, "?") == 0)
        return; /* already reported the section */
    const struct config_key *k = config_key_find(c->section, name);
    if (!k) {
        unknown_key(name, c);
        return;
    }
    void *base = strcmp(k->section, "level") == 0 ? (void *)&p->levels[c->level - 1] : (void *)p;
    if (set_value(base, k, value, c) == 0) {
        note_origin(st, c, k, NULL);
        check_cluster_key(k, p, c);
    }
}

/* The lines of f, named path in errors. */
static int parse_stream(FILE *f, const char *path, struct policy *p, struct parse_state *st,
                        struct errors *errs)
{
    size_t before = errs->count;
    struct cursor c = {.path = path, .errs = errs};
    struct config_origins *o = st->origins;
    if (o) {
        o->files = xreallocarray(o->files, o->file_count + 1, sizeof(*o->files));
        o->files[o->file_count++] = xstrdup(path);
    }
    char *buf = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&buf, &cap, f)) != -1) {
        c.line++;
        if (strlen(buf) != (size_t)n) {
            errors_add(errs, path, c.line, "a NUL byte in the line; is this a text file?");
            continue;
        }
        buf[strcspn(buf, "\n")] = '\0';
        parse_line(buf, &c, p, st);
    }
    free(buf);
    return errs->count == before ? 0 : -1;
}

static int parse_file(const char *path, struct policy *p, struct parse_state *st,
                      struct errors *errs)
{
    FILE *f = open_config_file(path, errs);
    if (!f)
        return -1;
    int rc = parse_stream(f, path, p, st, errs);
    fclose(f);
    return rc;
}

int config_parse_text(const char *name, const char *text, size_t len, struct policy *p,
                      struct errors *errs)
{
    struct parse_state st = {.main_file = true};
    if (len == 0)
        return 0; /* no lines (and POSIX lets fmemopen refuse a size of 0) */
    FILE *f = fmemopen((void *)text, len, "r");
    if (!f) {
        errors_add(errs, name, 0, "cannot read: %s", strerror(errno));
        return -1;
    }
    int rc = parse_stream(f, name, p, &st, errs);
    fclose(f);
    return rc;
}

/* What only the whole config tells: the node's name when it is the host
 * name, and the passfile the connection string names (libpq reads it as
 * root: it must be root's alone). */
static void validate_cluster(const struct policy *p, const char *path, struct errors *errs)
{
    if (!p->cluster_database || !p->cluster_database[0])
        return;
    char node[256], why[700], passfile[4096];
    if (!p->cluster_node && cluster_node_name(p, node, sizeof(node), why, sizeof(why)) < 0)
        errors_add(errs, path, 0, "%s", why);
    if (cluster_conninfo_value(p->cluster_database, "passfile", passfile, sizeof(passfile)) &&
        cluster_passfile_check(passfile, why, sizeof(why)) < 0)
        errors_add(errs, path, 0, "%s", why);
}

int config_validate(struct policy *p, const char *path, struct errors *errs)
{
    size_t before = errs->count;
    for (size_t i = 0; i < p->level_count; i++) {
        if (p->levels[i].name[0] == '\0')
            errors_add(errs, path, 0, "[level %zu] is missing: levels are numbered 1, 2, 3, ... "
                       "without gaps", i + 1);
        else if (p->levels[i].duration == 0)
            errors_add(errs, path, 0, "[level %zu] needs a duration > 0", i + 1);
    }
    if (p->level_count == 0)
        errors_add(errs, path, 0, "the ladder is empty: define at least [level 1]");
    if (p->sample_interval < 100000)
        errors_add(errs, path, 0, "sample_interval must be at least 100ms");
    if (p->scan_interval < p->sample_interval)
        errors_add(errs, path, 0, "scan_interval must not be shorter than sample_interval");
    if (p->window < p->sample_interval)
        errors_add(errs, path, 0, "[violation] window must not be shorter than sample_interval");
    if (!p->cgroup_parent || !p->cgroup_parent[0] || strstr(p->cgroup_parent, ".."))
        errors_add(errs, path, 0,
                   "[daemon] cgroup_parent must be a cgroup path without '..', such as loginguard");
    if (p->events_per_user > 0 && p->events_interval == 0)
        errors_add(errs, path, 0, "[daemon] events_interval must be above 0 (events_per_user = 0 "
                   "writes every event)");
    if (p->trace_enabled && p->trace_max_size < TRACE_MIN_SIZE)
        errors_add(errs, path, 0, "[trace] max_size must be at least 1M (a trace smaller than an "
                   "hour of samples replays nothing); enabled = no records none");
    if (p->trace_enabled && p->trace_max_age < 60 * USEC_PER_SEC)
        errors_add(errs, path, 0, "[trace] max_age must be at least 1m; enabled = no records none");
    if (p->memory_pressure > 100)
        errors_add(errs, path, 0, "[violation] memory_pressure is a percentage: 0 (off) to 100");
    if (p->violation_cpu <= 0 && p->violation_memory == 0)
        errors_add(errs, path, 0, "[violation] needs cpu or memory above 0, or nothing is ever a "
                   "violation");
    static const char *const channels[] = {"tty", "desktop", "email", "login", NULL};
    for (size_t i = 0; i < p->channels.count; i++) {
        int j;
        for (j = 0; channels[j]; j++)
            if (strcmp(p->channels.names[i], channels[j]) == 0)
                break;
        if (!channels[j])
            errors_add(errs, path, 0, "[notify] channels: unknown channel '%s'; use tty, "
                       "desktop, email, login", p->channels.names[i]);
    }
    if (name_list_contains(&p->channels, "email") && (!p->sendmail || !p->sendmail[0]))
        errors_add(errs, path, 0, "[notify] channels has email but sendmail is empty; set "
                   "sendmail = /usr/sbin/sendmail -i -t");
    validate_cluster(p, path, errs);
    return errs->count == before ? 0 : -1;
}

/* DIR/conf.d/NAME.conf and DIR/rules.d, DIR being the config file's directory. */
static char *sibling(const char *path, const char *name)
{
    char *copy = xstrdup(path);
    char *dir = xasprintf("%s/%s", dirname(copy), name);
    free(copy);
    return dir;
}

static bool any_directory(const struct name_list *dirs)
{
    struct stat sb;
    for (size_t i = 0; i < dirs->count; i++)
        if (stat(dirs->names[i], &sb) == 0 && S_ISDIR(sb.st_mode))
            return true;
    return false;
}

void config_origins_free(struct config_origins *o)
{
    for (size_t i = 0; i < CONFIG_KEY_COUNT; i++)
        free(o->keys[i].file);
    for (size_t l = 0; l < MAX_LEVELS; l++)
        for (size_t i = 0; i < CONFIG_KEY_COUNT; i++)
            free(o->levels[l][i].file);
    for (size_t i = 0; i < o->file_count; i++)
        free(o->files[i]);
    free(o->files);
    memset(o, 0, sizeof(*o));
}

/* The default of a directory list: beside the config file, then the
 * shipped one. */
static void default_dirs(struct name_list *dirs, const char *path, const char *name,
                         const char *shipped, struct parse_state *st, const char *section,
                         const char *key)
{
    if (dirs->count > 0)
        return;
    dirs->names[dirs->count++] = sibling(path, name);
    dirs->names[dirs->count++] = xstrdup(shipped);
    if (st->origins)
        set_origin(&st->origins->keys[config_key_find(section, key) - config_keys], NULL, 0,
                   "built-in default: beside the config file, then the shipped one");
}

int config_load(const char *path, bool must_exist, struct policy *out, struct errors *errs)
{
    return config_load_traced(path, must_exist, out, NULL, errs);
}

int config_load_traced(const char *path, bool must_exist, struct policy *out,
                       struct config_origins *origins, struct errors *errs)
{
    size_t before = errs->count;
    struct parse_state st = {.origins = origins};
    if (origins)
        memset(origins, 0, sizeof(*origins));
    policy_init_defaults(out);

    st.main_file = true;
    if (access(path, F_OK) == 0 || must_exist)
        parse_file(path, out, &st, errs);
    st.main_file = false;

    char *dropins = sibling(path, "conf.d");
    struct file_list files = {0};
    list_dir_files(&dropins, 1, ".conf", &files, errs);
    for (size_t i = 0; i < files.count; i++)
        parse_file(files.paths[i], out, &st, errs);
    file_list_free(&files);
    free(dropins);

    default_dirs(&out->rules_dirs, path, "rules.d", PKGDATADIR "/rules.d", &st, "daemon",
                 "rules_dirs");
    rules_load_dirs(&out->rules, out->rules_dirs.names, out->rules_dirs.count, errs);
    default_dirs(&out->notices_dirs, path, "notices", PKGDATADIR "/notices", &st, "notify",
                 "notices_dirs");
    /* No template directory at all is a build tree or a broken install,
     * not an admin's mistake: the daemon says so at start and sends no
     * notices.  A directory that is there must be right. */
    if (any_directory(&out->notices_dirs))
        notice_templates_load(&out->notices, out->notices_dirs.names, out->notices_dirs.count,
                              errs);
    config_validate(out, path, errs);

    if (errs->count != before) {
        policy_free(out);
        return -1;
    }
    return 0;
}
