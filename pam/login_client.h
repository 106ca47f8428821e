/* One request and its reply on loginguardd's control socket, within a
 * deadline that covers everything from connect to the reply's newline. */
#ifndef LOGINGUARD_LOGIN_CLIENT_H
#define LOGINGUARD_LOGIN_CLIENT_H

#include <jansson.h>
#include <stddef.h>

/* A reply is one JSON line; the daemon's longest (banner, standing and
 * a handful of notices) is far below this. */
#define LOGIN_REPLY_MAX (64 * 1024)

/* Sends the request line (newline included) to the daemon at path and
 * returns its reply, an object with "ok": true.  On any failure returns
 * NULL and puts the reason, one short phrase, in err. */
json_t *login_exchange(const char *path, const char *request, int timeout_ms, char *err,
                       size_t errlen);

#endif
