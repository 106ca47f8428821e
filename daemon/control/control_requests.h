/* The daemon's answers on the control socket (control_requests.c). */
#ifndef LOGINGUARD_CONTROL_REQUESTS_H
#define LOGINGUARD_CONTROL_REQUESTS_H

#include "control/control_server.h"
#include "control/control_view.h"

/* The control_handler of the daemon's server; arg is the daemon. */
json_t *control_request(struct control_conn *c, const char *line, size_t len, void *arg);

#endif
