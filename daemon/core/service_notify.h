/* Readiness and state notices to the service manager: systemd's
 * notification protocol (sd_notify(3)), which systemd documents as a
 * stable interface for programs that do not link libsystemd.  One
 * datagram, the state text as it is, to the AF_UNIX socket named in
 * $NOTIFY_SOCKET: a path, or, with a leading '@', a name in the abstract
 * namespace.  Done here rather than through libsystemd because linking
 * it (and the compression and crypto libraries it pulls in) costs the
 * daemon over a MiB of resident memory for these few bytes. */
#ifndef LOGINGUARD_SERVICE_NOTIFY_H
#define LOGINGUARD_SERVICE_NOTIFY_H

/* Send state ("READY=1", "RELOADING=1", ...; several lines are several
 * assignments).  Returns 1 when sent, 0 when NOTIFY_SOCKET is unset or
 * empty (not started by a manager that listens), or a negative errno:
 * -EAFNOSUPPORT for an address that is neither a path nor '@'-abstract,
 * -ENAMETOOLONG when it does not fit a sockaddr_un, or what socket() or
 * sendto() said. */
int service_notify(const char *state);

#endif
