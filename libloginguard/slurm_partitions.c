#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slurm_partitions.h"
#include "util.h"

/* The longest time read: a year.  The bound is on the sum, not on D, so
 * that whatever is accepted is written back by slurm_time_format in a form
 * accepted again ("365-24" is 366 days, printed "366-00:00:00").  Parts of
 * at most 9 digits keep the sum far from overflowing. */
#define MAX_SECONDS (UINT64_C(365) * 86400)
#define MB (UINT64_C(1) << 20)

/* A decimal number of at most 9 digits: the whole of [s, s+len). */
static bool small_number(const char *s, size_t len, uint64_t *out)
{
    if (len == 0 || len > 9)
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    *out = v;
    return true;
}

/* "a:b:c" into up to three numbers; how many there were, or -1. */
static int clock_parts(const char *s, uint64_t part[3])
{
    int n = 0;
    for (;;) {
        size_t len = strcspn(s, ":");
        if (n == 3 || !small_number(s, len, &part[n]))
            return -1;
        n++;
        if (!s[len])
            return n;
        s += len + 1;
    }
}

int slurm_time_parse(const char *s, uint64_t *seconds)
{
    if (!strcmp(s, "UNLIMITED") || !strcmp(s, "INFINITE") || !strcmp(s, "NONE")) {
        *seconds = 0;
        return 0;
    }
    uint64_t days = 0, p[3];
    const char *dash = strchr(s, '-');
    if (dash && !small_number(s, (size_t)(dash - s), &days))
        return -1;
    int n = clock_parts(dash ? dash + 1 : s, p);
    if (n < 0)
        return -1;
    uint64_t t;
    if (dash) /* D-HH, D-HH:MM, D-HH:MM:SS */
        t = days * 86400 + p[0] * 3600 + (n > 1 ? p[1] * 60 : 0) + (n > 2 ? p[2] : 0);
    else if (n == 3) /* HH:MM:SS */
        t = p[0] * 3600 + p[1] * 60 + p[2];
    else /* MM, MM:SS */
        t = p[0] * 60 + (n > 1 ? p[1] : 0);
    if (t > MAX_SECONDS)
        return -2;
    *seconds = t;
    return 0;
}

void slurm_time_format(uint64_t seconds, char *out, size_t len)
{
    uint64_t d = seconds / 86400, h = seconds / 3600 % 24, m = seconds / 60 % 60, s = seconds % 60;
    if (d)
        snprintf(out, len, "%" PRIu64 "-%02" PRIu64 ":%02" PRIu64 ":%02" PRIu64, d, h, m, s);
    else
        snprintf(out, len, "%02" PRIu64 ":%02" PRIu64 ":%02" PRIu64, h, m, s);
}

static void names_free(struct slurm_names *n)
{
    for (size_t i = 0; i < n->count; i++)
        free(n->names[i]);
    free(n->names);
    memset(n, 0, sizeof(*n));
}

static void partition_free(struct slurm_partition *p)
{
    free(p->name);
    free(p->qos);
    names_free(&p->allow_groups);
    names_free(&p->allow_accounts);
    names_free(&p->deny_accounts);
}

void slurm_partitions_free(struct slurm_partitions *p)
{
    for (size_t i = 0; i < p->count; i++)
        partition_free(&p->items[i]);
    free(p->items);
    memset(p, 0, sizeof(*p));
}

const struct slurm_partition *slurm_partition_find(const struct slurm_partitions *p,
                                                   const char *name)
{
    for (size_t i = 0; i < p->count; i++)
        if (!strcmp(p->items[i].name, name))
            return &p->items[i];
    return NULL;
}

/* "ALL", or names separated by commas. */
static const char *parse_names(const char *value, struct slurm_names *out)
{
    names_free(out);
    if (!strcmp(value, "ALL")) {
        out->all = true;
        return NULL;
    }
    size_t capacity = 0;
    for (const char *s = value; *s;) {
        size_t len = strcspn(s, ",");
        if (len) {
            if (out->count == SLURM_NAMES_MAX)
                return "more names than loginguard reads";
            out->names = grow_array(out->names, out->count, &capacity, sizeof(*out->names));
            out->names[out->count++] = xstrndup(s, len);
        }
        s += len + (s[len] == ',');
    }
    return NULL;
}

static const char *parse_yes(const char *value, bool *out)
{
    if (strcmp(value, "YES") && strcmp(value, "NO"))
        return "neither YES nor NO";
    *out = !strcmp(value, "YES");
    return NULL;
}

/* A partition's time.  One over a year is read as no limit: no line asks
 * for that long, and one such partition must not cost the whole answer. */
static const char *parse_time(const char *value, uint64_t *out)
{
    int rc = slurm_time_parse(value, out);
    if (rc == -2)
        *out = 0;
    return rc == -1 ? "not a Slurm time" : NULL;
}

