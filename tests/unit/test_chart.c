/* The hour chart of loginguardctl user and me, as a terminal shows it. */
#include "config.h"

#include "chart.h"
#include "testutil.h"

static char *render(const double *v, size_t n, double max, int rows, bool utf8)
{
    struct chart c = {.values = v, .count = n, .max = max, .title = "CPU", .top_label = "2",
                      .bottom_label = "0", .axis_left = "-60m", .axis_middle = "-30m",
                      .axis_right = "now", .rows = rows, .utf8 = utf8};
    return chart_render(&c);
}

static void ascii_bars_fill_from_the_bottom_with_labels(void **state)
{
    (void)state;
    /* Two rows of 8 eighths: an eighth is 0.125 cores. */
    double v[12] = {0, 0, 0.25, 0.5, 1, 1.5, 2, 3, 0, 0.01, 0, 0};
    char *text = render(v, 12, 2, 2, false);
    assert_string_equal(text, "CPU\n"
                              "2 |     :##\n"
                              "0 |  .:#### .\n"
                              "  +------------\n"
                              "   -60m     now\n");
    free(text);
}

static void utf8_uses_eighth_blocks(void **state)
{
    (void)state;
    double v[4] = {0.25, 0.5, 1.75, 2};
    char *text = render(v, 4, 2, 1, true);
    /* One row: an eighth is 0.25. */
    assert_string_equal(text, "CPU\n"
                              "2 \xe2\x94\x82\xe2\x96\x81\xe2\x96\x82\xe2\x96\x87\xe2\x96\x88\n"
                              "  \xe2\x94\x94\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\n"
                              "   -60m\n"); /* "now" does not fit beside it */
    free(text);
}

static void an_hour_is_sixty_columns_with_the_time_axis_labelled(void **state)
{
    (void)state;
    double v[60] = {0};
    for (int i = 0; i < 60; i++)
        v[i] = i / 30.0;
    char *text = render(v, 60, 2, 4, false);
    char *lines[8] = {0};
    int n = 0;
    for (char *p = strtok(text, "\n"); p && n < 8; p = strtok(NULL, "\n"))
        lines[n++] = p;
    assert_int_equal(n, 7); /* title, 4 rows, rule, axis */
    assert_int_equal(strlen(lines[5]), 2 + 1 + 60);
    assert_string_equal(lines[6] + strlen(lines[6]) - 3, "now");
    assert_true(strncmp(lines[6], "   -60m", 7) == 0);
    assert_non_null(strstr(lines[6], "-30m"));
    /* The last column is full in every row; the first empty in all. */
    for (int r = 1; r <= 4; r++) {
        assert_int_equal(lines[r][strlen(lines[r]) - 1], '#');
        assert_int_equal(lines[r][3], r == 4 ? ' ' : ' ');
    }
    free(text);
}

static void a_small_use_still_shows_and_a_large_one_is_cut(void **state)
{
    (void)state;
    double v[3] = {0.0001, 100, -1};
    char *text = render(v, 3, 2, 2, false);
    assert_string_equal(text, "CPU\n"
                              "2 | #\n"
                              "0 |.#\n"
                              "  +---\n"
                              "\n");
    free(text);
}

static void scales_are_round(void **state)
{
    (void)state;
    double a[3] = {0.3, 1.7, 0.2}, b[1] = {3000}, c[1] = {0}, d[1] = {5};
    assert_true(chart_scale(a, 3, 0.1) == 2);
    assert_true(chart_scale(b, 1, 1) == 5000);
    assert_true(chart_scale(c, 1, 0.1) == 0.1);
    assert_true(chart_scale(d, 1, 1) == 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ascii_bars_fill_from_the_bottom_with_labels),
        cmocka_unit_test(utf8_uses_eighth_blocks),
        cmocka_unit_test(an_hour_is_sixty_columns_with_the_time_axis_labelled),
        cmocka_unit_test(a_small_use_still_shows_and_a_large_one_is_cut),
        cmocka_unit_test(scales_are_round),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
