#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "chart.h"
#include "units.h"
#include "user_view.h"
#include "utf8.h"
#include "util.h"

#define CHART_ROWS 4

/* Text from the daemon that a user chose (comm, exe, names): escaped so
 * that it can only show, and cut to width bytes of the escaped form. */
static void put_escaped(FILE *out, const char *s, size_t width)
{
    size_t len = s ? strlen(s) : 0;
    char *shown = xmalloc(4 * len + 1);
    utf8_escape(s ? s : "", len, shown, 4 * len + 1);
    if (width && strlen(shown) > width)
        shown[width] = '\0';
    fputs(shown, out);
    free(shown);
}

static void print_chart(FILE *out, const char *title, const double *v, size_t n, double top,
                        const char *top_label, bool utf8)
{
    struct chart c = {
        .values = v, .count = n, .max = top, .title = title, .top_label = top_label,
        .bottom_label = "0", .axis_left = "-60m", .axis_middle = "-30m", .axis_right = "now",
        .rows = CHART_ROWS, .utf8 = utf8,
    };
    char *text = chart_render(&c);
    fputs(text, out);
    free(text);
}

static void print_history(FILE *out, const json_t *h, bool utf8)
{
    const json_t *cpu = json_object_get(h, "cpu_cores");
    const json_t *mem = json_object_get(h, "memory_bytes");
    size_t n = json_array_size(cpu);
    if (!json_is_object(h) || n == 0 || n != json_array_size(mem)) {
        fputs("\nlast hour: no use worth a chart (a chart starts at 0.05 cores or 256 MiB)\n",
              out);
        return;
    }
    double *c = xcalloc(n, sizeof(*c)), *m = xcalloc(n, sizeof(*m));
    for (size_t i = 0; i < n; i++) {
        c[i] = json_number_value(json_array_get(cpu, i));
        m[i] = json_number_value(json_array_get(mem, i)) / (1 << 20); /* MiB */
    }
    double ctop = chart_scale(c, n, 0.1), mtop = chart_scale(m, n, 1);
    char title[128], label[48];
    snprintf(label, sizeof(label), "%g", ctop);
    snprintf(title, sizeof(title), "\nCPU, last hour (cores, a column a minute; top %g)", ctop);
    print_chart(out, title, c, n, ctop, label, utf8);
    char size[32];
    format_size((uint64_t)(mtop * (1 << 20)), size, sizeof(size));
    snprintf(label, sizeof(label), "%s", size);
    snprintf(title, sizeof(title), "\nmemory, last hour (the most in each minute; top %s)", size);
    print_chart(out, title, m, n, mtop, label, utf8);
    free(c);
    free(m);
}

static void print_processes(FILE *out, const json_t *procs)
{
    if (json_array_size(procs) == 0)
        return;
    fprintf(out, "\nbusiest processes\n%8s  %-9s  %-16s  %6s  %7s  %s\n", "PID", "CLASS", "RULE",
            "CORES", "MEMORY", "COMM / EXE");
    size_t i;
    const json_t *p;
    json_array_foreach(procs, i, p) {
        char mem[32];
        format_size((uint64_t)json_integer_value(json_object_get(p, "memory_bytes")), mem,
                    sizeof(mem));
        fprintf(out, "%8lld  %-9s  ", (long long)json_integer_value(json_object_get(p, "pid")),
                json_string_value(json_object_get(p, "class")) ?: "?");
        const char *rule = json_string_value(json_object_get(p, "rule"));
        char cell[17];
        snprintf(cell, sizeof(cell), "%s", "-");
        if (rule) {
            /* Rule names come from the site's files, but escape anyway. */
            size_t len = strlen(rule);
            char *shown = xmalloc(4 * len + 1);
            utf8_escape(rule, len, shown, 4 * len + 1);
            snprintf(cell, sizeof(cell), "%s", shown);
            free(shown);
        }
        fprintf(out, "%-16s  %6.2f  %7s  ", cell,
                json_number_value(json_object_get(p, "cpu_cores")), mem);
        put_escaped(out, json_string_value(json_object_get(p, "comm")), 0);
        const char *exe = json_string_value(json_object_get(p, "exe"));
        if (exe) {
            fputs("  ", out);
            put_escaped(out, exe, 200);
        }
        fputc('\n', out);
    }
}

/* Keys every event has, not worth repeating on each line. */
static bool plain_key(const char *key)
{
    static const char *const skip[] = {"time", "event", "uid", "user", "mode", "host", NULL};
    for (size_t i = 0; skip[i]; i++)
        if (strcmp(key, skip[i]) == 0)
            return false;
    return true;
}

static void print_events(FILE *out, const json_t *events)
{
    if (json_array_size(events) == 0) {
        fputs("\nlatest events: none in the end of the event log\n", out);
        return;
    }
    fputs("\nlatest events\n", out);
    size_t i;
    const json_t *e;
    json_array_foreach(events, i, e) {
        fputs("  ", out);
        put_escaped(out, json_string_value(json_object_get(e, "time")), 40);
        fputs("  ", out);
        put_escaped(out, json_string_value(json_object_get(e, "event")), 40);
        const char *key;
        const json_t *v;
        json_object_foreach((json_t *)e, key, v) {
            if (!plain_key(key) || json_is_null(v))
                continue;
            fputc(' ', out);
            put_escaped(out, key, 40);
            fputc('=', out);
            if (json_is_string(v))
                put_escaped(out, json_string_value(v), 120);
            else if (json_is_integer(v))
                fprintf(out, "%lld", (long long)json_integer_value(v));
            else if (json_is_real(v))
                fprintf(out, "%.2f", json_real_value(v));
            else
                fputs(json_is_true(v) ? "true" : "false", out);
        }
        fputc('\n', out);
    }
}

void user_view_print(FILE *out, const json_t *reply, bool utf8)
{
    print_history(out, json_object_get(reply, "history"), utf8);
    print_processes(out, json_object_get(reply, "processes"));
    print_events(out, json_object_get(reply, "events"));
}
