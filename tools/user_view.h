/* loginguardctl user and me, for people: after the user's row, their
 * last hour as two charts, their busiest processes and latest events. */
#ifndef LOGINGUARD_USER_VIEW_H
#define LOGINGUARD_USER_VIEW_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

/* The reply's "history", "processes" and "events", to out; utf8: the
 * terminal's locale is UTF-8 (block characters in the charts). */
void user_view_print(FILE *out, const json_t *reply, bool utf8);

#endif
