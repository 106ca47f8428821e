#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "units.h"

struct unit {
    const char *name;
    double factor;
};

static const struct unit duration_units[] = {
    {"ms", 1e3}, {"s", 1e6}, {"sec", 1e6}, {"m", 60e6}, {"min", 60e6},
    {"h", 3600e6}, {"d", 86400e6}, {NULL, 0},
};

/* Binary multiples, as memory limits are written on every cluster. */
static const struct unit size_units[] = {
    {"", 1}, {"B", 1}, {"K", 1024.0}, {"M", 1048576.0}, {"G", 1073741824.0},
    {"T", 1099511627776.0}, {"KiB", 1024.0}, {"MiB", 1048576.0},
    {"GiB", 1073741824.0}, {"TiB", 1099511627776.0}, {NULL, 0},
};

static const struct unit core_units[] = {
    {"", 1}, {"cores", 1}, {"core", 1}, {"%", 0.01}, {NULL, 0},
};

/* Split "1.5 cores" into a number and a unit word; spaces between allowed. */
static int split_number(const char *text, const char *shown, double *number,
                        const char **unit, char *why, size_t why_len)
{
    while (isspace((unsigned char)*text))
        text++;
    if (*text == '\0') {
        snprintf(why, why_len, "empty value");
        return -1;
    }
    if (*text == '-' || *text == '+') {
        snprintf(why, why_len, "'%s' must be a plain non-negative number", shown);
        return -1;
    }
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || errno != 0 || !isfinite(v) || v < 0 ||
        (end > text && (end[-1] == '.' || *text == '.'))) {
        snprintf(why, why_len, "'%s' does not start with a number", shown);
        return -1;
    }
    /* strtod accepts hex and exponents; admins write neither. */
    for (const char *p = text; p < end; p++) {
        if (!isdigit((unsigned char)*p) && *p != '.') {
            snprintf(why, why_len, "'%s' is not a plain decimal number", shown);
            return -1;
        }
    }
    while (isspace((unsigned char)*end))
        end++;
    *number = v;
    *unit = end;
    return 0;
}

static const struct unit *find_unit(const struct unit *units, const char *word,
                                    bool case_sensitive)
{
    for (const struct unit *u = units; u->name; u++) {
        if (case_sensitive ? strcmp(u->name, word) == 0
                           : strcasecmp(u->name, word) == 0)
            return u;
    }
    return NULL;
}

static void list_units(const struct unit *units, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (const struct unit *u = units; u->name && used < len; u++) {
        if (u->name[0] == '\0')
            continue;
        int n = snprintf(buf + used, len - used, "%s'%s'", used ? ", " : "", u->name);
        if (n < 0)
            break;
        used += (size_t)n;
    }
}

/* Suggest the unit the admin most likely meant ("cors" -> "cores"). */
static const char *closest_unit(const struct unit *units, const char *word)
{
    const char *best = NULL;
    size_t best_common = 0;
    for (const struct unit *u = units; u->name; u++) {
        size_t common = 0;
        while (u->name[common] && word[common] &&
               tolower((unsigned char)u->name[common]) ==
                   tolower((unsigned char)word[common]))
            common++;
        /* Two letters, or the whole unit, in common before a guess is
         * worth making ("Gb" -> "G", "cors" -> "cores", "cpus" -> list). */
        if (common > best_common && (common >= 2 || u->name[common] == '\0')) {
            best_common = common;
            best = u->name;
        }
    }
    return best;
}

static int parse_with_units(const char *text, const char *shown, const struct unit *units,
                            bool case_sensitive, const char *what, double *out,
                            char *why, size_t why_len)
{
    double number;
    const char *unit;
    if (split_number(text, shown, &number, &unit, why, why_len) < 0)
        return -1;
    char word[32];
    size_t n = strcspn(unit, " \t");
    if (n >= sizeof(word) || unit[n + strspn(unit + n, " \t")] != '\0') {
        snprintf(why, why_len, "unexpected text after the unit in '%s'", shown);
        return -1;
    }
    memcpy(word, unit, n);
    word[n] = '\0';
    const struct unit *u = find_unit(units, word, case_sensitive);
    if (!u) {
        const char *guess = closest_unit(units, word);
        char names[160];
        list_units(units, names, sizeof(names));
        if (guess)
            snprintf(why, why_len, "unknown unit '%s' in '%s'; use '%s'", word, shown, guess);
        else if (word[0] == '\0')
            snprintf(why, why_len, "'%s' needs a unit for %s: one of %s", shown, what, names);
        else
            snprintf(why, why_len, "unknown unit '%s' in '%s'; use one of %s", word, shown, names);
        return -1;
    }
    *out = number * u->factor;
    return 0;
}

int parse_duration(const char *text, const char *shown, uint64_t *usec, char *why, size_t why_len)
{
    double v;
    if (parse_with_units(text, shown, duration_units, true, "a duration", &v, why, why_len) < 0)
        return -1;
    if (v > 3650.0 * 86400e6) {
        snprintf(why, why_len, "'%s' is longer than ten years", shown);
        return -1;
    }
    *usec = (uint64_t)llround(v);
    return 0;
}

