/* The charts, drawn with the real cairo: PNGs of the size they say, with
 * something drawn, whatever the title holds; and base64 as RFC 4648's
 * test vectors and mail's line length want it. */
#include "config.h"

#include <stdlib.h>

#include "base64.h"
#include "cairo_lib.h"
#include "day_chart.h"
#include "testutil.h"
#include "units.h"
#include "usage_chart.h"

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void assert_png(const struct strbuf *png, uint32_t width, uint32_t height)
{
    const unsigned char *p = (const unsigned char *)png->s;
    assert_true(png->len > 33);
    assert_memory_equal(p, "\x89PNG\r\n\x1a\n", 8);
    assert_memory_equal(p + 12, "IHDR", 4);
    assert_int_equal(be32(p + 16), width);
    assert_int_equal(be32(p + 20), height);
}

static struct cairo_lib lib;

static int load(void **state)
{
    (void)state;
    char why[512];
    if (cairo_lib_load(&lib, why, sizeof(why)) < 0) {
        fprintf(stderr, "%s\n", why);
        return -1;
    }
    return 0;
}

static int done(void **state)
{
    (void)state;
    cairo_lib_done(&lib);
    return 0;
}

static void usage_chart_is_a_png_with_its_points(void **state)
{
    (void)state;
    struct report_point points[3] = {
        {.time = 1000 * USEC_PER_SEC, .cpu_cores = 2.5, .memory_bytes = 1ULL << 30},
        {.time = 2000 * USEC_PER_SEC, .cpu_cores = 4, .memory_bytes = 3ULL << 30},
        {.time = 3000 * USEC_PER_SEC, .cpu_cores = 1, .memory_bytes = 1ULL << 29},
    };
    struct report_span span = {.from = 1500 * USEC_PER_SEC, .until = 2500 * USEC_PER_SEC,
                               .level = 2};
    /* A title that is not UTF-8 and holds controls: drawn escaped, not a
     * failed picture. */
    struct usage_chart c = {.title = "m\xff\x1b[2Jallory", .from = 0, .until = 3600 * USEC_PER_SEC,
                            .points = points, .point_count = 3, .spans = &span,
                            .span_count = 1, .cpu_threshold = 2};
    struct strbuf full = {0}, empty = {0};
    char why[256];
    assert_int_equal(usage_chart_png(&lib, &c, &full, why, sizeof(why)), 0);
    assert_png(&full, USAGE_CHART_WIDTH, USAGE_CHART_HEIGHT);
    c.point_count = c.span_count = 0;
    c.lines = true;
    assert_int_equal(usage_chart_png(&lib, &c, &empty, why, sizeof(why)), 0);
    assert_png(&empty, USAGE_CHART_WIDTH, USAGE_CHART_HEIGHT);
    /* The points and the span are drawn: more to compress. */
    assert_true(full.len > empty.len + 200);
    strbuf_free(&full);
    strbuf_free(&empty);
}

static void day_chart_is_a_png(void **state)
{
    (void)state;
    struct report_day days[2] = {{.date = "2026-11-10", .actions = {1, 2, 3, 4, 5}},
                                 {.date = "2026-11-11"}};
    struct strbuf png = {0};
    char why[256];
    assert_int_equal(day_chart_png(&lib, days, 2, &png, why, sizeof(why)), 0);
    assert_png(&png, DAY_CHART_WIDTH, DAY_CHART_HEIGHT);
    strbuf_free(&png);
    assert_int_equal(day_chart_png(&lib, NULL, 0, &png, why, sizeof(why)), 0);
    strbuf_free(&png);
}

static void base64_vectors_and_lines(void **state)
{
    (void)state;
    static const char *const vectors[][2] = {
        {"", ""}, {"f", "Zg=="}, {"fo", "Zm8="}, {"foo", "Zm9v"}, {"foob", "Zm9vYg=="},
        {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"},
    };
    for (size_t i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
        struct strbuf b = {0};
        base64_encode(&b, (const unsigned char *)vectors[i][0], strlen(vectors[i][0]), 0);
        assert_string_equal(b.s ? b.s : "", vectors[i][1]);
        strbuf_free(&b);
    }
    unsigned char bytes[120] = {0};
    struct strbuf b = {0};
    base64_encode(&b, bytes, sizeof(bytes), 76);
    /* 160 characters: 76, 76 and 8, each line ended. */
    assert_int_equal(b.len, 160 + 3);
    assert_int_equal(b.s[76], '\n');
    assert_int_equal(b.s[153], '\n');
    assert_int_equal(b.s[b.len - 1], '\n');
    assert_null(strchr(b.s, '\r'));
    strbuf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(usage_chart_is_a_png_with_its_points),
        cmocka_unit_test(day_chart_is_a_png),
        cmocka_unit_test(base64_vectors_and_lines),
    };
    return cmocka_run_group_tests(tests, load, done);
}
