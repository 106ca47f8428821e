/* The control socket's connections, inside the daemon's poll loop.
 *
 * Anyone on the node may connect, so nothing here may block or grow
 * without bound: the socket and every connection are non-blocking; at
 * most CONTROL_CONNS_MAX connections are held (a new one closes the
 * oldest); a request line is at most CONTROL_LINE_MAX bytes (a longer one
 * gets an error and the connection is closed); a connection must finish
 * each request within CONTROL_IDLE_USEC of its start or of the previous
 * reply, and read its reply as fast, or it is closed; one request of a
 * connection is handled at a time, and the next only once its reply has
 * gone out.  Who the peer is comes from the kernel (SO_PEERCRED at
 * accept), never from what it writes. */
#ifndef LOGINGUARD_CONTROL_SERVER_H
#define LOGINGUARD_CONTROL_SERVER_H

#include <jansson.h>
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "control_proto.h"

#define CONTROL_CONNS_MAX 64
#define CONTROL_IDLE_USEC (5 * 1000 * 1000ULL)
/* A reply larger than this is replaced by an error. */
#define CONTROL_OUT_MAX (4u << 20)
/* The pollfds the server fills: the listening socket and every slot. */
#define CONTROL_POLLFDS (1 + CONTROL_CONNS_MAX)

struct control_peer {
    pid_t pid;
    uid_t uid;
    gid_t gid;
    int admin;          /* -1 not known yet, else 0 or 1 (daemon_admin) */
};

struct control_conn {
    int fd;             /* -1: a free slot */
    struct control_peer peer;
    uint64_t opened;    /* boottime usec, to find the oldest */
    uint64_t deadline;  /* boottime usec: the request or the reply is late then */
    char *in;           /* CONTROL_LINE_MAX bytes, made at the first read */
    size_t in_len;
    char *out;          /* a reply being written */
    size_t out_len, out_off;
    bool last;          /* close once the reply is out */
    bool eof;           /* the peer has shut its side */
    bool waiting;       /* the handler asked the directory: asked again at retry */
};

/* The reply to one request line (no newline) from c's peer; NULL when
 * it needs what the user directory has not answered yet: the request is
 * kept and handed over again at control_server_retry (an error reply if
 * its deadline passes first). */
typedef json_t *(*control_handler)(struct control_conn *c, const char *line, size_t len,
                                   void *arg);

struct control_server {
    int fd;             /* -1: not listening */
    char *path;
    struct control_conn conns[CONTROL_CONNS_MAX];
    control_handler handler;
    void *arg;
    uint64_t accepted, evicted, timed_out, too_long;  /* counts, for tests and status */
};

/* Listen on path: its directory is made (0755) if missing, a socket left
 * there by a daemon that died is replaced (the caller holds the instance
 * lock, so it cannot be a live one's), anything else at the path is an
 * error; the socket is mode 0666.  -1 with err naming the path and the fix. */
int control_server_open(struct control_server *s, const char *path, control_handler handler,
                        void *arg, char *err, size_t err_len);
/* Close every connection and the socket, and remove the socket file. */
void control_server_close(struct control_server *s);

/* Fill exactly CONTROL_POLLFDS entries (unused ones with fd -1). */
void control_server_pollfds(const struct control_server *s, struct pollfd *pfd);
/* Act on what ppoll reported in those entries; now is boottime usec. */
void control_server_handle(struct control_server *s, const struct pollfd *pfd, uint64_t now);
/* Close connections past their deadline. */
void control_server_expire(struct control_server *s, uint64_t now);
/* Hand the waiting requests to the handler again (the directory answered). */
void control_server_retry(struct control_server *s);
/* The earliest deadline of a connection, 0 when none. */
uint64_t control_server_deadline(const struct control_server *s);
size_t control_server_open_count(const struct control_server *s);

#endif