int parse_size(const char *text, const char *shown, uint64_t *bytes, char *why, size_t why_len)
{
    double v;
    if (parse_with_units(text, shown, size_units, false, "a size", &v, why, why_len) < 0)
        return -1;
    if (v >= 1.8e19) {
        snprintf(why, why_len, "'%s' is too large", shown);
        return -1;
    }
    /* Not llround: a long long ends at 2^63, below this limit. */
    *bytes = (uint64_t)round(v);
    return 0;
}

int parse_cores(const char *text, const char *shown, double *cores, char *why, size_t why_len)
{
    double v;
    if (parse_with_units(text, shown, core_units, false, "CPU", &v, why, why_len) < 0)
        return -1;
    if (v > 100000) {
        snprintf(why, why_len, "'%s' is more cores than any node has", shown);
        return -1;
    }
    *cores = v;
    return 0;
}

int parse_count(const char *text, const char *shown, uint64_t *value, char *why, size_t why_len)
{
    const char *p = text;
    while (isspace((unsigned char)*p))
        p++;
    if (!isdigit((unsigned char)*p)) {
        snprintf(why, why_len, "'%s' is not a whole number", shown);
        return -1;
    }
    char *end;
    errno = 0;
    unsigned long long v = strtoull(p, &end, 10);
    while (isspace((unsigned char)*end))
        end++;
    if (errno != 0 || *end != '\0') {
        snprintf(why, why_len, "'%s' is not a whole number", shown);
        return -1;
    }
    *value = v;
    return 0;
}

int parse_bool(const char *text, const char *shown, bool *value, char *why, size_t why_len)
{
    static const char *yes[] = {"yes", "true", "on", "1", NULL};
    static const char *no[] = {"no", "false", "off", "0", NULL};
    for (int i = 0; yes[i]; i++) {
        if (strcasecmp(text, yes[i]) == 0) {
            *value = true;
            return 0;
        }
        if (strcasecmp(text, no[i]) == 0) {
            *value = false;
            return 0;
        }
    }
    snprintf(why, why_len, "'%s' is not yes or no", shown);
    return -1;
}

void format_duration(uint64_t usec, char *buf, size_t len)
{
    uint64_t s = (usec + USEC_PER_SEC / 2) / USEC_PER_SEC;
    if (s == 0 && usec > 0)
        snprintf(buf, len, "%llums", (unsigned long long)(usec / 1000));
    else if (s < 60)
        snprintf(buf, len, "%llus", (unsigned long long)s);
    else if (s < 3600)
        snprintf(buf, len, s % 60 ? "%llum%llus" : "%llum", (unsigned long long)(s / 60),
                 (unsigned long long)(s % 60));
    else
        snprintf(buf, len, s % 3600 / 60 ? "%lluh%llum" : "%lluh",
                 (unsigned long long)(s / 3600), (unsigned long long)(s % 3600 / 60));
}

void format_size(uint64_t bytes, char *buf, size_t len)
{
    static const char *suffix[] = {"B", "K", "M", "G", "T"};
    double v = (double)bytes;
    int i = 0;
    while (v >= 1024 && i < 4) {
        v /= 1024;
        i++;
    }
    if (i == 0)
        snprintf(buf, len, "%lluB", (unsigned long long)bytes);
    else
        snprintf(buf, len, "%.1f%s", v, suffix[i]);
}

struct whole_unit {
    const char *name;
    uint64_t factor;
};

/* The first unit of the list (largest first) that divides value, or NULL. */
static const struct whole_unit *largest_whole(const struct whole_unit *units, uint64_t value)
{
    for (const struct whole_unit *u = units; u->name; u++)
        if (value % u->factor == 0)
            return u;
    return NULL;
}

void format_duration_exact(uint64_t usec, char *buf, size_t len)
{
    static const struct whole_unit units[] = {
        {"d", 86400 * USEC_PER_SEC}, {"h", 3600 * USEC_PER_SEC}, {"m", 60 * USEC_PER_SEC},
        {"s", USEC_PER_SEC}, {"ms", 1000}, {NULL, 0},
    };
    const struct whole_unit *u = usec ? largest_whole(units, usec) : &units[3];
    if (u)
        snprintf(buf, len, "%llu%s", (unsigned long long)(usec / u->factor), u->name);
    else /* microseconds: milliseconds is the smallest unit the parser knows */
        snprintf(buf, len, "%llu.%03llums", (unsigned long long)(usec / 1000),
                 (unsigned long long)(usec % 1000));
}

void format_size_exact(uint64_t bytes, char *buf, size_t len)
{
    static const struct whole_unit units[] = {
        {"T", 1ULL << 40}, {"G", 1ULL << 30}, {"M", 1ULL << 20}, {"K", 1ULL << 10},
        {"", 1}, {NULL, 0},
    };
    const struct whole_unit *u = bytes ? largest_whole(units, bytes) : &units[4];
    snprintf(buf, len, "%llu%s", (unsigned long long)(bytes / u->factor), u->name);
}

/* The fewest decimals that strtod reads back as the same double (the
 * parser takes neither exponents nor hex, so not %g or %a). */
void format_cores_exact(double cores, char *buf, size_t len)
{
    char number[UNITS_EXACT_LEN];
    for (int decimals = 0; decimals <= 340; decimals++) {
        snprintf(number, sizeof(number), "%.*f", decimals, cores);
        if (strtod(number, NULL) == cores)
            break;
    }
    snprintf(buf, len, "%s %s", number, cores == 1 ? "core" : "cores");
}
