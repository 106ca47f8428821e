/* A growing string for code that builds text piece by piece (quoted
 * command lines, rendered notices).  Allocation cannot fail (see util.h). */
#ifndef LOGINGUARD_STRBUF_H
#define LOGINGUARD_STRBUF_H

#include <stddef.h>

struct strbuf {
    char *s;     /* always NUL-terminated once anything was added */
    size_t len;
    size_t cap;
};

void strbuf_add(struct strbuf *b, const char *data, size_t n);
void strbuf_adds(struct strbuf *b, const char *s);
void strbuf_addc(struct strbuf *b, char c);
void strbuf_addf(struct strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The string, "" when empty; the caller owns it and b is empty again. */
char *strbuf_take(struct strbuf *b);
void strbuf_free(struct strbuf *b);

#endif
