/* Telling text from bytes: process names and command lines are whatever
 * bytes a user chose, and must be shown without letting those bytes act. */
#ifndef LOGINGUARD_UTF8_H
#define LOGINGUARD_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* Length of the valid UTF-8 sequence at s (left > 0 bytes available), or 0
 * (overlong forms, surrogates and anything past U+10FFFF are invalid). */
size_t utf8_sequence(const unsigned char *s, size_t left);

/* The unit of text at s (left > 0): its length in bytes, and in *acting
 * whether showing it as it is would let it act on a terminal or a reader:
 * a C0 control or DEL, a byte that is not valid UTF-8 (a unit of one byte),
 * a C1 control (U+0080..U+009F; U+009B is CSI on some terminals), or a
 * bidirectional control (U+202A..U+202E, U+2066..U+2069, U+200E, U+200F,
 * U+061C) that makes text read in another order than it runs. */
size_t utf8_unit(const unsigned char *s, size_t left, bool *acting);

/* The len bytes at s as text that only shows: each byte of an acting unit
 * becomes the four characters \xNN, the rest is copied.  Into out
 * (out_len > 0), cut before a unit that does not fit whole, always
 * NUL-terminated; returns the length written.  4 * len + 1 is always
 * enough.  Used by the notices and the syslog and terminal summaries. */
size_t utf8_escape(const char *s, size_t len, char *out, size_t out_len);

#endif
