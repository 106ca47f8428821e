/* The values an admin writes in loginguard.conf: durations, sizes, CPU
 * amounts, counts and booleans, and their human forms in messages. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "units.h"
#include "util.h"

/* A result is a message that fits, or a value; never both untouched. */
static void check_why(int rc, const char *why, size_t why_len)
{
    FUZZ_CHECK(memchr(why, '\0', why_len) != NULL);
    FUZZ_CHECK(rc == 0 || rc == -1);
    if (rc < 0)
        FUZZ_CHECK(why[0] != '\0');
}

/* bytes is the number in text times one of the binary multiples, give
 * or take the rounding to whole bytes. */
static bool size_is_number_times_unit(const char *text, uint64_t bytes)
{
    double number = strtod(text, NULL), unit = 1;
    for (int k = 0; k <= 4; k++, unit *= 1024) {
        double want = number * unit;
        if (fabs((double)bytes - want) <= 0.5 + want * 1e-12)
            return true;
    }
    return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = xstrndup((const char *)data, size);
    char *shown = xasprintf("key = %s", text);
    char why[512];
    uint64_t u;
    double d;
    bool b;

    why[0] = '\0';
    check_why(parse_duration(text, shown, &u, why, sizeof(why)), why, sizeof(why));
    why[0] = '\0';
    int rc = parse_size(text, shown, &u, why, sizeof(why));
    check_why(rc, why, sizeof(why));
    if (rc == 0)
        FUZZ_CHECK(size_is_number_times_unit(text, u));
    why[0] = '\0';
    rc = parse_cores(text, shown, &d, why, sizeof(why));
    check_why(rc, why, sizeof(why));
    if (rc == 0)
        FUZZ_CHECK(isfinite(d) && d >= 0 && d <= 100000);
    why[0] = '\0';
    check_why(parse_count(text, shown, &u, why, sizeof(why)), why, sizeof(why));
    why[0] = '\0';
    check_why(parse_bool(text, shown, &b, why, sizeof(why)), why, sizeof(why));
    /* A short buffer truncates the message, still terminated. */
    char tiny[8];
    parse_size(text, shown, &u, tiny, sizeof(tiny));

    /* The human forms of a value taken from the input's bytes. */
    uint64_t v = 0;
    memcpy(&v, data, size < sizeof(v) ? size : sizeof(v));
    char out[64];
    format_duration(v, out, sizeof(out));
    FUZZ_CHECK(strlen(out) > 0 && strlen(out) < sizeof(out));
    format_size(v, out, sizeof(out));
    FUZZ_CHECK(strlen(out) > 0 && strlen(out) < sizeof(out));
    free(shown);
    free(text);
    return 0;
}
