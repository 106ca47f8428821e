#include "config.h"

#include "base64.h"

void base64_encode(struct strbuf *out, const unsigned char *in, size_t len, size_t line_len)
{
    static const char digits[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t column = 0;
    for (size_t i = 0; i < len; i += 3) {
        unsigned v = (unsigned)in[i] << 16;
        if (i + 1 < len)
            v |= (unsigned)in[i + 1] << 8;
        if (i + 2 < len)
            v |= in[i + 2];
        char quad[4] = {digits[(v >> 18) & 63], digits[(v >> 12) & 63],
                        i + 1 < len ? digits[(v >> 6) & 63] : '=',
                        i + 2 < len ? digits[v & 63] : '='};
        strbuf_add(out, quad, 4);
        column += 4;
        if (line_len && column >= line_len && i + 3 < len) {
            strbuf_addc(out, '\n');
            column = 0;
        }
    }
    if (line_len)
        strbuf_addc(out, '\n');
}