/* A count, or UNLIMITED (0). */
static const char *parse_limit(const char *value, uint64_t *out)
{
    if (!strcmp(value, "UNLIMITED")) {
        *out = 0;
        return NULL;
    }
    return small_number(value, strlen(value), out) ? NULL : "neither a number nor UNLIMITED";
}

/* One Key=Value of a partition's line: an error text, or NULL. */
static const char *parse_word(struct slurm_partition *p, const char *key, const char *value)
{
    uint64_t n;
    const char *why;
    if (!strcmp(key, "State")) {
        p->up = !strcmp(value, "UP");
    } else if (!strcmp(key, "Default")) {
        return parse_yes(value, &p->is_default);
    } else if (!strcmp(key, "Hidden")) {
        return parse_yes(value, &p->hidden);
    } else if (!strcmp(key, "RootOnly")) {
        return parse_yes(value, &p->root_only);
    } else if (!strcmp(key, "QoS")) {
        free(p->qos);
        p->qos = strcmp(value, "N/A") ? xstrdup(value) : NULL;
    } else if (!strcmp(key, "MaxTime")) {
        return parse_time(value, &p->max_time);
    } else if (!strcmp(key, "DefaultTime")) {
        return parse_time(value, &p->default_time);
    } else if (!strcmp(key, "MaxCPUsPerNode")) {
        if ((why = parse_limit(value, &n)) == NULL)
            p->max_cpus_per_node = (unsigned)n;
        return why;
    } else if (!strcmp(key, "MaxMemPerNode")) {
        if ((why = parse_limit(value, &n)) == NULL)
            p->max_mem_per_node = n * MB;
        return why;
    } else if (!strcmp(key, "AllowGroups")) {
        return parse_names(value, &p->allow_groups);
    } else if (!strcmp(key, "AllowAccounts")) {
        return parse_names(value, &p->allow_accounts);
    } else if (!strcmp(key, "DenyAccounts")) {
        return parse_names(value, &p->deny_accounts);
    }
    return NULL; /* a key of no use here */
}

/* Between words: Slurm writes spaces (two after CpuBind=); a CR is taken
 * as one too, so CR LF text (a copy, a wrapper) loses nothing after it. */
#define WORD_BREAK " \t\r"

/* One line, NUL-ended and cut into words in place. */
static int parse_line(char *line, struct slurm_partition *p, char *why, size_t why_len)
{
    memset(p, 0, sizeof(*p));
    p->allow_groups.all = p->allow_accounts.all = true; /* what Slurm means by no such key */
    for (char *save = NULL, *word = strtok_r(line, WORD_BREAK, &save); word;
         word = strtok_r(NULL, WORD_BREAK, &save)) {
        char *eq = strchr(word, '=');
        if (!eq) {
            snprintf(why, why_len, "\"%.40s\" is not Key=Value", word);
            return -1;
        }
        *eq = '\0';
        const char *bad = NULL;
        if (!strcmp(word, "PartitionName")) {
            if (p->name || !eq[1])
                bad = p->name ? "two names" : "an empty name";
            else
                p->name = xstrdup(eq + 1);
        } else {
            bad = parse_word(p, word, eq + 1);
        }
        if (bad) {
            snprintf(why, why_len, "%.40s=%.40s: %s", word, eq + 1, bad);
            return -1;
        }
    }
    if (!p->name) {
        snprintf(why, why_len, "no PartitionName= (is this scontrol show partition --oneliner?)");
        return -1;
    }
    return 0;
}

int slurm_partitions_parse(const char *text, size_t len, struct slurm_partitions *out,
                           char *err, size_t err_len)
{
    memset(out, 0, sizeof(*out));
    if (len > SLURM_TEXT_MAX) {
        snprintf(err, err_len, "over %u bytes", SLURM_TEXT_MAX);
        return -1;
    }
    size_t capacity = 0, lineno = 0;
    for (size_t at = 0; at < len;) {
        const char *nl = memchr(text + at, '\n', len - at);
        size_t end = nl ? (size_t)(nl - text) : len;
        char why[200] = "";
        if (memchr(text + at, '\0', end - at))
            snprintf(why, sizeof(why), "a NUL byte");
        char *line = xstrndup(text + at, end - at);
        at = end + 1;
        lineno++;
        bool blank = line[strspn(line, " \t\r")] == '\0';
        if (!blank && !why[0] && out->count == SLURM_PARTITIONS_MAX)
            snprintf(why, sizeof(why), "more partitions than loginguard reads (%d)",
                     SLURM_PARTITIONS_MAX);
        if (!blank && !why[0]) {
            out->items = grow_array(out->items, out->count, &capacity, sizeof(*out->items));
            struct slurm_partition *p = &out->items[out->count++];
            parse_line(line, p, why, sizeof(why)); /* a failed one is freed below */
        }
        free(line);
        if (why[0]) {
            snprintf(err, err_len, "line %zu: %s", lineno, why);
            slurm_partitions_free(out);
            return -1;
        }
    }
    return 0;
}
