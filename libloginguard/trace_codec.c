#include "config.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "trace_codec.h"
#include "trace_codec_parts.h"
#include "utf8.h"
#include "util.h"

/* ------------------------------------------------------------------ */
/* Bytes as JSON, both ways */

static bool is_utf8(const char *s, size_t len)
{
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < len;) {
        size_t n = u[i] ? utf8_sequence(u + i, len - i) : 1;
        if (n == 0)
            return false;
        i += n;
    }
    return true;
}

json_t *trace_json_bytes(const char *s, size_t len)
{
    if (!s)
        return json_null();
    if (is_utf8(s, len)) {
        json_t *j = json_stringn(s, len);
        if (j)
            return j;
    }
    static const char digits[] = "0123456789abcdef";
    char *hex = xmalloc(2 * len + 1);
    for (size_t i = 0; i < len; i++) {
        hex[2 * i] = digits[(unsigned char)s[i] >> 4];
        hex[2 * i + 1] = digits[(unsigned char)s[i] & 15];
    }
    json_t *j = json_pack("{s:s#}", "hex", hex, (int)(2 * len));
    free(hex);
    return j;
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

int trace_bytes_from_json(const json_t *j, size_t max, char **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    if (!j || json_is_null(j))
        return 0;
    if (json_is_string(j)) {
        size_t n = json_string_length(j);
        if (n > max)
            return -1;
        *out = xmalloc(n + 1);
        memcpy(*out, json_string_value(j), n);
        (*out)[n] = '\0';
        *len = n;
        return 0;
    }
    const json_t *h = json_object_get(j, "hex");
    if (!json_is_string(h) || json_object_size(j) != 1)
        return -1;
    size_t n = json_string_length(h);
    const char *s = json_string_value(h);
    if (n % 2 || n / 2 > max)
        return -1;
    char *b = xmalloc(n / 2 + 1);
    for (size_t i = 0; i < n / 2; i++) {
        int hi = hex_value(s[2 * i]), lo = hex_value(s[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            free(b);
            return -1;
        }
        b[i] = (char)(hi << 4 | lo);
    }
    b[n / 2] = '\0';
    *out = b;
    *len = n / 2;
    return 0;
}

uint64_t trace_line_time(const char *line, size_t len)
{
    size_t n = sizeof(SAMPLE_PREFIX) - 1;
    if (len <= n || memcmp(line, SAMPLE_PREFIX, n) != 0)
        return 0;
    uint64_t t = 0;
    for (size_t i = n; i < len && line[i] >= '0' && line[i] <= '9'; i++) {
        if (t > (UINT64_MAX - 9) / 10)
            return 0;
        t = t * 10 + (uint64_t)(line[i] - '0');
    }
    return t;
}
