#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "errors.h"
#include "util.h"

void errors_add(struct errors *e, const char *file, unsigned line, const char *fmt, ...)
{
    char what[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);

    char *msg;
    if (line > 0)
        msg = xasprintf("%s:%u: %s", file, line, what);
    else
        msg = xasprintf("%s: %s", file, what);
    e->messages = xreallocarray(e->messages, e->count + 1, sizeof(*e->messages));
    e->messages[e->count++] = msg;
}

void errors_free(struct errors *e)
{
    for (size_t i = 0; i < e->count; i++)
        free(e->messages[i]);
    free(e->messages);
    e->messages = NULL;
    e->count = 0;
}
