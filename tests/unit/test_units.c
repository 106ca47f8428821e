#include "config.h"

#include "testutil.h"
#include "units.h"

static char why[256];

static void test_durations(void **state)
{
    (void)state;
    uint64_t v;
    assert_int_equal(parse_duration("2s", "x", &v, why, sizeof(why)), 0);
    assert_int_equal(v, 2000000);
    assert_int_equal(parse_duration("500ms", "x", &v, why, sizeof(why)), 0);
    assert_int_equal(v, 500000);
    assert_int_equal(parse_duration("5m", "x", &v, why, sizeof(why)), 0);
    assert_int_equal(v, 300000000);
    assert_int_equal(parse_duration(" 1.5 h ", "x", &v, why, sizeof(why)), 0);
    assert_int_equal(v, 5400000000ULL);
    assert_int_equal(parse_duration("1d", "x", &v, why, sizeof(why)), 0);
    assert_int_equal(v, 86400000000ULL);
}

static void test_duration_errors(void **state)
{
    (void)state;
    uint64_t v;
    assert_int_equal(parse_duration("5", "window = 5", &v, why, sizeof(why)), -1);
    assert_string_equal(why, "'window = 5' needs a unit for a duration: one of 'ms', 's', "
                             "'sec', 'm', 'min', 'h', 'd'");
    assert_int_equal(parse_duration("5 mins", "window = 5 mins", &v, why, sizeof(why)), -1);
    assert_string_equal(why, "unknown unit 'mins' in 'window = 5 mins'; use 'min'");
    assert_int_equal(parse_duration("-5s", "w = -5s", &v, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "non-negative"));
    assert_int_equal(parse_duration("", "w =", &v, why, sizeof(why)), -1);
    assert_string_equal(why, "empty value");
    assert_int_equal(parse_duration("s", "w = s", &v, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "does not start with a number"));
    assert_int_equal(parse_duration("0x10s", "w = 0x10s", &v, why, sizeof(why)), -1);
    assert_int_equal(parse_duration("1e3s", "w = 1e3s", &v, why, sizeof(why)), -1);
    assert_int_equal(parse_duration("5s 3", "w = 5s 3", &v, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "unexpected text"));
    assert_int_equal(parse_duration("99999d", "w = 99999d", &v, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "ten years"));
}

static void test_sizes(void **state)
{
    (void)state;
    uint64_t v;
    assert_int_equal(parse_size("4G", "x", &v, why, sizeof(why)), 0);
    assert_int_equal(v, 4ULL << 30);
    assert_int_equal(parse_size("512M", "x", &v, why, sizeof(why)), 0);
    assert_int_equal(v, 512ULL << 20);
    assert_int_equal(parse_size("1.5 GiB", "x", &v, why, sizeof(why)), 0);
    assert_int_equal(v, 3ULL << 29);
    assert_int_equal(parse_size("4g", "x", &v, why, sizeof(why)), 0);
    assert_int_equal(v, 4ULL << 30);
    assert_int_equal(parse_size("0", "x", &v, why, sizeof(why)), 0);
    assert_int_equal(v, 0);
    assert_int_equal(parse_size("4Gb", "memory = 4Gb", &v, why, sizeof(why)), -1);
    assert_string_equal(why, "unknown unit 'Gb' in 'memory = 4Gb'; use 'G'");
    /* Past 2^63 (where a long long ends) and below the limit. */
    assert_int_equal(parse_size("10000000000000000000", "x", &v, why, sizeof(why)), 0);
    assert_true(v == 10000000000000000000ULL);
    assert_int_equal(parse_size("9000000T", "x", &v, why, sizeof(why)), 0);
    assert_true(v == 9000000ULL << 40);
    assert_int_equal(parse_size("99999999T", "m = 99999999T", &v, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "too large"));
}

static void test_cores(void **state)
{
    (void)state;
    double v;
    assert_int_equal(parse_cores("1.5 cores", "x", &v, why, sizeof(why)), 0);
    assert_true(v == 1.5);
    assert_int_equal(parse_cores("1 core", "x", &v, why, sizeof(why)), 0);
    assert_true(v == 1.0);
    assert_int_equal(parse_cores("150%", "x", &v, why, sizeof(why)), 0);
    assert_true(v > 1.4999 && v < 1.5001);
    assert_int_equal(parse_cores("2", "x", &v, why, sizeof(why)), 0);
    assert_true(v == 2.0);
    assert_int_equal(parse_cores("2 cors", "cpu = 2 cors", &v, why, sizeof(why)), -1);
    assert_string_equal(why, "unknown unit 'cors' in 'cpu = 2 cors'; use 'cores'");
    assert_int_equal(parse_cores("2 cpus", "cpu = 2 cpus", &v, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "use one of 'cores', 'core', '%'"));
    assert_int_equal(parse_cores("200000", "cpu = 200000", &v, why, sizeof(why)), -1);
}

