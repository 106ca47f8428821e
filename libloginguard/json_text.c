#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json_text.h"
#include "units.h"
#include "utf8.h"
#include "util.h"

json_t *json_from_bytes(const char *s, size_t len)
{
    char *out = xmalloc(len * 4 + 1);
    size_t o = 0;
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < len;) {
        size_t n = u[i] ? utf8_sequence(u + i, len - i) : 0;
        if (n == 0) {
            o += (size_t)sprintf(out + o, "\\x%02x", u[i]);
            i++;
        } else {
            memcpy(out + o, u + i, n);
            o += n;
            i += n;
        }
    }
    out[o] = '\0';
    json_t *j = json_stringn(out, o);
    free(out);
    return j ? j : json_string("");
}

json_t *json_from_time(uint64_t usec)
{
    time_t t = (time_t)(usec / USEC_PER_SEC);
    struct tm tm;
    char buf[64];
    gmtime_r(&t, &tm);
    size_t n = strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + n, sizeof(buf) - n, ".%03uZ", (unsigned)(usec % USEC_PER_SEC / 1000));
    return json_string(buf);
}
