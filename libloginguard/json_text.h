/* JSON values from what the system gives: bytes that may be anything,
 * and a time as the events write it.  Shared by the event log and the
 * replies that show the same values (loginguardctl why). */
#ifndef LOGINGUARD_JSON_TEXT_H
#define LOGINGUARD_JSON_TEXT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* A JSON string from bytes that may be anything: invalid UTF-8 becomes
 * \xNN text, so hostile names survive and the log stays valid JSON. */
json_t *json_from_bytes(const char *s, size_t len);

/* A realtime usec as the events write it: "2026-01-31T12:00:00.000Z". */
json_t *json_from_time(uint64_t usec);

#endif
