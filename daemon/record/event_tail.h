/* The latest events about one user, read back from the end of the event
 * log (loginguardctl user, me and why).  Bounded: at most
 * EVENT_TAIL_BYTES from the end of the file are read, so what it costs
 * does not grow with the log; events of a user quiet for longer than
 * that much of the node's log are not found (the log itself has them). */
#ifndef LOGINGUARD_EVENT_TAIL_H
#define LOGINGUARD_EVENT_TAIL_H

#include <jansson.h>
#include <stddef.h>
#include <sys/types.h>

#define EVENT_TAIL_BYTES (256 * 1024)

/* The last max events of the log at path whose "uid" is uid (and whose
 * "event" is only, when only is not NULL), oldest first, as a JSON
 * array (empty when the log cannot be read: "-", missing, not a regular
 * file).  Lines that are not JSON objects, and a first line cut by the
 * bound, are skipped. */
json_t *event_tail(const char *path, uid_t uid, const char *only, size_t max);

#endif
