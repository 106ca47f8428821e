/* Base64 (RFC 4648), for images in a report's data: URIs and in mail
 * (RFC 2045: lines of at most 76 characters; ended in "\n", as the rest
 * of a message handed to sendmail, which makes them CRLF). */
#ifndef LOGINGUARD_BASE64_H
#define LOGINGUARD_BASE64_H

#include <stddef.h>

#include "strbuf.h"

/* len bytes of in, appended to out; a "\n" after each line_len
 * characters (a multiple of 4) and after the last line, or with line_len
 * 0 one line without an end. */
void base64_encode(struct strbuf *out, const unsigned char *in, size_t len, size_t line_len);

#endif
