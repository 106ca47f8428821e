/* A list of "file:line: what is wrong; what to do" messages.  Config and
 * rules parsing collect every error instead of stopping at the first, so
 * an admin fixes a file in one pass. */
#ifndef LOGINGUARD_ERRORS_H
#define LOGINGUARD_ERRORS_H

#include <stddef.h>

struct errors {
    char **messages;
    size_t count;
};

/* Add "file:line: message" (line 0 leaves the line out). */
void errors_add(struct errors *e, const char *file, unsigned line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void errors_free(struct errors *e);

#endif
