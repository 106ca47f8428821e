/* Telling text from bytes: process names and command lines are whatever
 * bytes a user chose, and must be shown without letting those bytes act. */
#ifndef LOGINGUARD_UTF8_H
#define LOGINGUARD_UTF8_H

#include <stddef.h>

/* Length of the valid UTF-8 sequence at s (left > 0 bytes available), or 0
 * (overlong forms, surrogates and anything past U+10FFFF are invalid). */
size_t utf8_sequence(const unsigned char *s, size_t left);

#endif
