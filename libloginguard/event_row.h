/* Events as rows for people (loginguardctl events): local time, user,
 * event and a short summary of the fields that matter for its kind.
 * Everything that came from users or admins (names, comm, exe, reasons,
 * messages) is escaped with utf8_escape: a row cannot move or recolour
 * the terminal it is shown on, or turn its text around. */
#ifndef LOGINGUARD_EVENT_ROW_H
#define LOGINGUARD_EVENT_ROW_H

#include <jansson.h>
#include <stdint.h>

#include "strbuf.h"

void event_row_heading(struct strbuf *out);
/* One line, '\n' included; time is the event's (realtime usec). */
void event_row(const json_t *event, uint64_t time, struct strbuf *out);

#endif
