#include "config.h"

#include <stdint.h>
#include <stdio.h>

#include "utf8.h"

size_t utf8_sequence(const unsigned char *s, size_t left)
{
    size_t n;
    uint32_t cp;
    if (s[0] < 0x80)
        return 1;
    if ((s[0] & 0xe0) == 0xc0) {
        n = 2;
        cp = s[0] & 0x1f;
    } else if ((s[0] & 0xf0) == 0xe0) {
        n = 3;
        cp = s[0] & 0x0f;
    } else if ((s[0] & 0xf8) == 0xf0) {
        n = 4;
        cp = s[0] & 0x07;
    } else {
        return 0;
    }
    if (n > left)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    /* No overlong forms, no surrogates, nothing past U+10FFFF. */
    if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
        (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
        return 0;
    return n;
}

/* Valid UTF-8 that still acts: C1 controls, and the bidirectional
 * embeddings, overrides and isolates (U+202A..U+202E, U+2066..U+2069)
 * and marks (U+200E, U+200F, U+061C). */
static bool acting_sequence(const unsigned char *s, size_t n)
{
    if (n == 2)
        return (s[0] == 0xc2 && s[1] < 0xa0) || (s[0] == 0xd8 && s[1] == 0x9c);
    if (n == 3 && s[0] == 0xe2)
        return (s[1] == 0x80 && ((s[2] >= 0xaa && s[2] <= 0xae) || s[2] == 0x8e ||
                                 s[2] == 0x8f)) ||
               (s[1] == 0x81 && s[2] >= 0xa6 && s[2] <= 0xa9);
    return false;
}

size_t utf8_unit(const unsigned char *s, size_t left, bool *acting)
{
    size_t n = utf8_sequence(s, left);
    if (n == 0) {
        *acting = true;
        return 1;
    }
    *acting = n == 1 ? s[0] < 0x20 || s[0] == 0x7f : acting_sequence(s, n);
    return n;
}

size_t utf8_escape(const char *s, size_t len, char *out, size_t out_len)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        bool acting;
        size_t n = utf8_unit(u + i, len - i, &acting);
        size_t need = acting ? 4 * n : n;
        if (o + need >= out_len)
            break;
        for (size_t j = 0; j < n; j++) {
            if (acting)
                o += (size_t)snprintf(out + o, 5, "\\x%02x", u[i + j]);
            else
                out[o++] = (char)u[i + j];
        }
        i += n;
    }
    out[o] = '\0';
    return o;
}
