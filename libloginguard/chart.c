#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "chart.h"
#include "strbuf.h"
#include "util.h"

/* Eighths of a cell, 0..8: U+2581..U+2588 in UTF-8, or ASCII. */
static const char *const blocks[9] = {" ", "\xe2\x96\x81", "\xe2\x96\x82", "\xe2\x96\x83",
                                      "\xe2\x96\x84", "\xe2\x96\x85", "\xe2\x96\x86",
                                      "\xe2\x96\x87", "\xe2\x96\x88"};
static const char *const ascii[9] = {" ", ".", ".", ":", ":", "|", "|", "#", "#"};

double chart_scale(const double *values, size_t count, double floor_value)
{
    double top = floor_value;
    for (size_t i = 0; i < count; i++)
        if (values[i] > top)
            top = values[i];
    double power = pow(10, floor(log10(top)));
    static const double steps[] = {1, 2, 5};
    for (size_t i = 0; i < 3; i++)
        if (steps[i] * power >= top * (1 - 1e-9))
            return steps[i] * power;
    return 10 * power;
}

/* How many eighths of the whole height a value fills (0 .. 8 * rows);
 * anything above zero shows at least one eighth, so a little use is
 * never drawn as none. */
static int eighths(double v, double max, int rows)
{
    if (!(v > 0))
        return 0;
    double e = v / max * 8 * rows;
    int n = e >= 8.0 * rows ? 8 * rows : (int)lround(e);
    return n < 1 ? 1 : n;
}

static void pad(struct strbuf *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        strbuf_addc(b, ' ');
}

static void label(struct strbuf *b, const char *text, size_t width)
{
    size_t len = strlen(text);
    pad(b, width > len ? width - len : 0);
    strbuf_adds(b, text);
}

/* The time axis: left under the first column, right ending under the
 * last, middle centred, where they fit without touching. */
static void axis_labels(struct strbuf *b, const struct chart *c, size_t indent)
{
    size_t width = c->count, used = 0;
    const char *left = c->axis_left ? c->axis_left : "";
    const char *middle = c->axis_middle ? c->axis_middle : "";
    const char *right = c->axis_right ? c->axis_right : "";
    char *line = xmalloc(width + 1);
    memset(line, ' ', width);
    line[width] = '\0';
    size_t l = strlen(left), m = strlen(middle), r = strlen(right);
    if (l <= width) {
        memcpy(line, left, l);
        used = l;
    }
    if (r + used < width)
        memcpy(line + width - r, right, r);
    size_t mid = width / 2 > m / 2 ? width / 2 - m / 2 : 0;
    if (m && mid > used && mid + m + 1 < width - r)
        memcpy(line + mid, middle, m);
    pad(b, indent);
    strbuf_adds(b, line);
    free(line);
    /* No trailing blanks. */
    while (b->len > 0 && b->s[b->len - 1] == ' ')
        b->s[--b->len] = '\0';
    strbuf_addc(b, '\n');
}

char *chart_render(const struct chart *c)
{
    int rows = c->rows < 1 ? 1 : c->rows > CHART_ROWS_MAX ? CHART_ROWS_MAX : c->rows;
    const char *const *cells = c->utf8 ? blocks : ascii;
    const char *bar = c->utf8 ? "\xe2\x94\x82" : "|";
    const char *corner = c->utf8 ? "\xe2\x94\x94" : "+";
    const char *rule = c->utf8 ? "\xe2\x94\x80" : "-";
    const char *top = c->top_label ? c->top_label : "";
    const char *bottom = c->bottom_label ? c->bottom_label : "";
    size_t width = strlen(top) > strlen(bottom) ? strlen(top) : strlen(bottom);
    struct strbuf b = {0};
    if (c->title) {
        strbuf_adds(&b, c->title);
        strbuf_addc(&b, '\n');
    }
    for (int row = rows - 1; row >= 0; row--) {
        label(&b, row == rows - 1 ? top : row == 0 ? bottom : "", width);
        strbuf_addc(&b, ' ');
        strbuf_adds(&b, bar);
        for (size_t i = 0; i < c->count; i++) {
            int fill = eighths(c->values[i], c->max > 0 ? c->max : 1, rows) - 8 * row;
            strbuf_adds(&b, cells[fill <= 0 ? 0 : fill >= 8 ? 8 : fill]);
        }
        while (b.len > 0 && b.s[b.len - 1] == ' ')
            b.s[--b.len] = '\0';
        strbuf_addc(&b, '\n');
    }
    pad(&b, width + 1);
    strbuf_adds(&b, corner);
    for (size_t i = 0; i < c->count; i++)
        strbuf_adds(&b, rule);
    strbuf_addc(&b, '\n');
    axis_labels(&b, c, width + 2);
    return strbuf_take(&b);
}