static void test_bool_and_count(void **state)
{
    (void)state;
    bool b;
    uint64_t n;
    assert_int_equal(parse_bool("yes", "x", &b, why, sizeof(why)), 0);
    assert_true(b);
    assert_int_equal(parse_bool("Off", "x", &b, why, sizeof(why)), 0);
    assert_false(b);
    assert_int_equal(parse_bool("maybe", "stop = maybe", &b, why, sizeof(why)), -1);
    assert_string_equal(why, "'stop = maybe' is not yes or no");
    assert_int_equal(parse_count("1024", "x", &n, why, sizeof(why)), 0);
    assert_int_equal(n, 1024);
    assert_int_equal(parse_count("10k", "tasks = 10k", &n, why, sizeof(why)), -1);
    assert_int_equal(parse_count("-1", "tasks = -1", &n, why, sizeof(why)), -1);
}

static void test_format(void **state)
{
    (void)state;
    char buf[32];
    format_duration(90 * USEC_PER_SEC, buf, sizeof(buf));
    assert_string_equal(buf, "1m30s");
    format_duration(300 * USEC_PER_SEC, buf, sizeof(buf));
    assert_string_equal(buf, "5m");
    format_duration(3600 * USEC_PER_SEC, buf, sizeof(buf));
    assert_string_equal(buf, "1h");
    format_duration(5400 * USEC_PER_SEC, buf, sizeof(buf));
    assert_string_equal(buf, "1h30m");
    format_size(4ULL << 30, buf, sizeof(buf));
    assert_string_equal(buf, "4.0G");
    format_size(100, buf, sizeof(buf));
    assert_string_equal(buf, "100B");
}

static void test_exact_forms(void **state)
{
    (void)state;
    char buf[UNITS_EXACT_LEN];
    format_duration_exact(90 * USEC_PER_SEC, buf, sizeof(buf));
    assert_string_equal(buf, "90s");
    format_duration_exact(2 * 86400 * USEC_PER_SEC, buf, sizeof(buf));
    assert_string_equal(buf, "2d");
    format_duration_exact(1500000, buf, sizeof(buf));
    assert_string_equal(buf, "1500ms");
    format_duration_exact(250, buf, sizeof(buf));
    assert_string_equal(buf, "0.250ms");
    format_duration_exact(0, buf, sizeof(buf));
    assert_string_equal(buf, "0s");
    format_size_exact(4ULL << 30, buf, sizeof(buf));
    assert_string_equal(buf, "4G");
    format_size_exact(1536ULL << 20, buf, sizeof(buf));
    assert_string_equal(buf, "1536M");
    format_size_exact(1000, buf, sizeof(buf));
    assert_string_equal(buf, "1000");
    format_size_exact(0, buf, sizeof(buf));
    assert_string_equal(buf, "0");
    format_cores_exact(1.5, buf, sizeof(buf));
    assert_string_equal(buf, "1.5 cores");
    format_cores_exact(1, buf, sizeof(buf));
    assert_string_equal(buf, "1 core");
    format_cores_exact(0, buf, sizeof(buf));
    assert_string_equal(buf, "0 cores");
}

/* A small generator, the same numbers on every run. */
static uint64_t next_random(uint64_t *seed)
{
    *seed = *seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return *seed >> 11;
}

/* Whatever the parser can produce, the exact form reads back to it. */
static void test_exact_forms_read_back(void **state)
{
    (void)state;
    char buf[UNITS_EXACT_LEN];
    uint64_t seed = 1, u, back;
    double cores, cores_back;
    for (int i = 0; i < 100000; i++) {
        u = next_random(&seed) % (3650 * 86400 * USEC_PER_SEC);
        format_duration_exact(u, buf, sizeof(buf));
        assert_int_equal(parse_duration(buf, buf, &back, why, sizeof(why)), 0);
        assert_int_equal(back, u);
        /* Sizes come from a double: any integer below 2^53, times a unit. */
        u = (next_random(&seed) >> (next_random(&seed) % 53)) << (next_random(&seed) % 11);
        format_size_exact(u, buf, sizeof(buf));
        assert_int_equal(parse_size(buf, buf, &back, why, sizeof(why)), 0);
        assert_int_equal(back, u);
        /* Cores as written: decimals, percentages of them. */
        snprintf(buf, sizeof(buf), "%.*f%s", (int)(next_random(&seed) % 8),
                 (double)(next_random(&seed) % 100000000) / 1000.0, i % 2 ? "%" : "");
        assert_int_equal(parse_cores(buf, buf, &cores, why, sizeof(why)), 0);
        format_cores_exact(cores, buf, sizeof(buf));
        assert_int_equal(parse_cores(buf, buf, &cores_back, why, sizeof(why)), 0);
        assert_true(cores_back == cores);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_durations), cmocka_unit_test(test_duration_errors),
        cmocka_unit_test(test_sizes),     cmocka_unit_test(test_cores),
        cmocka_unit_test(test_bool_and_count), cmocka_unit_test(test_format),
        cmocka_unit_test(test_exact_forms), cmocka_unit_test(test_exact_forms_read_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
